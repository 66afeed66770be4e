//===- GpuChecker.cu - msl-conformance's judgement, run on the GPU ---------===//
//
// Built by nvcc (scripts/gpu-bench.sh) into a cubin that msl-conformance
// loads with the CUDA driver API (GpuCheck.h); never part of the CMake
// build, which has no CUDA toolkit. A thread per sample (grid-stride), each
// judging it with the host's own code (GpuCheckAbi.h tallySample: Judge.h,
// CUDA's double libm as the reference), then the block's tallies summed.
//
//===----------------------------------------------------------------------===//
#include "GpuCheckAbi.h"

using namespace msl::conformance;

// Named kGpuCheckKernel ("checkSweep_v2").
extern "C" __global__ void __launch_bounds__(kGpuCheckThreads) checkSweep_v2(GpuCheckArgs a) {
  const FloatFormat f = gpuCheckFormat(a);
  GpuTally tally[kGpuCheckMaxModes];
  for (uint32_t m = 0; m < a.modes; ++m) tally[m] = emptyTally();
  const uint32_t stride = gridDim.x * blockDim.x;
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < a.count; i += stride) {
    if (tallySample(a, f, i, tally)) continue;
    unsigned long long at = atomicAdd(a.listedCount, 1ull);
    if (at < a.listedCapacity) a.listed[at] = i;
  }

  // The block's tallies: warps first, then the warps' through shared memory.
  __shared__ GpuTally warps[kGpuCheckThreads / 32][kGpuCheckMaxModes];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  for (uint32_t m = 0; m < a.modes; ++m) {
    GpuTally &t = tally[m];
    for (int offset = 16; offset > 0; offset /= 2) {
      GpuTally o;
      o.counts.checked = __shfl_down_sync(~0u, t.counts.checked, offset);
      o.counts.skipped = __shfl_down_sync(~0u, t.counts.skipped, offset);
      o.counts.nearestOnly = __shfl_down_sync(~0u, t.counts.nearestOnly, offset);
      o.counts.specials = __shfl_down_sync(~0u, t.counts.specials, offset);
      o.best.maxError = __shfl_down_sync(~0u, t.best.maxError, offset);
      o.best.maxSample = __shfl_down_sync(~0u, t.best.maxSample, offset);
      o.best.maxAbs = __shfl_down_sync(~0u, t.best.maxAbs, offset);
      o.best.maxAbsSample = __shfl_down_sync(~0u, t.best.maxAbsSample, offset);
      addTally(t, o);
    }
    if (lane == 0) warps[warp][m] = t;
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  for (uint32_t m = 0; m < a.modes; ++m) {
    GpuTally sum = warps[0][m];
    for (unsigned w = 1; w < blockDim.x / 32; ++w) addTally(sum, warps[w][m]);
    GpuCheckCounts &c = a.counts[m];
    atomicAdd(&c.checked, sum.counts.checked);
    atomicAdd(&c.skipped, sum.counts.skipped);
    atomicAdd(&c.nearestOnly, sum.counts.nearestOnly);
    atomicAdd(&c.specials, sum.counts.specials);
    a.best[blockIdx.x * a.modes + m] = sum.best;
  }
}
