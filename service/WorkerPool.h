//===- WorkerPool.h - Compile worker processes ----------------------------===//
//
// Compiles run in msld-compile-worker processes, never in the daemon: a
// compile that crashes Clang, loops, or eats memory costs that request an
// error, the worker is replaced, and the daemon keeps serving.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/internal/worker.pb.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace msl::service {

struct WorkerPoolOptions {
  /// The msld-compile-worker binary.
  std::string workerPath;
  /// Number of worker processes (concurrent compiles). Default 2.
  int workers = 2;
  /// Wall-clock limit of one compile; the worker is killed past it. 60 s.
  std::chrono::milliseconds timeout{60000};
  /// Address-space limit of a worker (RLIMIT_AS). 4 GiB; 0 = none.
  uint64_t memoryLimitBytes = 4ull << 30;
};

class WorkerPool {
public:
  struct Outcome {
    enum class Kind { Ok, Crashed, TimedOut, Unavailable };
    Kind kind = Kind::Unavailable;
    msl::internal::WorkerResponse response; // when Ok
    std::string detail;                     // otherwise: what happened
  };

  /// Starts the workers and reads each one's hello. Returns null and sets
  /// `error` if a worker cannot be started.
  static std::unique_ptr<WorkerPool> start(const WorkerPoolOptions &options, std::string &error);
  ~WorkerPool();

  /// Runs one compile on an idle worker (waiting for one if all are busy).
  Outcome run(const msl::internal::WorkerRequest &request);

  /// The identity the workers reported (part of every action key).
  const std::string &compilerIdentity() const { return identity_; }

  /// Stops taking work, waits for running compiles, ends the workers.
  void shutdown();

private:
  struct Worker {
    int pid = -1;
    int toWorker = -1;   // its stdin
    int fromWorker = -1; // its stdout
  };
  explicit WorkerPool(WorkerPoolOptions options) : options_(std::move(options)) {}
  bool spawn(Worker &w, std::string &error);
  void kill(Worker &w);
  /// Describes how a worker that closed its pipe ended (reaping it).
  std::string reap(Worker &w);

  WorkerPoolOptions options_;
  std::string identity_;
  std::mutex mu_;
  std::condition_variable idleChanged_;
  std::vector<Worker> idle_;
  int busy_ = 0;
  bool stopping_ = false;
};

} // namespace msl::service
