//===- ExecuteService.h - The logic of the Executor service ---------------===//
//
// Execute: compile the kernel through the CompileService (so the action
// cache answers a repeat), check the request against the kernel's
// reflection and the device's limits, bind the arguments as Metal does, and
// run it in an execution worker process (msld-exec-worker) taken from a
// fair, bounded queue. Like CompileService, no server thread waits: the
// answer comes from a dispatcher, and a caller that goes away stops its run.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "CompileService.h"
#include "CompiledKernels.h"
#include "CubinCache.h"
#include "CudaDevices.h"
#include "FairQueue.h"
#include "Metrics.h"
#include "SharedRegions.h"
#include "WorkerPool.h"
#include "msl/cache/ContentStore.h"
#include "msl/internal/exec_worker.pb.h"
#include "msl/v1/execute.pb.h"

#include <functional>
#include <grpcpp/support/status.h>
#include <memory>
#include <thread>
#include <vector>

namespace msl::service {

struct ExecuteServiceOptions {
  /// Largest buffer one binding may use, and largest texture. 256 MiB.
  uint64_t maxBufferBytes = 256ull << 20;
  /// All buffers and textures of one Execute together. 512 MiB.
  uint64_t maxExecuteBytes = 512ull << 20;
  /// setBytes data, as Metal allows. 4 KiB.
  size_t maxBytesBinding = 4096;
  /// Buffers, bindings, setBytes and threadgroup bindings per request. 31
  /// each (Metal's argument table).
  size_t maxBindings = 31;
  /// Textures and samplers per request, and the bound on their indices
  /// (Metal's argument tables: 128 textures, 16 samplers). A texture's sides
  /// are bounded by the CPU device's (executor/Textures.h).
  size_t maxTextureBindings = 128;
  size_t maxSamplerBindings = 16;
  /// Dispatches in a row. 1000.
  uint32_t maxRepeat = 1000;
  /// The CPU device's limits (Metal's: 1024 threads, 32 KiB).
  uint32_t maxThreadsPerThreadgroup = 1024;
  uint64_t maxThreadgroupMemoryBytes = 32 << 10;
  /// Time limit of one Execute's kernel when the request gives none, and
  /// the most it may ask for. 10 s, 300 s. It counts from the kernel's first
  /// dispatch (the worker's start note, WorkerProtocol.h) to the answer.
  uint32_t defaultTimeoutMs = 10000;
  uint32_t maxTimeoutMs = 300000;
  /// Time limit of what comes before the first dispatch: the request's
  /// transfer to the worker, its buffers' setup and the kernel's JIT (the
  /// cpu's LLVM ORC JIT; a GPU's PTX link and module load). Past it the
  /// worker is killed: DEADLINE_EXCEEDED naming the JIT. 120 s; msld's
  /// --exec-jit-timeout-ms takes 1 ms to kMaxJitTimeoutMs.
  uint32_t jitTimeoutMs = 120000;
  static constexpr uint32_t kMaxJitTimeoutMs = 600000;
  /// Buffers and textures up to this size come back inline (larger ones
  /// through the store). 1 MiB each, 8 MiB in all.
  size_t inlineBufferBytes = 1 << 20;
  size_t inlineResponseBytes = 8 << 20;
  /// Executions waiting for a worker.
  FairQueueOptions queue;
  /// Buffer and texture bytes msld holds for queued and running executions together;
  /// past it an Execute is refused (RESOURCE_EXHAUSTED), so memory stays
  /// bounded however many wait. 1 GiB.
  uint64_t maxBytesInFlight = 1ull << 30;
};

class ExecuteService {
public:
  using Done = std::function<void(grpc::Status, msl::v1::ExecuteResponse)>;
  class Call;

  /// `cpuWorkers` null: no CPU device; `cuda` null or without GPUs: no CUDA
  /// device (an Execute naming one is FAILED_PRECONDITION, saying why).
  ExecuteService(cache::ContentStore &store, CompileService &compiler, WorkerPool *cpuWorkers,
                 ServiceMetrics &metrics, ExecuteServiceOptions options = {}, CudaDevices *cuda = nullptr);
  ~ExecuteService();

  grpc::Status listDevices(const msl::v1::ListDevicesRequest &request, msl::v1::ListDevicesResponse &response);
  /// Answers through `done` exactly once, now or from a dispatcher.
  /// `arrived`: when the RPC reached msld (MSLD_EXEC_TIMING's arrived_at_ns).
  std::shared_ptr<Call> execute(msl::v1::ExecuteRequest request, const std::string &client, Done done,
                                std::chrono::steady_clock::time_point arrived = std::chrono::steady_clock::now());
  /// Where requests' shared ranges (BufferContents.shared) are looked up;
  /// null (the default): a request naming one is INVALID_ARGUMENT. Set
  /// before the first request.
  void setSharedRegions(const SharedRegions *regions) { sharedRegions_ = regions; }
  void cancel(const std::shared_ptr<Call> &call);
  void shutdown();

private:
  struct Job;
  struct Target;
  grpc::Status checkRequest(const msl::v1::ExecuteRequest &request, Target *&target) const;
  grpc::Status findTarget(const std::string &device, Target *&target) const;
  /// Reflection + module in hand: check the bindings and build the job.
  void prepare(const std::shared_ptr<Call> &call, const std::shared_ptr<const CompiledKernel> &kernel,
               bool compileHit);
  void prepareChecked(const std::shared_ptr<Call> &call, const std::shared_ptr<const CompiledKernel> &kernel,
                      bool compileHit);
  void dispatch(Target &target);
  msl::v1::Device cpuDevice() const;

  cache::ContentStore &store_;
  CompileService &compiler_;
  ServiceMetrics &metrics_;
  ExecuteServiceOptions options_;
  CudaDevices *cuda_;
  const SharedRegions *sharedRegions_ = nullptr;
  CompiledKernels compiled_; // kernels named by a compile, kept by it
  /// Each device with its own queue and dispatchers, so a busy device never
  /// delays another's executions.
  std::vector<std::unique_ptr<Target>> targets_;
  std::atomic<uint64_t> bytesInFlight_{0};
  std::mutex mu_;
  bool stopped_ = false;
};

} // namespace msl::service
