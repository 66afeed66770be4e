//===- ChunkCheck.cpp - A chunk of a batch's results, judged ---------------===//
#include "ChunkCheck.h"

#include "Judge.h"
#include "Reference.h"

#include <chrono>
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

bool gpuCheckArgs(const FunctionInfo &fn, const FloatFormat &f, const Params &params, uint32_t count,
                  const std::vector<MathMode> &modes, GpuCheckArgs &a, std::string &why) {
  // Samples are named i * 2 + result in 32 bits, ~0u meaning none.
  if (count >= (1u << 31) || modes.empty() || modes.size() > size_t(kGpuCheckMaxModes)) {
    why = "the GPU checker takes fewer than 2^31 samples in 1 or 2 modes, not " + std::to_string(count) + " in " +
          std::to_string(modes.size());
    return false;
  }
  a = GpuCheckArgs{};
  a.fn = fn;
  a.params = params;
  a.count = count;
  a.modes = uint32_t(modes.size());
  a.binary32 = f.isBinary32();
  for (size_t m = 0; m < modes.size(); ++m) a.mode[m] = modes[m];
  return true;
}

bool HostTally::check(const FunctionInfo &fn, const FloatFormat &f, const Params &params, uint32_t count,
                      const std::vector<MathMode> &modes, ChunkResults &got, GpuChunkVerdict &out, std::string &why) {
  const auto started = std::chrono::steady_clock::now();
  GpuCheckArgs a;
  if (!gpuCheckArgs(fn, f, params, count, modes, a, why)) return false;
  for (size_t m = 0; m < modes.size(); ++m)
    for (int k = 0; k < fn.results; ++k) a.got[m][k] = got[m][k];
  std::vector<GpuTally> blocks(size_t(kGpuCheckBlocks) * modes.size(), emptyTally());
  out = GpuChunkVerdict();
  const FloatFormat format = gpuCheckFormat(a);
  for (uint32_t i = 0; i < count; ++i)
    if (!tallySample(a, format, i, &blocks[(i / kGpuCheckThreads) % kGpuCheckBlocks * modes.size()]))
      out.listed.push_back(i);
  std::vector<GpuTally> total(modes.size(), emptyTally());
  for (size_t blk = 0; blk < kGpuCheckBlocks; ++blk)
    for (size_t m = 0; m < modes.size(); ++m) {
      addTally(total[m], blocks[blk * modes.size() + m]);
      out.best.push_back(blocks[blk * modes.size() + m].best);
    }
  for (size_t m = 0; m < modes.size(); ++m) out.counts[m] = total[m].counts;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return true;
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
