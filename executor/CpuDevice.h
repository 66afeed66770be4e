//===- CpuDevice.h - Runs compute kernels on the host CPU -----------------===//
//
// The CPU device of msld-exec-worker: JIT-compiles a kernel's x86_64 bitcode
// (its work-group function, see WorkGroupFunction.h, optimized at O3 for the
// host CPU's features) with LLVM ORC, keeps a few compiled kernels, and runs
// dispatches with threadgroups in parallel over a fixed pool of threads, each
// threadgroup with its own threadgroup memory. Buffers and threadgroup memory
// are GuardedRegions, so an out-of-bounds access faults; installFaultHandlers()
// turns such a fault into a message naming the kernel and an exit with
// kWorkerKernelFaultExitCode.
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

/// The 18 uint32 the CPU entry (and its work-group function) reads.
enum LaunchIndex : unsigned {
  kThreadPositionInThreadgroup = 0,
  kThreadgroupPositionInGrid = 3,
  kThreadsPerThreadgroup = 6,
  kThreadgroupsPerGrid = 9,
  kDispatchThreadsPerThreadgroup = 12,
  kThreadsPerGrid = 15,
  kLaunchSize = 18,
};

/// The device's limits (requests beyond them fail).
constexpr unsigned kCpuMaxThreadsPerThreadgroup = 1024;
constexpr uint64_t kCpuMaxThreadgroupMemoryBytes = 64u << 20;

struct CpuDeviceOptions {
  /// Threads that run threadgroups; 0: std::thread::hardware_concurrency().
  unsigned threads = 0;
  /// Compiled kernels kept (least recently used dropped).
  unsigned cacheEntries = 32;
};

class CpuDevice {
public:
  explicit CpuDevice(CpuDeviceOptions options = {});
  ~CpuDevice();
  CpuDevice(const CpuDevice &) = delete;
  CpuDevice &operator=(const CpuDevice &) = delete;

  /// Runs one request. Never throws for a bad request: `error` says why.
  /// (A kernel that faults ends the process; see installFaultHandlers.)
  /// `beforeFirstDispatch`, when given, is called once the kernel is
  /// JIT-compiled and bound, right before its first dispatch (not at all
  /// for a request that fails before one): msld-exec-worker's start note
  /// (ExecWorkerResponse.dispatch_starts), which ends the JIT's deadline.
  /// `host`, when given, says which buffers lie in mapped shared regions
  /// (HostRegions.h): read from there, and written back there when
  /// returned (their response entries left empty).
  msl::internal::ExecWorkerResponse execute(const msl::internal::ExecWorkerRequest &request,
                                            const std::function<void()> &beforeFirstDispatch = {},
                                            const HostBuffers *host = nullptr);

  /// How many kernels were JIT-compiled (cache misses) so far.
  uint64_t jitCompiles() const;
  unsigned threads() const;
  /// The host CPU, as LLVM names it ("sapphirerapids").
  static std::string hostCpu();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// SIGSEGV/SIGBUS/SIGILL/SIGFPE/SIGTRAP handlers (on an alternate signal
/// stack, installed for every thread of a CpuDevice): a fault while a kernel
/// runs writes "<program>: kernel <symbol> faulted: <what> (signal N)" to
/// stderr and _exits with kWorkerKernelFaultExitCode; any other fault gets
/// the default action. `program` must outlive the process.
void installFaultHandlers(const char *program);

} // namespace msl::executor
