//===- DaemonFixture.h - A real msld on a loopback port -------------------===//
//
// Starts build/bin/msld as a child process with a fresh RocksDB directory and
// free ports, and gives tests gRPC stubs and a /metrics scraper.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/v1/cas.grpc.pb.h"
#include "msl/v1/compiler.grpc.pb.h"

#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace msl::test {

class Daemon {
public:
  /// Extra msld flags, e.g. {"--compile-timeout-ms", "500"}.
  explicit Daemon(std::string dataDir, std::vector<std::string> extraArgs = {});
  ~Daemon();
  /// Starts msld and waits until it serves; false if it did not.
  bool start();
  /// SIGTERM and wait; returns the exit status (or -1 when killed by a signal).
  int stop();
  bool running() const { return pid_ > 0; }
  int pid() const { return pid_; }
  /// Where msld's stderr (its log) goes.
  std::string logPath() const { return dataDir_ + ".log"; }
  std::string log() const;
  /// Waits up to `seconds` for msld to exit by itself; its exit status, or
  /// nullopt if it still runs (or -1 when killed by a signal).
  std::optional<int> waitExit(int seconds);
  /// msld's peak resident memory (VmHWM) and current (VmRSS), in KiB.
  long peakRssKb() const;
  long rssKb() const;

  std::string address() const { return "127.0.0.1:" + std::to_string(grpcPort_); }
  /// The /metrics port (from --ready-file).
  int metricsPort() const { return metricsPort_; }
  msl::v1::Compiler::Stub &compiler() { return *compiler_; }
  msl::v1::ContentAddressableStorage::Stub &cas() { return *cas_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }

  /// GET /metrics over HTTP.
  std::string scrapeMetrics();
  /// The value of one sample line `name{labels}` of /metrics (NaN if absent).
  double metric(const std::string &nameWithLabels);

private:
  std::string dataDir_;
  std::vector<std::string> extraArgs_;
  int pid_ = -1;
  int grpcPort_ = 0, metricsPort_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<msl::v1::Compiler::Stub> compiler_;
  std::unique_ptr<msl::v1::ContentAddressableStorage::Stub> cas_;
};

/// A temporary directory removed at the end of the test.
class DaemonTest : public ::testing::Test {
protected:
  void SetUp() override;
  void TearDown() override;
  /// Starts (or restarts) the daemon on this test's data directory.
  Daemon &startDaemon(std::vector<std::string> extraArgs = {});

  std::filesystem::path dir_;
  std::unique_ptr<Daemon> daemon_;
};

/// Where msld, its worker and mslc are: $MSLD_TEST_BIN_DIR if set (to run
/// the tests against other binaries, e.g. an older build), else build/bin.
std::string binDir();

/// The source tree: $MSLD_TEST_SOURCE_DIR if set (a copy on another
/// machine), else the one the tests were built from.
std::string sourceDir();

/// Reads a file of the source tree (examples/...).
std::string readSourceFile(const std::string &relativePath);

/// Extra msld flags every test daemon gets: $MSLD_TEST_DAEMON_ARGS, split at
/// spaces (e.g. "--exec-workers 0" where msld-exec-worker is not carried).
std::vector<std::string> extraDaemonArgs();

/// A Compile request for an inline source.
msl::v1::CompileRequest compileRequest(const std::string &source,
                                       std::vector<std::string> options = {},
                                       msl::v1::Target::Arch arch = msl::v1::Target::X86_64,
                                       std::vector<msl::v1::ArtifactKind> outputs = {});

/// A source whose preprocessing takes time and memory growing as 2^n.
std::string macroBomb(int n);

/// Calls Compile with a deadline.
grpc::Status compile(Daemon &d, const msl::v1::CompileRequest &request,
                     msl::v1::CompileResponse &response, int deadlineSeconds = 120);

/// The inline bytes of the artifact of `kind` ("" if absent).
std::string artifact(const msl::v1::CompileResponse &response, msl::v1::ArtifactKind kind);

/// Lowercase hex SHA-256, computed independently of the daemon.
std::string sha256Hex(const std::string &bytes);

/// Diagnostics as "file:line:col: message" lines, for failure messages.
std::string diagnosticsText(const msl::v1::CompileResponse &response);

/// Whether binDir() has msld-exec-worker (the cpu device to run kernels).
bool haveExecWorker();

/// Skips a test that runs kernels when msld-exec-worker is not built.
#define REQUIRE_EXEC_WORKER()                                                                      \
  do {                                                                                            \
    if (!::msl::test::haveExecWorker())                                                           \
      GTEST_SKIP() << ::msl::test::binDir()                                                       \
                   << "/msld-exec-worker is not built: no cpu device to run kernels";             \
  } while (0)

/// The bytes of a vector of trivially copyable values, and back.
template <class T> std::string bytesOf(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}
template <class T> std::vector<T> valuesOf(const std::string &bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), v.size() * sizeof(T));
  return v;
}
inline std::vector<float> floatsOf(const std::string &bytes) { return valuesOf<float>(bytes); }

/// `n` uniform floats in [lo, hi) from mt19937(seed).
std::vector<float> randomFloats(size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f);

/// Runs `command` through the shell; returns its exit status (-1 if it did
/// not exit normally) and its stdout and stderr in `output`.
int runShell(const std::string &command, std::string &output);

} // namespace msl::test
