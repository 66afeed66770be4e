// A main for the fuzz targets where libFuzzer is not linked (GCC builds, the
// ctest smoke runs): runs LLVMFuzzerTestOneInput on every file of the given
// corpus directories, then on seeded mutations of them (bit flips, byte
// changes, cuts, splices, insertions) until --runs inputs or --seconds have
// passed. A target reports a bug by aborting, as under libFuzzer.
//   msl_fuzz_X_replay [--runs N] [--seconds S] [--seed K] DIR...
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

// The input being run, for the abort handler.
const std::string *gCurrent = nullptr;

// On a failure: the input goes to ./crash-input (replay it with
// `msl_fuzz_X_replay --runs 0 DIR-holding-it`) and, in hex, to stderr.
void onAbort(int) {
  static const char hex[] = "0123456789abcdef";
  const char msg[] = "\nfuzz target failed; input written to ./crash-input, hex:\n";
  (void)!::write(2, msg, sizeof msg - 1);
  if (gCurrent) {
    int fd = ::open("crash-input", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      (void)!::write(fd, gCurrent->data(), gCurrent->size());
      ::close(fd);
    }
    for (unsigned char c : *gCurrent) {
      char b[2] = {hex[c >> 4], hex[c & 15]};
      (void)!::write(2, b, 2);
    }
  }
  (void)!::write(2, "\n", 1);
  std::signal(SIGABRT, SIG_DFL);
  std::raise(SIGABRT);
}

void run(const std::string &s) {
  gCurrent = &s;
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(s.data()), s.size());
  gCurrent = nullptr;
}

std::string mutate(std::string s, const std::vector<std::string> &corpus, std::mt19937_64 &rng) {
  auto pick = [&](size_t n) { return n ? size_t(rng() % n) : 0; };
  for (int steps = 1 + int(rng() % 4); steps > 0; --steps) {
    switch (rng() % 6) {
    case 0: // flip a bit
      if (!s.empty())
        s[pick(s.size())] ^= char(1u << (rng() % 8));
      break;
    case 1: // an interesting byte
      if (!s.empty()) {
        static const char bytes[] = {0, 1, '\n', '-', '/', '.', '=', char(0x7f), char(0x80), char(0xff)};
        s[pick(s.size())] = bytes[rng() % sizeof bytes];
      }
      break;
    case 2: // cut
      if (!s.empty())
        s.erase(pick(s.size()), 1 + pick(std::min<size_t>(s.size(), 16)));
      break;
    case 3: // insert random bytes
      s.insert(pick(s.size() + 1), std::string(1 + pick(8), char(rng())));
      break;
    case 4: // splice with another input
      if (!corpus.empty()) {
        const std::string &o = corpus[pick(corpus.size())];
        s = s.substr(0, pick(s.size() + 1)) + o.substr(pick(o.size() + 1));
      }
      break;
    case 5: // duplicate a piece
      if (!s.empty()) {
        size_t at = pick(s.size()), n = 1 + pick(std::min<size_t>(s.size() - at, 32));
        s.insert(pick(s.size() + 1), s.substr(at, n));
      }
      break;
    }
  }
  return s.size() > 4096 ? s.substr(0, 4096) : s;
}

} // namespace

int main(int argc, char **argv) {
  uint64_t runs = 10000, seed = 1;
  double seconds = 10;
  std::vector<std::string> corpus;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc)
      runs = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--seconds" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--seed" && i + 1 < argc)
      seed = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::error_code ec;
      for (const auto &e : std::filesystem::directory_iterator(a, ec))
        if (e.is_regular_file()) {
          std::ifstream in(e.path(), std::ios::binary);
          std::stringstream ss;
          ss << in.rdbuf();
          corpus.push_back(ss.str());
        }
      if (ec) {
        std::fprintf(stderr, "cannot read corpus directory %s: %s\n", a.c_str(), ec.message().c_str());
        return 2;
      }
    }
  }
  if (corpus.empty()) {
    std::fprintf(stderr, "no corpus files\n");
    return 2;
  }
  std::signal(SIGABRT, onAbort);
  for (const auto &s : corpus)
    run(s);
  std::mt19937_64 rng(seed);
  const auto start = std::chrono::steady_clock::now();
  uint64_t done = 0;
  for (; done < runs; ++done) {
    if (done % 256 == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds)
      break;
    std::string s = mutate(corpus[rng() % corpus.size()], corpus, rng);
    run(s);
  }
  std::printf("%zu corpus inputs and %llu mutations ran, no failure\n", corpus.size(),
              static_cast<unsigned long long>(done));
  return 0;
}
