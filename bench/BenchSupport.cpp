//===- BenchSupport.cpp - pieces shared by msl-bench and msl-load -----------===//
#include "BenchSupport.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace msl::bench {
namespace {

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

fs::path besideSelf(const std::string &name) {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return self.parent_path() / name;
}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) stop();
}

bool DaemonProcess::start(const DaemonOptions &options, std::string *error) {
  std::string tmpl = "/tmp/" + options.tempPrefix + "-XXXXXX";
  if (!mkdtemp(tmpl.data())) {
    *error = std::string("mkdtemp: ") + std::strerror(errno);
    return false;
  }
  dir_ = tmpl;
  std::string ready = (dir_ / "ready.json").string();
  std::string data = (dir_ / "data").string();
  std::string log = logPath().string();
  std::vector<std::string> argv = {options.msld,
                                   "--listen", "127.0.0.1:0",
                                   "--metrics-listen", "127.0.0.1:0",
                                   "--data-dir", data,
                                   "--ready-file", ready,
                                   "--compile-workers", std::to_string(options.compileWorkers)};
  if (options.listenUnix) {
    unixSocket_ = (dir_ / "msld.sock").string();
    argv.insert(argv.end(), {"--listen-unix", unixSocket_});
  }
  if (options.sharedRegions) {
    regionsSocket_ = (dir_ / "regions.sock").string();
    argv.insert(argv.end(), {"--shared-regions-socket", regionsSocket_});
  }
  argv.insert(argv.end(), options.extraArgs.begin(), options.extraArgs.end());
  auto fail = [&](const std::string &message) {
    *error = message;
    stop();
    return false;
  };

  pid_ = fork();
  if (pid_ < 0) return fail(std::string("fork: ") + std::strerror(errno));
  if (pid_ == 0) {
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    std::vector<char *> cargv;
    for (auto &a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + options.readyTimeout;
  while (!fs::exists(ready)) {
    int status;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return fail("msld exited before it was ready; its log:\n" + slurp(log));
    }
    if (std::chrono::steady_clock::now() > deadline)
      return fail("msld not ready after " + std::to_string(options.readyTimeout.count()) +
                  " s; its log:\n" + slurp(log));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  // {"grpc_port":N,"metrics_port":M}
  std::string json = slurp(ready);
  auto number = [&](const std::string &key) {
    auto at = json.find("\"" + key + "\"");
    if (at == std::string::npos) return -1;
    at = json.find(':', at);
    return at == std::string::npos ? -1 : std::atoi(json.c_str() + at + 1);
  };
  grpcPort_ = number("grpc_port");
  metricsPort_ = number("metrics_port");
  if (grpcPort_ <= 0) return fail("no grpc_port in " + ready + ": " + json);
  return true;
}

std::string DaemonProcess::stop() {
  std::string how = "not running";
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (WIFEXITED(status)) how = "exit " + std::to_string(WEXITSTATUS(status));
    else if (WIFSIGNALED(status)) how = std::string("signal ") + strsignal(WTERMSIG(status));
    else how = "?";
  }
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
    dir_.clear();
  }
  return how;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p * v.size()));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

} // namespace msl::bench
