// Unit tests of msl-conformance's pieces, without msld: the spec's ulp and
// the roundings (Ulp.h), the double references against MPFR (their error
// within eps, their residual signs), the checker against decisions made
// with MPFR alone, so that the double fast path never judges differently,
// and the GPU checker's tally (run here) merged as the host would judge.
#include "Bounds.h"
#include "Checker.h"
#include "ChunkCheck.h"
#include "GpuCheckAbi.h"
#include "Functions.h"
#include "Inputs.h"
#include "Ulp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace msl::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Ulp, SpecDefinition) {
  const FloatFormat &f = kBinary32;
  EXPECT_EQ(ulp(f, 1.5), 0x1p-23);
  EXPECT_EQ(ulp(f, 1.0), 0x1p-24); // 1 and its predecessor are the two nearest
  EXPECT_EQ(ulp(f, 1.0 + 0x1p-30), 0x1p-23);
  EXPECT_EQ(ulp(f, 1.0 - 0x1p-30), 0x1p-24);
  EXPECT_EQ(ulp(f, 0.0), 0x1p-149);
  EXPECT_EQ(ulp(f, 0x1p-140), 0x1p-149);
  EXPECT_EQ(ulp(f, 0x1p-126), 0x1p-149); // below the smallest normal the spacing is the subnormal one
  EXPECT_EQ(ulp(f, 0x1p127), 0x1p103);
  EXPECT_EQ(ulp(f, 0x1p200), 0x1p104);
  EXPECT_EQ(ulp(kBinary16, 1.0), 0x1p-11);
  EXPECT_EQ(ulp(kBinary16, 3.0), 0x1p-9);
  EXPECT_EQ(ulp(kBinary16, 0.0), 0x1p-24);
  EXPECT_EQ(ulpError(f, kInf, 0x1p128), 0);   // rounds to INF
  EXPECT_GT(ulpError(f, kInf, -0x1p128), 1e7); // wrong sign counts as far
  EXPECT_GT(ulpError(f, kInf, 0x1.fffffep127), 0.49);
  EXPECT_EQ(ulpError(f, std::nan(""), std::nan("")), 0);
  EXPECT_EQ(ulpError(f, 1.0, std::nan("")), kInf);
}

TEST(Ulp, Rounding) {
  const FloatFormat &h = kBinary16;
  EXPECT_EQ(roundTo(h, 1.0 + 0x1p-11, Rounding::NearestEven), 1.0); // tie to even
  EXPECT_EQ(roundTo(h, 1.0 + 3 * 0x1p-11, Rounding::NearestEven), 1.0 + 0x1p-9);
  EXPECT_EQ(roundTo(h, -1.0 - 0x1p-12, Rounding::TowardZero), -1.0);
  EXPECT_EQ(roundTo(h, -1.0 - 0x1p-12, Rounding::Down), -1.0 - 0x1p-10);
  EXPECT_EQ(roundTo(h, 65520.0, Rounding::NearestEven), kInf);
  EXPECT_EQ(roundTo(h, 65519.0, Rounding::NearestEven), 65504.0);
  EXPECT_EQ(roundTo(h, 1e6, Rounding::TowardZero), 65504.0);
  EXPECT_EQ(roundTo(h, 1.5 * 0x1p-24, Rounding::NearestEven), 0x1p-23);
  EXPECT_EQ(roundTo(h, 0.5 * 0x1p-24, Rounding::NearestEven), 0.0);
  EXPECT_EQ(roundTo(kBinary32, 0x1p-150 * 1.5, Rounding::Up), 0x1p-149);
  for (uint32_t b : {0x0001u, 0x03ffu, 0x0400u, 0x3c00u, 0x7bffu, 0xfbffu, 0x8001u})
    EXPECT_EQ(bitsOf(h, valueOf(h, b)), b) << b;
}

