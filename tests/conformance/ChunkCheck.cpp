//===- ChunkCheck.cpp - A chunk of a batch's results, judged ---------------===//
#include "ChunkCheck.h"

#include "Judge.h"
#include "Reference.h"

#include <thread>

namespace msl::conformance {
namespace {

// The record of result k of sample i in mode m, judged here.
SampleRecord hostRecord(const FunctionInfo &fn, const FloatFormat &f, MathMode mode, const Params &p, uint32_t i, int k,
                        ChunkResults &out, size_t m) {
  uint32_t bits[3] = {0, 0, 0};
  double in[3] = {0, 0, 0};
  sampleInputs(p, nullptr, i, fn.arity, fn.intSecondArg, f, bits, in);
  Approx exact[2];
  reference(fn.fn, f, in, exact);
  uint32_t got[2] = {out[m][0][i], fn.results == 2 ? out[m][1][i] : 0};
  ResultVerdict verdicts[2];
  if (!judgeSample<ExactValue>(fn, f, mode, in, got, exact, verdicts)) verdicts[k] = ResultVerdict();
  return recordOf(fn, bits, k, got, exact[k], verdicts[k]);
}

} // namespace

void checkChunk(const FunctionInfo &fn, const FloatFormat &f, const Batch &b, uint64_t offset, uint32_t count,
                ChunkResults &out, const std::vector<MathMode> &modes, unsigned jobs, std::vector<RowStats> &stats,
                const std::vector<uint32_t> *only) {
  Params p = chunkParams(b, offset);
  const uint32_t *explicitBits = p.mode == Params::kExplicit ? b.bits.data() + offset * fn.arity : nullptr;
  const uint64_t n = only ? only->size() : count;
  jobs = unsigned(std::max<uint64_t>(1, std::min<uint64_t>(jobs, n)));
  std::vector<std::vector<RowStats>> part(jobs, std::vector<RowStats>(modes.size()));
  auto work = [&](unsigned t) {
    uint64_t lo = n * t / jobs, hi = n * (t + 1) / jobs;
    for (uint64_t at = lo; at < hi; ++at) {
      uint64_t i = only ? (*only)[at] : at;
      uint32_t bits[3] = {0, 0, 0};
      double in[3] = {0, 0, 0};
      sampleInputs(p, explicitBits, i, fn.arity, fn.intSecondArg, f, bits, in);
      Approx exact[2];
      reference(fn.fn, f, in, exact);
      for (size_t m = 0; m < modes.size(); ++m) {
        if (!hasRow(fn.fn, f, modes[m])) continue;
        uint32_t got[2] = {out[m][0][i], fn.results == 2 ? out[m][1][i] : 0};
        checkSample(fn, f, modes[m], bits, in, got, exact, part[t][m]);
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < jobs; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto &th : pool) th.join();
  for (unsigned t = 0; t < jobs; ++t)
    for (size_t m = 0; m < modes.size(); ++m) stats[m].merge(part[t][m]);
}

void mergeGpuVerdict(const FunctionInfo &fn, const FloatFormat &f, const Batch &b, uint64_t offset, uint32_t count,
                     ChunkResults &out, const std::vector<MathMode> &modes, unsigned jobs, const GpuChunkVerdict &v,
                     std::vector<RowStats> &stats) {
  if (v.overflowed) {
    checkChunk(fn, f, b, offset, count, out, modes, jobs, stats);
    return;
  }
  Params p = chunkParams(b, offset);
  for (size_t m = 0; m < modes.size(); ++m) {
    if (!hasRow(fn.fn, f, modes[m])) continue;
    RowStats s;
    s.checked = v.counts[m].checked;
    s.skipped = v.counts[m].skipped;
    s.nearestOnly = v.counts[m].nearestOnly;
    s.specials = v.counts[m].specials;
    // Each block's worst is its first sample among equals; of the blocks'
    // the largest, and of equals the first sample: the one a sequential
    // check keeps.
    const GpuCheckBest *top = nullptr, *topAbs = nullptr;
    for (size_t blk = 0; blk * modes.size() + m < v.best.size(); ++blk) {
      const GpuCheckBest &e = v.best[blk * modes.size() + m];
      if (e.maxSample != ~0u && (!top || e.maxError > top->maxError ||
                                 (e.maxError == top->maxError && e.maxSample < top->maxSample)))
        top = &e;
      if (e.maxAbsSample != ~0u && (!topAbs || e.maxAbs > topAbs->maxAbs ||
                                    (e.maxAbs == topAbs->maxAbs && e.maxAbsSample < topAbs->maxAbsSample)))
        topAbs = &e;
    }
    if (top) {
      s.max = hostRecord(fn, f, modes[m], p, top->maxSample / 2, int(top->maxSample % 2), out, m);
      s.haveMax = true;
    }
    if (topAbs) {
      s.maxAbs = hostRecord(fn, f, modes[m], p, topAbs->maxAbsSample / 2, int(topAbs->maxAbsSample % 2), out, m);
      s.haveMaxAbs = true;
    }
    stats[m].merge(s);
  }
  if (!v.listed.empty()) checkChunk(fn, f, b, offset, count, out, modes, jobs, stats, &v.listed);
}

} // namespace msl::conformance
