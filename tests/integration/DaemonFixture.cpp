#include "DaemonFixture.h"

#include <cstdio>

#include <array>

#include <httplib.h>
#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fcntl.h>
#include <csignal>
#include <fstream>
#include <random>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace msl::test {

Daemon::Daemon(std::string dataDir, std::vector<std::string> extraArgs)
    : dataDir_(std::move(dataDir)), extraArgs_(std::move(extraArgs)) {}

Daemon::~Daemon() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

bool Daemon::start() {
  std::string ready = dataDir_ + ".ready.json";
  std::filesystem::remove(ready);
  std::vector<std::string> args = {binDir() + "/msld",
                                   "--listen", "127.0.0.1:0",
                                   "--metrics-listen", "127.0.0.1:0",
                                   "--data-dir", dataDir_,
                                   "--ready-file", ready};
  // Two workers unless the test says otherwise (msld takes each flag once).
  if (std::find(extraArgs_.begin(), extraArgs_.end(), "--compile-workers") == extraArgs_.end())
    args.insert(args.end(), {"--compile-workers", "2"});
  args.insert(args.end(), extraArgs_.begin(), extraArgs_.end());
  for (const std::string &a : extraDaemonArgs())
    args.push_back(a);
  pid_ = ::fork();
  if (pid_ == 0) {
    std::vector<char *> argv;
    for (auto &a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    int log = ::open(logPath().c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0)
      ::dup2(log, 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  for (int i = 0; i < 600; ++i) { // up to 60 s: workers load LLVM
    std::ifstream in(ready);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    if (sscanf(text.c_str(), "{\"grpc_port\":%d,\"metrics_port\":%d}", &grpcPort_, &metricsPort_) == 2)
      break;
    int status;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (grpcPort_ == 0)
    return false;
  grpc::ChannelArguments channelArgs;
  channelArgs.SetMaxReceiveMessageSize(64 << 20);
  channel_ = grpc::CreateCustomChannel(address(), grpc::InsecureChannelCredentials(), channelArgs);
  compiler_ = msl::v1::Compiler::NewStub(channel_);
  cas_ = msl::v1::ContentAddressableStorage::NewStub(channel_);
  return true;
}

std::string Daemon::log() const {
  std::ifstream in(logPath(), std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::optional<int> Daemon::waitExit(int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

namespace {
long statusFieldKb(int pid, const std::string &field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0)
      return std::stol(line.substr(field.size() + 1));
  return -1;
}
} // namespace

long Daemon::peakRssKb() const { return statusFieldKb(pid_, "VmHWM"); }
long Daemon::rssKb() const { return statusFieldKb(pid_, "VmRSS"); }

int Daemon::stop() {
  if (pid_ <= 0)
    return -1;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string Daemon::scrapeMetrics() {
  httplib::Client http("127.0.0.1", metricsPort_);
  auto res = http.Get("/metrics");
  return res && res->status == 200 ? res->body : std::string();
}

double Daemon::metric(const std::string &nameWithLabels) {
  std::istringstream in(scrapeMetrics());
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(nameWithLabels + " ", 0) == 0)
      return std::stod(line.substr(nameWithLabels.size() + 1));
  // Every series msld has exists from start-up: an absent one is a failure
  // (NaN equals nothing), never a silent 0.
  return std::nan("");
}

void DaemonTest::SetUp() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "msld-it-XXXXXX").string();
  ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
  dir_ = tmpl;
}

void DaemonTest::TearDown() {
  daemon_.reset();
  std::filesystem::remove_all(dir_);
}

Daemon &DaemonTest::startDaemon(std::vector<std::string> extraArgs) {
  if (daemon_)
    daemon_->stop();
  daemon_ = std::make_unique<Daemon>((dir_ / "data").string(), std::move(extraArgs));
  EXPECT_TRUE(daemon_->start()) << "msld did not start";
  return *daemon_;
}

std::string sourceDir() {
  const char *dir = std::getenv("MSLD_TEST_SOURCE_DIR");
  return dir && *dir ? dir : MSLD_SOURCE_DIR;
}

std::string readSourceFile(const std::string &relativePath) {
  std::ifstream in(sourceDir() + "/" + relativePath, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::vector<std::string> extraDaemonArgs() {
  std::vector<std::string> out;
  const char *text = std::getenv("MSLD_TEST_DAEMON_ARGS");
  std::istringstream words(text ? text : "");
  for (std::string w; words >> w;)
    out.push_back(w);
  return out;
}

std::string binDir() {
  const char *dir = std::getenv("MSLD_TEST_BIN_DIR");
  return dir && *dir ? dir : MSLD_BIN_DIR;
}

std::string macroBomb(int n) {
  std::string s = "#define A0 1,\n";
  for (int i = 1; i <= n; ++i)
    s += "#define A" + std::to_string(i) + " A" + std::to_string(i - 1) + " A" +
         std::to_string(i - 1) + "\n";
  s += "constant int big[] = { A" + std::to_string(n) + " 0 };\n";
  s += "kernel void k(device int* o [[buffer(0)]]) { o[0] = big[o[1]]; }\n";
  return s;
}

msl::v1::CompileRequest compileRequest(const std::string &source, std::vector<std::string> options,
                                       msl::v1::Target::Arch arch,
                                       std::vector<msl::v1::ArtifactKind> outputs) {
  msl::v1::CompileRequest req;
  req.set_main_path("main.metal");
  req.mutable_main_source()->set_inline_(source);
  for (auto &o : options)
    req.add_options(o);
  req.mutable_target()->set_arch(arch);
  for (auto k : outputs)
    req.add_outputs(k);
  return req;
}

grpc::Status compile(Daemon &d, const msl::v1::CompileRequest &request,
                     msl::v1::CompileResponse &response, int deadlineSeconds) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(deadlineSeconds));
  return d.compiler().Compile(&ctx, request, &response);
}

std::string artifact(const msl::v1::CompileResponse &response, msl::v1::ArtifactKind kind) {
  for (const auto &a : response.artifacts())
    if (a.kind() == kind)
      return a.inline_data();
  return "";
}

std::string sha256Hex(const std::string &bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < length; ++i) {
    out += hex[digest[i] >> 4];
    out += hex[digest[i] & 15];
  }
  return out;
}

std::string diagnosticsText(const msl::v1::CompileResponse &response) {
  std::string out;
  for (const auto &d : response.diagnostics())
    out += d.file() + ":" + std::to_string(d.line()) + ":" + std::to_string(d.column()) + ": " +
           d.message() + "\n";
  return out;
}

bool haveExecWorker() { return std::filesystem::exists(std::filesystem::path(binDir()) / "msld-exec-worker"); }

std::vector<float> randomFloats(size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = dist(rng);
  return v;
}

int runShell(const std::string &command, std::string &output) {
  FILE *pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe)
    return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0)
    output.append(buf.data(), n);
  int status = ::pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace msl::test
