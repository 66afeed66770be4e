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

/// Adds the GPU checker's verdict of the chunk to stats[mode]: its counts,
/// its worst samples judged again here (the records the report shows), and
/// the samples it listed judged here (the whole chunk where the list
/// overflowed).
void mergeGpuVerdict(const FunctionInfo &fn, const FloatFormat &f, const Batch &b, uint64_t offset, uint32_t count,
                     ChunkResults &out, const std::vector<MathMode> &modes, unsigned jobs, const GpuChunkVerdict &v,
                     std::vector<RowStats> &stats);

} // namespace msl::conformance
