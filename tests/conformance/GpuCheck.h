//===- GpuCheck.h - The GPU checker, driven from msl-conformance ----------===//
//
// Exhaustive sweeps on a GPU: 2^32 results per function and mode are too
// many to judge on the host (about a minute per function on 16 cores, more
// to move them through gRPC). With --gpu-checker, the results of a sweep
// stay in a shared region (msld's CUDA worker writes them there), this
// copies them to the same GPU and runs GpuChecker.cu's kernel on them:
// Judge.h's code, compiled by nvcc, with CUDA's double libm as the
// reference. The samples it cannot settle (MPFR's questions, failures,
// results rounded toward zero) come back listed, and the host judges them
// in full; the rest come back as counts and the largest errors per block
// (GpuCheckAbi.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Bounds.h"
#include "ChunkCheck.h"
#include "GpuCheckAbi.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace msl::conformance {

class GpuChecker final : public TallyChecker {
public:
  /// Loads `cubinPath` (GpuChecker.cu built for this GPU) on CUDA device
  /// `ordinal`, for chunks of up to `maxChunk` samples. Null, with `why`,
  /// where that fails (no driver, no such GPU, a cubin for another SM).
  static std::unique_ptr<GpuChecker> open(const std::string &cubinPath, int ordinal, uint32_t maxChunk,
                                          std::string &why);
  ~GpuChecker();
  GpuChecker(const GpuChecker &) = delete;
  GpuChecker &operator=(const GpuChecker &) = delete;

  /// Page-locks host memory the results are copied from (the shared
  /// region), for copies at the bus's speed. False with `why` on failure
  /// (the copies then still work, slower).
  bool pin(char *base, uint64_t size, std::string &why) override;

  /// Copies the results (host memory) to the GPU and judges them there;
  /// false with `why` on a CUDA error.
  bool check(const FunctionInfo &fn, const FloatFormat &f, const Params &params, uint32_t count,
             const std::vector<MathMode> &modes, ChunkResults &got, GpuChunkVerdict &out, std::string &why) override;

private:
  struct Impl;
  explicit GpuChecker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace msl::conformance
