//===- CudaDevices.h - The GPUs msld runs kernels on ----------------------===//
//
// msld itself never loads the CUDA driver. At start it asks
// `msld-cuda-worker --probe` (under a deadline) which GPUs exist, then starts
// one msld-cuda-worker per GPU, each owning that GPU's context. A worker
// that faults or passes its time limit is killed and replaced by its
// WorkerPool; the daemon and the other GPUs are unaffected. Where there is
// no driver, no GPU or no worker binary, there are no CUDA devices, and
// unavailable() says why.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "WorkerPool.h"
#include "msl/v1/execute.pb.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace msl::service {

struct CudaDevicesOptions {
  /// The msld-cuda-worker binary; empty: none (no CUDA devices).
  std::string workerPath;
  /// The workers' limits (timeouts, response size); workerPath, workerArgs,
  /// workers and role are set per GPU.
  WorkerPoolOptions workers;
  /// How long the probe may take. 30 s.
  std::chrono::milliseconds probeTimeout{30000};
};

/// One GPU: what ListDevices shows, and the worker that owns its context.
struct CudaGpu {
  msl::v1::Device device;
  std::unique_ptr<WorkerPool> workers;
};

class CudaDevices {
public:
  /// Probes and starts a worker per GPU. Never fails msld: a GPU whose
  /// worker does not start is left out, and `log` says why.
  static std::unique_ptr<CudaDevices> start(const CudaDevicesOptions &options,
                                            const std::function<void(const std::string &)> &log);
  ~CudaDevices();

  std::vector<CudaGpu> &gpus() { return gpus_; }
  /// The GPU named "cuda:N", or null.
  CudaGpu *find(const std::string &name);
  /// Why there is no GPU (or why some were left out).
  const std::string &unavailable() const { return unavailable_; }
  /// The driver, as the cubin cache key takes it.
  const std::string &driverBuild() const { return driverBuild_; }
  int cudaVersion() const { return cudaVersion_; }
  /// The workers' JIT options and texture library (executor/CudaDevice.h
  /// cudaJitIdentity), for the cubin cache key.
  const std::string &jitIdentity() const { return jitIdentity_; }

  /// Stops the workers.
  void shutdown();

private:
  std::vector<CudaGpu> gpus_;
  std::string unavailable_;
  std::string driverBuild_;
  int cudaVersion_ = 0;
  std::string jitIdentity_;
};

} // namespace msl::service
