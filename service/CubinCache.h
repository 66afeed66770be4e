//===- CubinCache.h - Linked CUDA kernels, kept by msld -------------------===//
//
// Loading PTX makes the driver JIT it (tens of milliseconds); a cubin loads
// at once. The first run of a kernel on a GPU links its PTX in the worker
// (cuLinkComplete) and the worker returns the cubin; msld keeps it, since
// workers never touch the store: the bytes in the content-addressed store,
// and in the action cache, under the key below, the cubin's digest. A
// repeat, on any worker of any GPU of the same kind, sends the cubin and
// skips the JIT.
//
// The key covers what the cubin depends on: the PTX (its digest), the GPU
// architecture (its SM), the driver (its build, whose JIT made the cubin,
// and the CUDA version it implements) and the JIT options. A driver update
// changes the key, so stale cubins are simply never found again.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/cache/ContentStore.h"

#include <string>

namespace msl::service {

/// Bumped whenever the key's serialization or meaning changes.
inline constexpr const char *kCubinKeyVersion = "msld-cubin-v1";

struct CubinKey {
  std::string ptxDigest;   // lowercase hex SHA-256 of the PTX
  std::string sm;          // "sm_90"
  std::string driverBuild; // "580.159.04"
  int cudaVersion = 0;     // 13000
  std::string jitOptions;  // executor/CudaDevice.h cudaJitIdentity(): JIT options, texture library
};

/// 64 lowercase hex characters: SHA-256 of the version and each field,
/// length-prefixed (so no two keys serialize alike).
std::string cubinCacheKey(const CubinKey &key);

/// The cubin kept under `key`, or "" when there is none (or it left the
/// store).
std::string findCubin(cache::ContentStore &store, const std::string &key);

/// Keeps `cubin` under `key`; false when the store refused it.
bool keepCubin(cache::ContentStore &store, const std::string &key, const std::string &cubin);

} // namespace msl::service
