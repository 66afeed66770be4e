//===- ChunkCheck.h - A chunk of a batch's results, judged -----------------===//
//
// msl-conformance runs a batch in chunks (one Execute per mode each) and
// judges each chunk on the host (checkChunk), or, for sweeps on a GPU, adds
// what the GPU checker found (mergeGpuVerdict, GpuCheckAbi.h). Either way a
// row's statistics come out the same: the GPU's clean samples only counted,
// its worst ones and the samples it listed judged here.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Checker.h"
#include "GpuCheckAbi.h"
#include "Inputs.h"

#include <cstdint>
#include <string>
#include <vector>

namespace msl::conformance {

/// A chunk's results: out[mode][result] points at its `count` words.
using ChunkResults = const uint32_t *const[kGpuCheckMaxModes][2];

/// Judges the chunk of `count` samples at `offset` of batch b on `jobs`
/// threads (only the samples in `only` where given): each sample's exact
/// results once, then every mode's results against them, into stats[mode].
void checkChunk(const FunctionInfo &fn, const FloatFormat &f, const Batch &b, uint64_t offset, uint32_t count,
                ChunkResults &out, const std::vector<MathMode> &modes, unsigned jobs, std::vector<RowStats> &stats,
                const std::vector<uint32_t> *only = nullptr);

/// Judges chunks of generated samples the GPU checker's way (GpuCheckAbi.h):
/// on a GPU (GpuCheck.h), or on the host with the same code (HostTally).
class TallyChecker {
public:
  virtual ~TallyChecker() = default;
  /// Page-locks host memory the results are read from, where that helps.
  virtual bool pin(char *base, uint64_t size, std::string &why) = 0;
  /// Judges `count` samples (params at the chunk's start) whose results
  /// for mode m and result k are got[m][k]. False with `why` on failure.
  virtual bool check(const FunctionInfo &fn, const FloatFormat &f, const Params &params, uint32_t count,
                     const std::vector<MathMode> &modes, ChunkResults &got, GpuChunkVerdict &out,
                     std::string &why) = 0;
};

/// The chunk's GpuCheckArgs but for where the results and the outputs
/// live (the checker's business); false with `why` for a chunk it cannot
/// take.
bool gpuCheckArgs(const FunctionInfo &fn, const FloatFormat &f, const Params &params, uint32_t count,
                  const std::vector<MathMode> &modes, GpuCheckArgs &a, std::string &why);

/// The GPU checker's code run here, the kernel's blocks emulated (a
/// thread's samples go to block (i / kGpuCheckThreads) % kGpuCheckBlocks):
/// the path of --gpu-checker without a GPU, for tests.
class HostTally final : public TallyChecker {
public:
  bool pin(char *, uint64_t, std::string &) override { return true; }
  bool check(const FunctionInfo &fn, const FloatFormat &f, const Params &params, uint32_t count,
             const std::vector<MathMode> &modes, ChunkResults &got, GpuChunkVerdict &out, std::string &why) override;
};

/// Adds the GPU checker's verdict of the chunk to stats[mode]: its counts,
/// its worst samples judged again here (the records the report shows), and
/// the samples it listed judged here (the whole chunk where the list
/// overflowed).
void mergeGpuVerdict(const FunctionInfo &fn, const FloatFormat &f, const Batch &b, uint64_t offset, uint32_t count,
                     ChunkResults &out, const std::vector<MathMode> &modes, unsigned jobs, const GpuChunkVerdict &v,
                     std::vector<RowStats> &stats);

} // namespace msl::conformance
