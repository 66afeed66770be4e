//===- GpuCheckAbi.h - What msl-conformance and the GPU checker exchange --===//
//
// The GPU checker (GpuChecker.cu, built by nvcc where there is one) judges
// a chunk of a sweep where the device's results are, with the host's own
// code (Judge.h): one thread per sample, both modes. A sample whose verdict
// is clean in every mode (decided without MPFR, passing, not rounded toward
// zero) is only counted; any other sample is listed for the host, which
// judges it again in full (MPFR, the failure records) and counts it there.
// The largest errors are kept per block (value, then the smallest index);
// the host takes the largest of the blocks' (then the smallest index):
// the worst clean sample a sequential check would keep. Where a listed
// sample has exactly the same error, the report may name the other one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Allowance.h"
#include "Functions.h"
#include "HostDevice.h"
#include "Inputs.h"
#include "Judge.h"
#include "Reference.h"

#include <cstdint>
#include <vector>

namespace msl::conformance {

constexpr int kGpuCheckMaxModes = 2;
constexpr unsigned kGpuCheckBlocks = 1024;
constexpr unsigned kGpuCheckThreads = 256;

/// Per mode, over the clean samples of a chunk.
struct GpuCheckCounts {
  unsigned long long checked;
  unsigned long long skipped;
  unsigned long long nearestOnly;
  unsigned long long specials;
};

/// Per block and mode: the largest error in ulp and the largest absolute
/// error (where the bound is absolute), each with its sample (index * 2 +
/// result); index ~0u: none.
struct GpuCheckBest {
  double maxError;
  double maxAbs;
  uint32_t maxSample;
  uint32_t maxAbsSample;
};

/// The kernel's name: a cubin built from other sources than this binary's
/// (another GpuCheckArgs) is refused rather than misread. Bump with any
/// change to these structures or to the judgement.
constexpr const char *kGpuCheckKernel = "checkSweep_v2";

struct GpuCheckArgs {
  FunctionInfo fn;
  Params params;                                   // the chunk's (sweep: start advanced to the chunk)
  uint32_t count;                                  // samples
  uint32_t modes;                                  // 1 or 2
  MathMode mode[kGpuCheckMaxModes];
  const uint32_t *got[kGpuCheckMaxModes][2];       // the device's results, [mode][result]
  GpuCheckCounts *counts;                          // [modes], zeroed by the host
  GpuCheckBest *best;                              // [kGpuCheckBlocks][modes]
  uint32_t *listed;                                // samples for the host
  unsigned long long *listedCount;                 // may exceed listedCapacity (the host then checks all)
  uint32_t listedCapacity;
  int binary32;                                    // the format: 1 float, 0 half
};

/// One chunk, as the GPU judged it (what the host reads back).
struct GpuChunkVerdict {
  GpuCheckCounts counts[kGpuCheckMaxModes] = {};
  std::vector<GpuCheckBest> best; // [block][mode]
  std::vector<uint32_t> listed;   // samples for the host, ascending
  bool overflowed = false;        // more were listed than fit: the host judges the whole chunk
  double seconds = 0;             // copies and kernel
};

//===-- The GPU checker's tally (the kernel's loop, testable on the host) --===//

/// Stands in for ExactValue where MPFR is not: judge() marks every question
/// it asks (mpfr), and such a sample is listed for the host.
struct AskTheHost {
  MSL_HD AskTheHost(Fn, const FloatFormat &, const double *, int) {}
  MSL_HD double rounded(Rounding) { return 0; }
  MSL_HD double ulpError(double) { return 0; }
  MSL_HD bool withinUlps(double, double) { return false; }
  MSL_HD bool withinAbs(double, double) { return false; }
};

/// A thread's or a block's share of a chunk, per mode.
struct GpuTally {
  GpuCheckCounts counts;
  GpuCheckBest best;
};

MSL_HD inline GpuTally emptyTally() { return {{0, 0, 0, 0}, {-1.0, -1.0, ~0u, ~0u}}; }

/// Keeps the larger error, and of equal ones the smaller sample.
MSL_HD inline void keepWorse(double &value, uint32_t &sample, double v, uint32_t s) {
  if (v > value || (v == value && s < sample)) {
    value = v;
    sample = s;
  }
}

MSL_HD inline void addTally(GpuTally &into, const GpuTally &o) {
  into.counts.checked += o.counts.checked;
  into.counts.skipped += o.counts.skipped;
  into.counts.nearestOnly += o.counts.nearestOnly;
  into.counts.specials += o.counts.specials;
  keepWorse(into.best.maxError, into.best.maxSample, o.best.maxError, o.best.maxSample);
  keepWorse(into.best.maxAbs, into.best.maxAbsSample, o.best.maxAbs, o.best.maxAbsSample);
}

/// Judges sample i of the chunk in every mode, adding it to tally[mode];
/// false (and nothing added) where the host must judge it: a question for
/// MPFR, a failure, a result rounded toward zero, one accepted only as
/// flushed, or one on the edge of a formula's interval (decided there with
/// no margin, so the two libms must not decide it) in some mode.
MSL_HD inline bool tallySample(const GpuCheckArgs &a, const FloatFormat &f, uint32_t i, GpuTally *tally) {
  uint32_t bits[3] = {0, 0, 0};
  double in[3] = {0, 0, 0};
  sampleInputs(a.params, nullptr, i, a.fn.arity, a.fn.intSecondArg, f, bits, in);
  Approx exact[2];
  reference(a.fn.fn, f, in, exact);
  ResultVerdict verdicts[kGpuCheckMaxModes][2];
  bool judged[kGpuCheckMaxModes] = {false, false};
  for (uint32_t m = 0; m < a.modes; ++m) {
    uint32_t got[2] = {a.got[m][0][i], a.fn.results == 2 ? a.got[m][1][i] : 0u};
    judged[m] = judgeSample<AskTheHost>(a.fn, f, a.mode[m], in, got, exact, verdicts[m]);
    if (!judged[m]) continue;
    for (int k = 0; k < a.fn.results; ++k) {
      const ResultVerdict &v = verdicts[m][k];
      if (v.counted && (!v.pass || v.mpfr || v.mpfrWhenFlushed || v.towardZero || v.flushed || v.onBound))
        return false;
    }
  }
  for (uint32_t m = 0; m < a.modes; ++m) {
    GpuTally &t = tally[m];
    if (!judged[m]) {
      t.counts.skipped += a.fn.results;
      continue;
    }
    for (int k = 0; k < a.fn.results; ++k) {
      const ResultVerdict &v = verdicts[m][k];
      if (!v.counted) {
        ++t.counts.skipped;
        continue;
      }
      ++t.counts.checked;
      t.counts.nearestOnly += v.nearestOnly;
      t.counts.specials += v.special;
      uint32_t sample = i * 2 + uint32_t(k);
      if (v.absolute) keepWorse(t.best.maxAbs, t.best.maxAbsSample, v.error, sample);
      else keepWorse(t.best.maxError, t.best.maxSample, v.error, sample);
    }
  }
  return true;
}

/// The format a GPU check runs in (code the GPU runs cannot name kBinary32).
MSL_HD inline FloatFormat gpuCheckFormat(const GpuCheckArgs &a) {
  return a.binary32 ? binary32() : binary16();
}

} // namespace msl::conformance
