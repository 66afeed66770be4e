// Unit tests of msl-conformance's pieces, without msld: the spec's ulp and
// the roundings (Ulp.h), the double references against MPFR (their error
// within eps, their residual signs), and the checker against decisions made
// with MPFR alone, so that the double fast path never judges differently.
#include "Bounds.h"
#include "Checker.h"
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

} // namespace
} // namespace msl::conformance
