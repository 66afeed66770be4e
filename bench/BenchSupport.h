//===- BenchSupport.h - pieces shared by msl-bench and msl-load -------------===//
//
// DaemonProcess: an msld child on loopback ports (port 0 for gRPC and
// metrics) with a fresh temporary data directory, ready once its
// --ready-file appears, stopped with SIGTERM. Plus the nearest-rank
// percentile both tools report.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/types.h>

namespace msl::bench {

// `name` in the directory of the running executable (/proc/self/exe), where
// CMAKE_RUNTIME_OUTPUT_DIRECTORY puts msld beside the bench tools. Empty
// when /proc/self/exe cannot be read.
std::filesystem::path besideSelf(const std::string &name);

struct DaemonOptions {
  std::string msld;                    // the msld binary
  int compileWorkers = 2;              // --compile-workers
  std::vector<std::string> extraArgs;  // appended to msld's command line
  std::string tempPrefix = "msl-bench"; // /tmp/<prefix>-XXXXXX
  bool listenUnix = false;             // also --listen-unix <dir>/msld.sock
  bool sharedRegions = false;          // --shared-regions-socket <dir>/regions.sock
  std::chrono::seconds readyTimeout{60};
};

// The msld child process. Not copyable; the destructor stops it.
class DaemonProcess {
 public:
  DaemonProcess() = default;
  DaemonProcess(const DaemonProcess &) = delete;
  DaemonProcess &operator=(const DaemonProcess &) = delete;
  ~DaemonProcess();

  // Starts msld (stdout and stderr to <dir>/msld.log) and waits for its ready
  // file. On failure returns false with *error set (msld's log included when
  // it exited early); nothing is left running.
  bool start(const DaemonOptions &options, std::string *error);

  // SIGTERM, then wait; removes the temporary directory. Returns how msld
  // ended ("exit 0", "signal Killed", "not running").
  std::string stop();

  pid_t pid() const { return pid_; }
  int grpcPort() const { return grpcPort_; }
  int metricsPort() const { return metricsPort_; }
  const std::filesystem::path &dir() const { return dir_; }
  // "unix:<dir>/msld.sock" with DaemonOptions::listenUnix, else empty.
  std::string unixAddress() const { return unixSocket_.empty() ? "" : "unix:" + unixSocket_; }
  std::filesystem::path logPath() const { return dir_ / "msld.log"; }
  // <dir>/regions.sock with DaemonOptions::sharedRegions, else empty.
  const std::string &sharedRegionsSocket() const { return regionsSocket_; }

 private:
  pid_t pid_ = -1;
  int grpcPort_ = 0, metricsPort_ = 0;
  std::filesystem::path dir_;
  std::string unixSocket_, regionsSocket_;
};

// Nearest-rank percentile (p in [0, 1]) of the samples; 0 when empty.
double percentile(std::vector<double> samples, double p);

} // namespace msl::bench
