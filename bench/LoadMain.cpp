//===- LoadMain.cpp - msl-load: N concurrent clients against msld ----------===//
//
// --clients threads, each with its own msl::client::Client (own channel),
// send Compile requests back to back for --duration-s seconds. Each request
// is, at random in the given shares:
//
//   crash  (--crash-percent)  a unique source with `#pragma clang __debug
//                             crash`: the compile worker dies; an error status
//                             is expected ("expected errors");
//   fail   (--fail-percent)   one of a few sources with a compile error:
//                             deterministic, so cached after the first;
//                             expected: OK status, success=false;
//   miss   (--miss-percent)   a unique source (misses the action cache);
//   hit    (the rest)         one of a few fixed sources (primed before the
//                             clock starts, so they hit the cache).
//
// Any other outcome is an error, and every error of a non-crash request makes
// the exit status 1 (the first few messages are printed). Prints requests,
// errors, error rate and p50/p99 latency per class, and msld's peak RSS:
// VmHWM of /proc/<msld>/status at the end, and the largest VmRSS sampled
// every 100 ms (msld's own process only, not its compile workers).
//
// Without --server it starts its own msld (beside this binary) on loopback
// ports with a fresh data directory and stops it with SIGTERM at the end.
//
//===----------------------------------------------------------------------===//
#include "BenchSupport.h"
#include "msl/client/Client.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Args {
  int clients = 50;
  double durationS = 60;
  double crashPercent = 1;
  double failPercent = 5;
  double missPercent = 20;
  int hitSources = 8;
  int failSources = 4;
  double deadlineS = 120;
  std::string server;  // empty: start our own msld
  int msldPid = 0;     // with --server: where to read RSS from
  int compileWorkers = 2;
  std::vector<std::string> msldArgs;
  std::string msld;  // default: beside this binary
  int maxMessages = 10;
};

enum Kind { kHit, kMiss, kFail, kCrash, kKinds };
constexpr std::array<const char *, kKinds> kKindNames = {"hit", "miss", "fail", "crash"};

const char *kKernelHead = "#include <metal_stdlib>\nusing namespace metal;\n";

// Every kernel is a one-liner; `name` and `constant` make it unique.
std::string kernel(const std::string &name, const std::string &constant) {
  return std::string(kKernelHead) + "kernel void " + name +
         "(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) "
         "{ a[i] = a[i] * 2.0f + " + constant + "; }\n";
}

std::string hitSource(int j) { return kernel("load_hit_" + std::to_string(j), std::to_string(j) + ".0f"); }

std::string missSource(const std::string &unique, unsigned n) {
  return kernel("load_miss_" + unique, "float(" + std::to_string(n) + "u)");
}

std::string failSource(int j) {
  // An undeclared identifier: the same error every time, so it is cached.
  return kernel("load_fail_" + std::to_string(j), "load_undeclared_" + std::to_string(j));
}

std::string crashSource(const std::string &unique) {
  return "#pragma clang __debug crash\n" + kernel("load_crash_" + unique, "1.0f");
}

msl::v1::CompileRequest request(const std::string &path, const std::string &source) {
  msl::v1::CompileRequest r;
  r.set_main_path(path);
  r.mutable_main_source()->set_inline_(source);
  r.mutable_target()->set_arch(msl::v1::Target::X86_64);
  return r;
}

// Outcome counts and latencies of one class.
struct ClassStats {
  long requests = 0;
  long okSuccess = 0;  // OK status, success=true
  long okFailed = 0;   // OK status, success=false (compile errors)
  long cacheHits = 0;  // of the OK responses
  std::map<std::string, long> statuses;  // non-OK status code -> count
  std::vector<double> latencyUs;

  long statusErrors() const {
    long n = 0;
    for (const auto &[code, count] : statuses) n += count;
    return n;
  }
  void merge(const ClassStats &o) {
    requests += o.requests;
    okSuccess += o.okSuccess;
    okFailed += o.okFailed;
    cacheHits += o.cacheHits;
    for (const auto &[code, count] : o.statuses) statuses[code] += count;
    latencyUs.insert(latencyUs.end(), o.latencyUs.begin(), o.latencyUs.end());
  }
};

// Errors: for crash, an OK status (the compile did not crash the worker);
// for fail, anything but OK + success=false; otherwise anything but
// OK + success=true.
long errorsOf(Kind k, const ClassStats &s) {
  switch (k) {
  case kCrash: return s.okSuccess + s.okFailed;
  case kFail: return s.okSuccess + s.statusErrors();
  default: return s.okFailed + s.statusErrors();
  }
}

