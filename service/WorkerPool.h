//===- WorkerPool.h - Compile worker processes ----------------------------===//
//
// Compiles run in msld-compile-worker processes, never in the daemon: a
// compile that crashes Clang, loops, or eats memory costs that request an
// error, the worker is replaced, and the daemon keeps serving.
//
// Every wait on a worker has a deadline and ends in a kill: the hello at
// start, each compile (its time limit, or its caller's cancellation; an
// execution has two in a row, its JIT's and then its kernel's, StartNote),
// and the exit at shutdown. Workers are forked by one long-lived spawner
// thread, so PR_SET_PDEATHSIG (which fires when the forking *thread* exits)
// kills a worker only when msld itself ends. With options.sandbox, each worker is
// cloned into namespaces of its own (Sandbox.h) instead of forked.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Sandbox.h"
#include "WorkerProtocol.h"
#include "msl/internal/worker.pb.h"

#include <google/protobuf/message_lite.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace msl::service {

struct WorkerPoolOptions {
  /// The msld-compile-worker binary, and the arguments it is started with
  /// (msld-cuda-worker: "--device", "N").
  std::string workerPath;
  std::vector<std::string> workerArgs;
  /// Number of worker processes (concurrent compiles). Default 2.
  int workers = 2;
  /// Wall-clock limit of one compile; the worker is killed past it. 60 s.
  std::chrono::milliseconds timeout{60000};
  /// Memory limit of a worker. 4 GiB; 0 = none.
  uint64_t memoryLimitBytes = 4ull << 30;
  /// RLIMIT_AS (all address space: compile workers) or RLIMIT_DATA (written
  /// memory only: execution workers, whose guard regions reserve far more
  /// address space than they use).
  bool limitAddressSpace = true;
  /// What the workers are, in messages ("compile", "execution").
  std::string role = "compile";
  /// How long a new worker may take to say hello before it is killed. 30 s.
  std::chrono::milliseconds startTimeout{30000};
  /// At shutdown, how long a worker may take to exit after its stdin
  /// closes before it is killed. 2 s.
  std::chrono::milliseconds exitTimeout{2000};
  /// Largest response a worker may send (artifacts and diagnostics); a
  /// larger one fails that compile. 256 MiB.
  uint32_t maxResponseBytes = 256u << 20;
  /// What msld keeps (and logs) of a worker's stderr per compile; the rest
  /// is counted and dropped. 16 KiB.
  size_t maxStderrBytes = 16 << 10;
  /// Where kept stderr goes (msld's log). Default: msld's stderr.
  std::function<void(const std::string &)> log;
  /// Called when a replacement worker is refused for a different identity.
  std::function<void()> onIdentityMismatch;
  /// Bytes of the shared payload region each worker gets (WorkerProtocol.h
  /// kSharedPayloadsFlag): a memfd msld maps and passes as
  /// `--payload-fd 3`, through which split frames' payloads go when they
  /// fit. 0 (the default, compile workers): none. Its pages stay resident
  /// once touched, up to this size per worker.
  uint64_t sharedPayloadBytes = 0;
  /// Give each worker a descriptor socket (`--descriptor-fd 4`,
  /// WorkerProtocol.h sendDescriptors) through which a run's descriptors
  /// go (run's `descriptors`). Off by default (compile workers).
  bool descriptorSocket = false;
  /// How long a wait on a worker polls without sleeping before it blocks
  /// (each wait of a run: the request's transfer, the start note, the
  /// answer). 0 (the default): none. Execution pools spin a little: their
  /// answers come within microseconds, and waking a sleeping core costs
  /// tens of them.
  std::chrono::microseconds spinBeforeBlocking{0};
  /// Run the workers in a sandbox (Sandbox.h) on top of the rlimits. Off by
  /// default; msld turns it on for compile and execution workers
  /// (--sandbox), never for CUDA workers (they need /dev/nvidia*).
  SandboxOptions sandbox;
};

/// Set by a caller to stop its compile early (client gone, deadline passed).
using CancelFlag = std::atomic<bool>;

class WorkerPool {
public:
  struct Outcome {
    enum class Kind { Ok, Crashed, OutOfMemory, Faulted, TimedOut, Cancelled, TooLarge, Unavailable };
    Kind kind = Kind::Unavailable;
    std::string detail; // unless Ok: what happened
    /// With a StartNote: whether the note came (TimedOut without it: the
    /// time before the note ran out), and how long after the run's start.
    bool started = false;
    std::chrono::nanoseconds untilStart{0};
  };