TEST(Inputs, GeneratorMatchesSweepAndHash) {
  Params p;
  p.mode = Params::kSweep;
  p.start = 7;
  p.stride = 255;
  EXPECT_EQ(argBits(p, nullptr, 3, 0, 1), 7u + 3 * 255);
  EXPECT_EQ(argBits(p, nullptr, 3, 0, 2), (7u + 3 * 255) >> 16);
  p.mode = Params::kHashed;
  EXPECT_NE(argBits(p, nullptr, 0, 0, 2), argBits(p, nullptr, 0, 1, 2));
  EXPECT_EQ(intArg(0), -320);
  EXPECT_EQ(intArg(640), 320);
}

// Random values of every scale, and some near the interesting points.
double randomInput(std::mt19937_64 &rng, const FunctionInfo &fn, int arg) {
  if (fn.intSecondArg && arg == 1) return double(int(rng() % 641) - 320);
  double v;
  do {
    v = valueOf(kBinary32, uint32_t(rng()));
  } while (!std::isfinite(v));
  switch (rng() % 4) {
  case 0: return v;
  case 1: return float(std::ldexp(std::fmod(v, 1.0), int(rng() % 8) - 4) + double(int(rng() % 9) - 4) * 0.5);
  default: return float(std::ldexp(1.0 + std::ldexp(double(rng() % (1u << 23)), -23), int(rng() % 40) - 20) *
                        ((rng() & 1) ? -1 : 1));
  }
}

// Every inexact double reference is within its eps of the exact value, and
// a known tail sign is the sign of exact - v.
TEST(Reference, WithinEpsOfMpfr) {
  std::mt19937_64 rng(7);
  for (const FunctionInfo &fn : allFunctions()) {
    int checked = 0;
    for (int i = 0; i < 4000; ++i) {
      double in[3] = {0, 0, 0};
      for (int j = 0; j < fn.arity; ++j) in[j] = randomInput(rng, fn, j);
      Approx out[2];
      reference(fn.fn, kBinary32, in, out);
      for (int k = 0; k < fn.results; ++k) {
        const Approx &a = out[k];
        if (!a.defined || a.eps == 0 || !std::isfinite(a.v)) continue;
        ExactValue e(fn.fn, kBinary32, in, k);
        ASSERT_TRUE(e.withinAbs(a.v, a.eps * std::fabs(a.v)))
            << fn.name << "(" << in[0] << ", " << in[1] << ", " << in[2] << ") = " << a.v;
        if (a.tailKnown) {
          EXPECT_EQ(e.compare(a.v), a.tailSign) << fn.name << "(" << in[0] << ", " << in[1] << ")";
        }
        ++checked;
      }
    }
    if (fn.fn == Fn::Sin || fn.fn == Fn::Add || fn.fn == Fn::Div) {
      EXPECT_GT(checked, 1000) << fn.name;
    }
  }
}