// The first few unexpected outcomes, printed as they happen.
class ErrorLog {
 public:
  explicit ErrorLog(int max) : max_(max) {}
  void report(const std::string &message) {
    std::lock_guard lock(mu_);
    if (printed_ < max_) {
      std::cerr << "msl-load: " << message << "\n";
      if (++printed_ == max_) std::cerr << "msl-load: (further errors are only counted)\n";
    }
  }

 private:
  std::mutex mu_;
  int max_, printed_ = 0;
};

std::string firstDiagnostic(const msl::v1::CompileResponse &r) {
  return r.diagnostics_size() ? r.diagnostics(0).message() : "(no diagnostics)";
}

// Sends one request and records it; returns whether it was as expected.
bool send(const msl::client::Client &client, Kind kind, const std::string &path,
          const std::string &source, ClassStats &stats, ErrorLog &log) {
  auto req = request(path, source);
  auto t0 = Clock::now();
  auto r = client.compile(req);
  stats.latencyUs.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  ++stats.requests;
  std::string what = std::string(kKindNames[kind]) + " request " + path + ": ";
  if (!r.ok()) {
    ++stats.statuses[std::string(msl::client::statusCodeName(r.status().error_code()))];
    if (kind != kCrash) log.report(what + msl::client::describeStatus(r.status()));
    return kind == kCrash;
  }
  if (r->cache_hit()) ++stats.cacheHits;
  if (r->success()) ++stats.okSuccess;
  else ++stats.okFailed;
  switch (kind) {
  case kCrash:
    log.report(what + "expected an error status (worker crash), got OK, success=" +
               (r->success() ? "true" : "false"));
    return false;
  case kFail:
    if (r->success()) log.report(what + "expected a compile error, got success");
    return !r->success();
  default:
    if (!r->success()) log.report(what + "compile failed: " + firstDiagnostic(*r));
    return r->success();
  }
}

// "VmRSS:	  12345 kB" -> bytes; nullopt when the process or field is gone.
std::optional<long> statusKb(pid_t pid, const std::string &field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::atol(line.c_str() + field.size() + 1);
  }
  return std::nullopt;
}

// Samples VmRSS of one process every 100 ms on its own thread.
class RssSampler {
 public:
  explicit RssSampler(pid_t pid) : pid_(pid) {
    if (pid_ > 0) thread_ = std::thread([this] { loop(); });
  }
  ~RssSampler() { finish(); }
  void finish() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  long maxKb() const { return maxKb_; }
  long samples() const { return samples_; }