  /// Starts the workers and reads each one's hello. Returns null and sets
  /// `error` if a worker cannot be started.
  static std::unique_ptr<WorkerPool> start(const WorkerPoolOptions &options, std::string &error);
  ~WorkerPool();

  /// Runs one request on an idle worker (waiting for one if all are busy),
  /// filling `response` when the outcome is Ok. `cancel`, polled while the
  /// worker runs, kills it when set; `timeout` (when non-zero) replaces
  /// options().timeout for this request.
  Outcome run(const google::protobuf::MessageLite &request, google::protobuf::MessageLite &response,
              const CancelFlag *cancel = nullptr, std::chrono::milliseconds timeout = {});
  /// The same in split frames (WorkerProtocol.h): `request`'s payload
  /// fields (`requestFields`) go down the pipe raw, straight from where they
  /// are, and the response's (`responseFields`) are read straight into it.
  /// `request` is left as it was. For execution workers, whose messages
  /// carry megabytes of buffers.
  struct SplitFraming {
    PayloadFields request = nullptr;
    PayloadFields response = nullptr;
  };
  /// Two deadlines for one run instead of one: the worker may send, once,
  /// a note before its answer (a message of the response's type that
  /// `isStartNote` tells from the answer: an execution worker's "the first
  /// dispatch starts now", after its JIT). Until the note, the run has
  /// `beforeStart` from its start (the request's transfer included); from
  /// the note, `timeout` (run's) to the answer. Without a note the answer
  /// must come within `beforeStart`. A second note breaks the protocol.
  struct StartNote {
    std::chrono::milliseconds beforeStart{0};
    bool (*isStartNote)(const google::protobuf::MessageLite &response) = nullptr;
  };
  /// `descriptors` (options().descriptorSocket) go to the worker right
  /// before the request, over its descriptor socket (msld keeps its own).
  Outcome run(google::protobuf::MessageLite &request, google::protobuf::MessageLite &response,
              const SplitFraming &framing, const CancelFlag *cancel = nullptr,
              std::chrono::milliseconds timeout = {}, const StartNote *startNote = nullptr,
              const std::vector<int> &descriptors = {});
  const WorkerPoolOptions &options() const { return options_; }
  /// Whether the workers run in the sandbox (options().sandbox.enabled and
  /// the worker could be sandboxed).
  bool sandboxed() const { return sandbox_ != nullptr; }

  /// The identity the workers reported (part of every action key). Every
  /// worker of the pool has it; a replacement reporting another is refused.
  const std::string &compilerIdentity() const { return identity_; }

  /// Stops taking work, waits for running compiles, ends the workers.
  void shutdown();

private:
  struct Worker {
    int pid = -1;
    int toWorker = -1;   // its stdin
    int fromWorker = -1; // its stdout
    int errWorker = -1;  // its stderr
    SharedPayloads shared; // msld's mapping of its payload region, if any
    int descriptors = -1;  // msld's end of its descriptor socket, if any
  };
  class Spawner;
  explicit WorkerPool(WorkerPoolOptions options);
  /// Forks a worker (on the spawner thread) and reads its hello.
  bool spawn(Worker &w, std::string &error);
  bool spawnHere(Worker &w, std::string &error);
  /// Closes a retired worker's pipes and unmaps its payload region.
  static void closeWorker(Worker &w);
  /// Kills the worker's process group and reaps it; says how it ended.
  std::string killAndReap(Worker &w);
  Outcome runFramed(const google::protobuf::MessageLite *plain, google::protobuf::MessageLite *split,
                    const SplitFraming *framing, google::protobuf::MessageLite &response,
                    const CancelFlag *cancel, std::chrono::milliseconds timeout, const StartNote *startNote,
                    const std::vector<int> &descriptors);
  /// Reaps a worker that closed its pipe (it is dead or dying), killing it
  /// if it has not exited at once; says how it ended.
  std::string reap(Worker &w, int *exitStatus = nullptr);
  /// Reads what is available on the worker's stderr into `kept`.
  void drainStderr(Worker &w, std::string &kept, size_t &dropped);
  void logStderr(const Worker &w, const std::string &kept, size_t dropped);

  WorkerPoolOptions options_;
  std::unique_ptr<SandboxPlan> sandbox_; // null: rlimits only
  std::string identity_;
  std::unique_ptr<Spawner> spawner_;
  std::mutex mu_;
  std::condition_variable idleChanged_;
  std::vector<Worker> idle_;
  int busy_ = 0;
  int alive_ = 0;
  bool stopping_ = false;
};

} // namespace msl::service