// The checker, given the correctly rounded results (MPFR) and their
// neighbours, passes exactly those that MPFR alone would pass.
TEST(Checker, AgreesWithMpfr) {
  std::mt19937_64 rng(11);
  for (const FloatFormat *f : {&kBinary32, &kBinary16}) {
    for (const FunctionInfo &fn : allFunctions()) {
      if (fn.intResult[0] || fn.results != 1) continue;
      for (int i = 0; i < 1500; ++i) {
        double in[3] = {0, 0, 0};
        uint32_t bits[3] = {0, 0, 0};
        for (int j = 0; j < fn.arity; ++j) {
          double v = randomInput(rng, fn, j);
          if (!(fn.intSecondArg && j == 1)) v = roundTo(*f, v, Rounding::NearestEven);
          if (!std::isfinite(v)) v = 1.5;
          in[j] = v;
          bits[j] = fn.intSecondArg && j == 1 ? uint32_t(int(v) + 320) : bitsOf(*f, v);
        }
        Approx exact[2];
        reference(fn.fn, *f, in, exact);
        const Approx &a = exact[0];
        if (!a.defined || !std::isfinite(a.v) || a.eps == 0 || std::fabs(a.v) > f->maxFinite()) continue;
        Allowance allow = allowance(fn.fn, *f, MathMode::Precise, in, 0, a);
        if (allow.kind == Allowance::kUndefined) continue; // no row (half pow)
        ExactValue e(fn.fn, *f, in, 0);
        double nearest = e.rounded(Rounding::NearestEven);
        for (int d = -8; d <= 8; ++d) {
          double got = nearest;
          for (int s = 0; s < std::abs(d); ++s)
            got = roundTo(*f, got + (d > 0 ? 1 : -1) * ulp(*f, got) * 0.75, d > 0 ? Rounding::Up : Rounding::Down);
          if (!std::isfinite(got)) continue;
          bool want;
          if (allow.kind == Allowance::kCorrectlyRounded)
            want = got == nearest || got == e.rounded(Rounding::TowardZero);
          else
            want = e.withinUlps(got, allow.ulps);
          uint32_t gotBits[2] = {bitsOf(*f, got), 0};
          RowStats st;
          checkSample(fn, *f, MathMode::Precise, bits, in, gotBits, exact, st);
          bool pass = st.failures == 0 && st.flushed == 0;
          if (st.flushed) continue; // a zero accepted as flushed: not what this compares
          ASSERT_EQ(pass, want) << fn.name << " " << f->name << "(" << in[0] << ", " << in[1] << ", " << in[2]
                                << ") got " << got << " exact ~ " << a.v;
        }
      }
    }
  }
}

// The GPU checker's way (GpuCheckAbi.h tallySample per sample, tallies per
// block as the kernel's grid-stride loop makes them: HostTally, then
// mergeGpuVerdict)
// gives the same row statistics as judging every sample on the host
// (checkChunk): counts, worst samples, failures, flushes, roundings toward
// zero. The device's results are the host's own, with faults put in.
struct GpuTallyCase {
  Fn fn;
  uint32_t start, stride;
  bool faults = true;
};

void expectSameRecord(const SampleRecord &a, const SampleRecord &b, const std::string &what) {
  EXPECT_EQ(a.in[0], b.in[0]) << what;
  EXPECT_EQ(a.in[1], b.in[1]) << what;
  EXPECT_EQ(a.result, b.result) << what;
  EXPECT_EQ(a.got, b.got) << what;
  EXPECT_EQ(a.ulps, b.ulps) << what;
}