 private:
  void loop() {
    while (!stop_) {
      if (auto kb = statusKb(pid_, "VmRSS")) {
        maxKb_ = std::max(maxKb_.load(), *kb);
        ++samples_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  pid_t pid_;
  std::atomic<bool> stop_{false};
  std::atomic<long> maxKb_{0}, samples_{0};
  std::thread thread_;
};

std::string fmtMs(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, us < 10000 ? "%.2f ms" : "%.0f ms", us / 1000);
  return buf;
}

std::string fmtMb(long kb) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", kb / 1024.0);
  return buf;
}

void printTable(const std::vector<std::vector<std::string>> &rows) {
  std::vector<size_t> w(rows[0].size(), 0);
  for (const auto &r : rows)
    for (size_t i = 0; i < r.size(); ++i) w[i] = std::max(w[i], r[i].size());
  for (size_t k = 0; k < rows.size(); ++k) {
    std::string line = "|";
    for (size_t i = 0; i < rows[k].size(); ++i) {
      const std::string &c = rows[k][i];
      std::string pad(w[i] - c.size(), ' ');
      line += " " + (i == 0 ? c + pad : pad + c) + " |";
    }
    std::cout << line << "\n";
    if (k == 0) {
      std::string sep = "|";
      for (size_t i = 0; i < w.size(); ++i)
        sep += (i == 0 ? std::string(w[i] + 2, '-') : std::string(w[i] + 1, '-') + ":") + "|";
      std::cout << sep << "\n";
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  Args a;
  CLI::App app{"msl-load: concurrent clients mixing cache hits, misses, failing and crashing "
               "compiles against msld for a bounded time"};
  app.add_option("--clients", a.clients, "concurrent clients (threads, one channel each)")
      ->capture_default_str()->check(CLI::Range(1, 4096));
  app.add_option("--duration-s", a.durationS, "how long to send requests")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--crash-percent", a.crashPercent,
                 "share of requests whose source crashes the compile worker")
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  app.add_option("--fail-percent", a.failPercent, "share of requests with a compile error")
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  app.add_option("--miss-percent", a.missPercent, "share of unique sources (cache misses)")
      ->capture_default_str()->check(CLI::Range(0.0, 100.0));
  app.add_option("--hit-sources", a.hitSources, "distinct sources the cache hits repeat")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--fail-sources", a.failSources, "distinct failing sources")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_option("--deadline-s", a.deadlineS, "deadline of each Compile call")
      ->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--server", a.server, "HOST:PORT of a running msld (default: start one)");
  app.add_option("--msld-pid", a.msldPid, "with --server: msld's pid, for its RSS");
  app.add_option("--compile-workers", a.compileWorkers, "--compile-workers of the msld started")
      ->capture_default_str();
  app.add_option("--msld-arg", a.msldArgs, "extra flag for the msld started (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--msld", a.msld, "the msld binary to start (default: beside msl-load)");
  app.add_option("--max-messages", a.maxMessages, "error messages printed")->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (a.crashPercent + a.failPercent + a.missPercent > 100) {
    std::cerr << "msl-load: --crash-percent + --fail-percent + --miss-percent exceed 100\n";
    return 2;
  }
  if (!a.server.empty() && (!a.msldArgs.empty() || !a.msld.empty())) {
    std::cerr << "msl-load: --msld and --msld-arg are for the msld it starts, not with --server\n";
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);

  msl::bench::DaemonProcess daemon;
  std::string address = a.server;
  pid_t msldPid = a.msldPid;
  if (address.empty()) {
    msl::bench::DaemonOptions d;
    d.msld = a.msld.empty() ? msl::bench::besideSelf("msld").string() : a.msld;
    d.compileWorkers = a.compileWorkers;
    d.extraArgs = a.msldArgs;
    d.tempPrefix = "msl-load";
    if (!fs::exists(d.msld)) {
      std::cerr << "msl-load: " << d.msld << " not found (build the msld target)\n";
      return 2;
    }
    if (std::string error; !daemon.start(d, &error)) {
      std::cerr << "msl-load: " << error << "\n";
      return 2;
    }
    address = "127.0.0.1:" + std::to_string(daemon.grpcPort());
    msldPid = daemon.pid();
    std::cout << "msld started: pid " << msldPid << ", " << address << ", --compile-workers "
              << a.compileWorkers;
    for (const auto &x : a.msldArgs) std::cout << " " << x;
    std::cout << "\n";
  } else {
    std::cout << "msld: " << address
              << (msldPid > 0 ? ", pid " + std::to_string(msldPid) : std::string(", pid unknown"))
              << "\n";
  }

  msl::client::ClientOptions copts;
  copts.address = address;
  copts.call_deadline = std::chrono::milliseconds(static_cast<long>(a.deadlineS * 1000));
  {
    msl::client::Client probe(copts);
    if (auto h = probe.waitUntilHealthy(std::chrono::seconds(30)); !h.ok()) {
      std::cerr << "msl-load: msld not healthy: " << msl::client::describeStatus(h.status()) << "\n";
      return 2;
    }
  }

  // A run-unique salt, so that misses and crashes miss the cache of a
  // long-running server too.
  std::random_device rd;
  const std::string salt = std::to_string(rd() % 1000000000u);
  ErrorLog log(a.maxMessages);
  std::atomic<bool> anyError{false};

  // Prime the hit and fail sources (not counted), so that "hit" hits.
  {
    msl::client::Client client(copts);
    ClassStats ignored;
    for (int j = 0; j < a.hitSources; ++j)
      if (!send(client, kHit, "hit" + std::to_string(j) + ".metal", hitSource(j), ignored, log))
        anyError = true;
    for (int j = 0; j < a.failSources; ++j)
      if (!send(client, kFail, "fail" + std::to_string(j) + ".metal", failSource(j), ignored, log))
        anyError = true;
    if (anyError) std::cerr << "msl-load: priming the cache failed (see above); going on\n";
  }

  std::cout << a.clients << " clients for " << a.durationS << " s: crash " << a.crashPercent
            << "%, fail " << a.failPercent << "%, miss " << a.missPercent << "%, hit "
            << (100 - a.crashPercent - a.failPercent - a.missPercent) << "% (" << a.hitSources
            << " hit sources, " << a.failSources << " failing), deadline " << a.deadlineS
            << " s, x86_64 default outputs\n"
            << std::flush;

  RssSampler sampler(msldPid);
  std::optional<long> startRss = msldPid > 0 ? statusKb(msldPid, "VmRSS") : std::nullopt;
  std::vector<std::array<ClassStats, kKinds>> perThread(a.clients);
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::milliseconds(static_cast<long>(a.durationS * 1000));
  std::vector<std::thread> threads;
  for (int t = 0; t < a.clients; ++t) {
    threads.emplace_back([&, t] {
      msl::client::Client client(copts);
      std::mt19937_64 rng(rd() ^ (static_cast<uint64_t>(t) << 32));
      std::uniform_real_distribution<double> pct(0, 100);
      auto &stats = perThread[t];
      unsigned n = 0;
      while (Clock::now() < end) {
        double r = pct(rng);
        Kind k = r < a.crashPercent                                  ? kCrash
                 : r < a.crashPercent + a.failPercent                ? kFail
                 : r < a.crashPercent + a.failPercent + a.missPercent ? kMiss
                                                                      : kHit;
        std::string unique = salt + "_" + std::to_string(t) + "_" + std::to_string(++n);
        std::string path, source;
        switch (k) {
        case kCrash:
          path = "crash_" + unique + ".metal";
          source = crashSource(unique);
          break;
        case kMiss:
          path = "miss.metal";
          source = missSource(unique, n);
          break;
        case kFail: {
          int j = static_cast<int>(rng() % a.failSources);
          path = "fail" + std::to_string(j) + ".metal";
          source = failSource(j);
          break;
        }
        default: {
          int j = static_cast<int>(rng() % a.hitSources);
          path = "hit" + std::to_string(j) + ".metal";
          source = hitSource(j);
        }
        }
        if (!send(client, k, path, source, stats[k], log) && k != kCrash) anyError = true;
      }
    });
  }
  for (auto &th : threads) th.join();
  double elapsedS = std::chrono::duration<double>(Clock::now() - t0).count();
  sampler.finish();
  std::optional<long> hwm = msldPid > 0 ? statusKb(msldPid, "VmHWM") : std::nullopt;
  std::optional<long> endRss = msldPid > 0 ? statusKb(msldPid, "VmRSS") : std::nullopt;

  std::array<ClassStats, kKinds> total;
  ClassStats all;
  for (const auto &ts : perThread)
    for (int k = 0; k < kKinds; ++k) total[k].merge(ts[k]);
  long nonCrashErrors = 0;

  std::vector<std::vector<std::string>> rows;
  rows.push_back({"class", "requests", "expected errors", "errors", "error rate", "cache hits",
                  "p50", "p99", "error statuses"});
  auto row = [&](const std::string &name, const ClassStats &s, long expected, long errors) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.2f%%", s.requests ? 100.0 * errors / s.requests : 0.0);
    std::string codes;
    for (const auto &[code, count] : s.statuses)
      codes += (codes.empty() ? "" : ", ") + code + " " + std::to_string(count);
    rows.push_back({name, std::to_string(s.requests), std::to_string(expected),
                    std::to_string(errors), rate, std::to_string(s.cacheHits),
                    s.requests ? fmtMs(msl::bench::percentile(s.latencyUs, .5)) : "-",
                    s.requests ? fmtMs(msl::bench::percentile(s.latencyUs, .99)) : "-",
                    codes.empty() ? "-" : codes});
  };
  long allExpected = 0, allErrors = 0;
  for (int k : {kHit, kMiss, kFail, kCrash}) {
    long errors = errorsOf(static_cast<Kind>(k), total[k]);
    long expected = k == kCrash ? total[k].statusErrors() : 0;
    if (k != kCrash) nonCrashErrors += errors;
    allExpected += expected;
    allErrors += errors;
    row(kKindNames[k], total[k], expected, errors);
    all.merge(total[k]);
  }
  row("all", all, allExpected, allErrors);

  std::cout << "\n";
  printTable(rows);
  char line[160];
  std::snprintf(line, sizeof line, "\n%ld requests in %.1f s: %.1f requests/s; errors outside crash: %ld\n",
                all.requests, elapsedS, all.requests / elapsedS, nonCrashErrors);
  std::cout << line;
  if (msldPid > 0) {
    std::cout << "msld RSS (pid " << msldPid << ", not its workers): peak VmHWM "
              << (hwm ? fmtMb(*hwm) : "n/a (msld gone)") << "; max VmRSS sampled every 100 ms "
              << fmtMb(sampler.maxKb()) << " (" << sampler.samples() << " samples); VmRSS at start "
              << (startRss ? fmtMb(*startRss) : "n/a") << ", at end "
              << (endRss ? fmtMb(*endRss) : "n/a") << "\n";
  } else {
    std::cout << "msld RSS: n/a (with --server, give --msld-pid)\n";
  }
  if (daemon.pid() > 0) std::cout << "msld stopped (SIGTERM): " << daemon.stop() << "\n";
  return anyError || nonCrashErrors ? 1 : 0;
}
