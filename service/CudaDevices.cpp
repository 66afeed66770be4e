#include "CudaDevices.h"

#include "msl/internal/exec_worker.pb.h"

#include <unistd.h>

namespace msl::service {

std::unique_ptr<CudaDevices> CudaDevices::start(const CudaDevicesOptions &options,
                                                const std::function<void(const std::string &)> &log) {
  auto devices = std::make_unique<CudaDevices>();
  if (options.workerPath.empty()) {
    devices->unavailable_ = "msld runs no CUDA worker (--cuda off)";
    return devices;
  }
  if (::access(options.workerPath.c_str(), X_OK) != 0) {
    devices->unavailable_ = "the CUDA worker " + options.workerPath + " is not there";
    return devices;
  }

  // The probe: one short-lived worker, one question.
  WorkerPoolOptions probeOptions = options.workers;
  probeOptions.workerPath = options.workerPath;
  probeOptions.workerArgs = {"--probe"};
  probeOptions.sharedPayloadBytes = 0; // it moves no buffers
  probeOptions.descriptorSocket = false;
  probeOptions.workers = 1;
  probeOptions.role = "CUDA probe";
  probeOptions.log = log;
  std::string error;
  auto probe = WorkerPool::start(probeOptions, error);
  if (!probe) {
    devices->unavailable_ = error;
    return devices;
  }
  msl::internal::CudaProbeResponse found;
  WorkerPool::Outcome outcome = probe->run(msl::v1::ListDevicesRequest(), found, nullptr, options.probeTimeout);
  probe->shutdown();
  if (outcome.kind != WorkerPool::Outcome::Kind::Ok) {
    devices->unavailable_ = "the CUDA probe failed: " + outcome.detail;
    return devices;
  }
  devices->driverBuild_ = found.driver_build();
  devices->cudaVersion_ = found.cuda_version();
  devices->jitIdentity_ = found.jit_identity();
  devices->unavailable_ = found.unavailable();

  for (const auto &device : found.devices()) {
    const std::string &name = device.name(); // "cuda:N"
    WorkerPoolOptions gpuOptions = options.workers;
    gpuOptions.workerPath = options.workerPath;
    gpuOptions.workerArgs = {"--device", name.substr(name.find(':') + 1)};
    gpuOptions.workers = 1; // the one process that owns this GPU's context
    gpuOptions.role = name + " execution";
    gpuOptions.log = log;
    auto workers = WorkerPool::start(gpuOptions, error);
    if (!workers) {
      log("msld: " + name + " (" + device.description() + ") left out: " + error + "\n");
      devices->unavailable_ += (devices->unavailable_.empty() ? "" : "; ") + name + ": " + error;
      continue;
    }
    devices->gpus_.push_back({device, std::move(workers)});
  }
  return devices;
}

CudaDevices::~CudaDevices() { shutdown(); }

CudaGpu *CudaDevices::find(const std::string &name) {
  for (auto &g : gpus_)
    if (g.device.name() == name)
      return &g;
  return nullptr;
}

void CudaDevices::shutdown() {
  for (auto &g : gpus_)
    if (g.workers)
      g.workers->shutdown();
}

} // namespace msl::service