TEST(GpuChecker, TallyMergesAsTheHostJudges) {
  const FloatFormat &f = kBinary32;
  const std::vector<MathMode> modes = {MathMode::Precise, MathMode::Fast};
  // Past one round of the kernel's grid, so that a block holds samples far
  // apart (the first of equal worst errors is then not the first block's).
  constexpr uint32_t kCount = kGpuCheckBlocks * kGpuCheckThreads + 4096;
  // fabs from the NaNs up, without faults: fast math skips the first
  // block's samples, so its first sample with the largest error (0) is in
  // the second block, and the first block has others later.
  for (const GpuTallyCase &c : {GpuTallyCase{Fn::Sin, 0x10u, 16411u}, GpuTallyCase{Fn::Sqrt, 0x10u, 16411u},
                                GpuTallyCase{Fn::Sincos, 0x10u, 16411u}, GpuTallyCase{Fn::Frexp, 0x10u, 16411u},
                                GpuTallyCase{Fn::Exp, 0x10u, 3u}, GpuTallyCase{Fn::Fabs, 0x7fffff00u, 1u, false}}) {
    const FunctionInfo &fn = info(c.fn);
    Batch b;
    b.params.mode = Params::kSweep;
    b.params.start = c.start;
    b.params.stride = c.stride;
    b.count = kCount;
    // The device's results: the reference rounded to nearest, then faults:
    // 3 ulp too far (fails precise sin's 4-ulp bound from the wrong side of
    // 1-2 ulp errors below), toward zero (a correctly rounded row lists
    // it), a zero for a subnormal result (accepted only as flushed).
    std::vector<uint32_t> results[2][2];
    for (size_t m = 0; m < modes.size(); ++m)
      for (int k = 0; k < 2; ++k) results[m][k].assign(kCount, 0);
    for (uint32_t i = 0; i < kCount; ++i) {
      uint32_t bits = argBits(b.params, nullptr, i, 0, 1);
      double in[3] = {valueOf(f, bits), 0, 0};
      Approx exact[2];
      reference(fn.fn, f, in, exact);
      for (size_t m = 0; m < modes.size(); ++m)
        for (int k = 0; k < fn.results; ++k) {
          double v = exact[k].v;
          uint32_t got = fn.intResult[k] ? uint32_t(int32_t(v)) : bitsOf(f, roundTo(f, v, Rounding::NearestEven));
          if (c.faults && !fn.intResult[k] && std::isfinite(v) && v != 0) {
            if (i % 97 == 5) got += 6 * (m + 1);
            if (i % 61 == 7) got = bitsOf(f, roundTo(f, v, Rounding::TowardZero));
            if (i % 13 == 3 && isSubnormal(f, roundTo(f, v, Rounding::NearestEven))) got = bitsOf(f, std::copysign(0.0, v));
          }
          results[m][k][i] = got;
        }
    }
    const uint32_t *out[kGpuCheckMaxModes][2] = {};
    for (size_t m = 0; m < modes.size(); ++m)
      for (int k = 0; k < 2; ++k) out[m][k] = results[m][k].data();

    std::vector<RowStats> host(modes.size());
    checkChunk(fn, f, b, 0, kCount, out, modes, 2, host);

    GpuChunkVerdict v;
    std::string why;
    ASSERT_TRUE(HostTally().check(fn, f, chunkParams(b, 0), kCount, modes, out, v, why)) << why;
    // Faults are listed, clean samples are not.
    if (fn.fn != Fn::Fabs) EXPECT_GT(v.listed.size(), kCount / 200) << fn.name;
    EXPECT_LT(v.listed.size(), kCount / 4) << fn.name;
    std::vector<RowStats> gpu(modes.size());
    mergeGpuVerdict(fn, f, b, 0, kCount, out, modes, 2, v, gpu);

    for (size_t m = 0; m < modes.size(); ++m) {
      std::string what = std::string(fn.name) + " " + modeName(modes[m]);
      const RowStats &h = host[m], &g = gpu[m];
      EXPECT_EQ(g.checked, h.checked) << what;
      EXPECT_EQ(g.skipped, h.skipped) << what;
      EXPECT_EQ(g.failures, h.failures) << what;
      EXPECT_EQ(g.flushed, h.flushed) << what;
      EXPECT_EQ(g.towardZero, h.towardZero) << what;
      EXPECT_EQ(g.nearestOnly, h.nearestOnly) << what;
      EXPECT_EQ(g.mpfr, h.mpfr) << what;
      EXPECT_EQ(g.specials, h.specials) << what;
      EXPECT_EQ(g.specialFailures, h.specialFailures) << what;
      ASSERT_EQ(g.haveMax, h.haveMax) << what;
      if (h.haveMax) expectSameRecord(g.max, h.max, what + " max");
      ASSERT_EQ(g.haveMaxAbs, h.haveMaxAbs) << what;
      if (h.haveMaxAbs) expectSameRecord(g.maxAbs, h.maxAbs, what + " maxAbs");
      ASSERT_EQ(g.failed.size(), h.failed.size()) << what;
      for (size_t j = 0; j < h.failed.size(); ++j) expectSameRecord(g.failed[j], h.failed[j], what + " failure");
      ASSERT_EQ(g.roundedTowardZero.size(), h.roundedTowardZero.size()) << what;
      if (fn.fn == Fn::Sin && modes[m] == MathMode::Precise) {
        EXPECT_GT(h.failures, 0u) << what; // the faults are there to be found
        EXPECT_GT(h.flushed, 0u) << what;
      }
      if (fn.fn == Fn::Sqrt && modes[m] == MathMode::Precise) EXPECT_GT(h.towardZero, 0u) << what;
    }
  }
}

} // namespace
} // namespace msl::conformance
