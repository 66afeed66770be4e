//===- CudaDevice.h - Runs compute kernels on an NVIDIA GPU ---------------===//
//
// The CUDA device of msld-cuda-worker, one process per GPU owning its
// context: loads the kernel's module (a cubin msld cached, else the PTX
// JIT-linked with cuLinkCreate/AddData/Complete, the cubin returned for msld
// to cache), allocates and copies the buffers (on its stream; device memory
// of a finished request is kept for the next one of the same sizes, up to
// 256 MiB), launches the dispatches with CUDA events around each, and
// copies the written buffers back. Threadgroup
// arguments are dynamic shared memory (opted into above 48 KiB, up to the
// GPU's maximum). dispatchThreads launches its partial edge threadgroups
// separately, each with its own block size (compiler/EntryPoints.h), so
// every block is exactly a Metal threadgroup.
//
// A kernel that faults (illegal address, trap, misaligned access) leaves
// the context unusable: the device then reports the fault through
// CudaDeviceOptions::onFault, which by default writes one line to stderr and
// exits with kWorkerKernelFaultExitCode (msld replaces the worker). It
// never reuses a faulted context.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "HostRegions.h"
#include "msl/internal/exec_worker.pb.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace msl::executor {

/// The JIT options every PTX link uses (change them together with
/// CudaDevice.cpp's link).
constexpr const char *kCudaJitOptions = "optimization-level=4";

/// What besides the PTX, the GPU and the driver decides a linked cubin: the
/// JIT options and the texture library's digest (a kernel that calls a
/// texture hook is linked with it). Part of the cubin cache key
/// (service/CubinCache.h); probeCudaDevices reports it to msld.
std::string cudaJitIdentity();

/// The texture library's PTX (TextureHooks.cpp compiled for nvptx64).
const std::string &cudaTextureLibraryPtx();

/// The GPUs the driver shows, with their limits, or why there are none
/// (no driver, no GPU). Safe to call where no driver exists.
msl::internal::CudaProbeResponse probeCudaDevices();

struct CudaDeviceOptions {
  /// Loaded modules kept (least recently used unloaded past it).
  unsigned moduleCacheEntries = 32;
  /// Called with "kernel <symbol> faulted: <driver error>" when the context
  /// is lost; must not return. Default: stderr and _exit(87).
  std::function<void(const std::string &)> onFault;
};

class CudaDevice {
public:
  /// Opens GPU `ordinal` (its primary context). Null with `why` set when
  /// there is no driver or no such GPU.
  static std::unique_ptr<CudaDevice> open(int ordinal, std::string &why, CudaDeviceOptions options = {});
  ~CudaDevice();
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  /// Runs one request. A bad request or a failed allocation or link gets
  /// `error` (the device stays usable); a fault calls onFault.
  /// `beforeFirstDispatch`, when given, is called once the module is ready
  /// (loaded already, loaded from the cubin, or linked from the PTX: the
  /// JIT) and the arguments are bound, right before the first launch (not
  /// at all for a request that fails before one): msld-cuda-worker's start
  /// note (ExecWorkerResponse.dispatch_starts), which ends the JIT's deadline.
  /// `host`, when given, says which buffers lie in mapped shared regions
  /// (HostRegions.h): copied in from there and back there when returned
  /// (their response entries left empty), by DMA where registered.
  msl::internal::ExecWorkerResponse execute(const msl::internal::ExecWorkerRequest &request,
                                            const std::function<void()> &beforeFirstDispatch = {},
                                            const HostBuffers *host = nullptr);

  /// Page-locks host memory for DMA (cuMemHostRegister) and undoes it:
  /// HostRegions' hooks. False when the driver refuses (copies from it are
  /// then staged by the driver, and still right).
  bool registerHostMemory(char *base, size_t size);
  void unregisterHostMemory(char *base);

  /// Where the last execute() spent its time, in microseconds (for
  /// MSLD_CUDA_WORKER_TIMING): finding the module and function, the copies
  /// in and zero fills queued, the launches, their completion, the copies out.
  struct StageTimes {
    double module_us = 0, copy_in_us = 0, launch_us = 0, sync_us = 0, copy_out_us = 0;
  };
  const StageTimes &lastStageTimes() const;

  /// What this device is, for the worker's hello: its GPU, SM and driver.
  const std::string &identity() const;
  /// "cuda:N".
  const std::string &name() const;

private:
  struct Impl;
  explicit CudaDevice(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// One kernel launch of a dispatch: its first threadgroup, how many
/// threadgroups, and their size.
struct CudaLaunch {
  uint32_t origin[3];
  uint32_t groups[3];
  uint32_t block[3];
};

/// The launches of one dispatch. dispatchThreads (`gridThreads` non-empty):
/// in each dimension the whole threadgroups and, if the grid is not a
/// multiple, one partial edge threadgroup, i.e. up to 8 launches;
/// dispatchThreadgroups: one.
std::vector<CudaLaunch> planCudaLaunches(const uint32_t threadgroups[3], const uint32_t threadsPerThreadgroup[3],
                                         const uint32_t *gridThreads);

} // namespace msl::executor
