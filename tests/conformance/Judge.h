//===- Judge.h - One sample against the tables ----------------------------===//
//
// A result passes when its table allows it for the exact result, or when
// 7.1's flushing explains it: "Denormalized ... numbers passed as input to or
// produced as the output of ... arithmetic operations may be flushed to
// zero". So a zero is accepted where an allowed result is subnormal, and a
// result is also judged against the exact result at the inputs with every
// subnormal input flushed (to a zero of its sign, or +0). With fast math
// (7.1: "the behavior of handling NaN or INF (as inputs or outputs) is
// undefined") samples with an INF or NaN input or exact result are skipped.
//
// Where the double reference cannot decide, judge() asks `Exact` (MPFR's
// ExactValue on the host) and says so (mpfr); the GPU checker passes a
// stand-in and sends those samples to the host. Shared by the host and the
// GPU checker (HostDevice.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Allowance.h"
#include "Functions.h"
#include "HostDevice.h"
#include "Inputs.h"
#include "Reference.h"
#include "Ulp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace msl::conformance {
namespace judge_detail {
struct Verdict {
  bool checked = true; // false: no bound here
  Allowance::Kind kind = Allowance::kUlps;
  bool pass = false;
  bool towardZero = false;
  bool nearestOnly = false;
  bool mpfr = false;
  bool subnormalAllowed = false; // an allowed result is subnormal, so a zero is too (7.1)
  bool onBound = false;          // the result is an end of a formula's interval (no margin there)
  double ulps = 0;
  double allowed = 0;
};

// Whether a double within eps (relative) of v may round differently from v:
// v near a midpoint (to nearest) or a value (toward zero) of the format.
MSL_HD inline bool nearRoundingBoundary(const FloatFormat &f, double v, double eps) {
  double a = std::fabs(v);
  if (a * (1 - 2 * eps) >= overflowThreshold(f)) return false; // INF, or the largest value toward zero
  double q = f.spacing(a);
  double t = a / q;
  double frac = t - std::floor(t);
  double d = 2 * eps * a / q;
  return std::fabs(frac - 0.5) <= d || frac <= d || 1 - frac <= d;
}

// The exact value rounded both ways, from a double v = RN(exact) and the
// sign of exact - v: only where v is a value of the format (toward zero) or
// a midpoint (to nearest) does the sign matter, since no other boundary lies
// within half a double ulp of v.
MSL_HD inline void roundWithTail(const FloatFormat &f, double v, int tailSign, double &nearest, double &towardZero) {
  nearest = roundTo(f, v, Rounding::NearestEven);
  towardZero = roundTo(f, v, Rounding::TowardZero);
  if (tailSign == 0 || v == 0) return;
  bool tailAway = (tailSign > 0) == (v > 0);
  if (towardZero == v) {
    if (!tailAway) // just below |v|: the value below it
      towardZero = roundTo(f, std::copysign(std::fabs(v) - ulp(f, v) / 2, v), Rounding::TowardZero);
    return;
  }
  double a = std::fabs(v), down = std::fabs(towardZero);
  double up = down >= f.maxFinite() ? std::ldexp(1.0, f.maxExponent + 1) : std::fabs(roundTo(f, v, v > 0 ? Rounding::Up : Rounding::Down));
  if (a - down == up - a) {
    double away = up > f.maxFinite() ? std::numeric_limits<double>::infinity() : up;
    nearest = std::copysign(tailAway ? away : down, v);
  }
}

// Whether |got - exact| <= n ulp(exact) for every exact value in [lo, hi]
// (or for none): false when that depends on where in it the exact value is.
MSL_HD inline bool decideUlps(const FloatFormat &f, double got, double lo, double hi, double n, bool &pass) {
  double a1 = std::min(std::fabs(lo), std::fabs(hi)), a2 = std::max(std::fabs(lo), std::fabs(hi));
  if (std::isinf(got)) {
    if (a1 >= overflowThreshold(f) && std::signbit(got) == std::signbit(lo)) return pass = true;
    got = std::copysign(std::ldexp(1.0, f.maxExponent + 1), got);
  }
  // ulp is non-decreasing in |x|: the smallest at a1, the largest at a2.
  // The distances are rounded doubles: a margin keeps a near tie undecided.
  double far = std::max(std::fabs(got - lo), std::fabs(got - hi));
  double near = got >= lo && got <= hi ? 0 : std::min(std::fabs(got - lo), std::fabs(got - hi));
  if (far <= n * ulp(f, a1) * (1 - 0x1p-50)) return pass = true;
  if (near > n * ulp(f, a2) * (1 + 0x1p-50)) {
    pass = false;
    return true;
  }
  return false;
}

template <typename Exact>
MSL_HD Verdict judge(const FunctionInfo &fn, const FloatFormat &f, MathMode mode, const double *in, int k, double got,
                     const Approx &exact) {
  Verdict v;
  if (!exact.defined) {
    v.checked = false;
    return v;
  }
  if (fn.intResult[k]) {
    v.pass = got == exact.v;
    v.ulps = std::fabs(got - exact.v);
    return v;
  }
  Allowance a = allowance(fn.fn, f, mode, in, k, exact);
  v.kind = a.kind;
  if (a.kind == Allowance::kUndefined) {
    v.checked = false;
    return v;
  }
  // An INF or NaN result is exact, whatever the row: nothing else is within
  // a finite number of ulps of it.
  if (std::isnan(exact.v) || std::isinf(exact.v) || std::isnan(got)) {
    v.pass = std::isnan(exact.v) ? std::isnan(got) : got == exact.v;
    v.ulps = v.pass ? 0 : std::numeric_limits<double>::infinity();
    return v;
  }
  const double x = exact.v, ax = std::fabs(x);
  const double u = ulp(f, x);
  v.ulps = ulpError(f, got, x);
  Exact precise(fn.fn, f, in, k); // MPFR, computed only when asked
  switch (a.kind) {
  case Allowance::kCorrectlyRounded: {
    double nearest, towardZero;
    roundWithTail(f, x, exact.tailKnown ? exact.tailSign : 0, nearest, towardZero);
    if (exact.eps > 0 && !exact.tailKnown && nearRoundingBoundary(f, x, exact.eps)) {
      v.mpfr = true;
      nearest = precise.rounded(Rounding::NearestEven);
      towardZero = precise.rounded(Rounding::TowardZero);
      v.ulps = precise.ulpError(got);
    }
    v.pass = got == nearest || got == towardZero;
    v.towardZero = v.pass && got != nearest;
    v.nearestOnly = v.pass && got != towardZero;
    v.allowed = 0.5;
    v.subnormalAllowed = ax < f.minNormal();
    break;
  }
  case Allowance::kUlps: {
    v.allowed = a.ulps;
    v.pass = v.ulps <= a.ulps;
    if (exact.eps > 0) {
      // The exact value is in [lo, hi]: MPFR only where that is not enough.
      bool pass = false;
      if (decideUlps(f, got, x - 2 * exact.eps * ax, x + 2 * exact.eps * ax, a.ulps, pass)) {
        v.pass = pass;
      } else {
        v.mpfr = true;
        v.pass = precise.withinUlps(got, a.ulps);
        v.ulps = precise.ulpError(got);
      }
    }
    v.subnormalAllowed = ax - a.ulps * u < f.minNormal();
    break;
  }
  case Allowance::kAbs: {
    double d = std::fabs(got - x);
    v.allowed = a.abs / u;
    v.pass = d <= a.abs;
    if (exact.eps > 0 && std::fabs(d - a.abs) <= 2 * exact.eps * ax + a.abs * 0x1p-50) {
      v.mpfr = true;
      v.pass = precise.withinAbs(got, a.abs);
    }
    v.subnormalAllowed = ax - a.abs < f.minNormal();
    break;
  }
  case Allowance::kInterval:
    v.pass = got >= a.lo && got <= a.hi;
    v.onBound = got == a.lo || got == a.hi;
    v.allowed = std::max(std::fabs(x - a.lo), std::fabs(a.hi - x)) / u;
    v.subnormalAllowed = (a.lo <= 0 && a.hi >= 0) || std::min(std::fabs(a.lo), std::fabs(a.hi)) < f.minNormal();
    break;
  case Allowance::kUndefined: break;
  }
  return v;
}

} // namespace judge_detail

/// One result of one sample, judged.
struct ResultVerdict {
  bool counted = false;     // false: skipped (no bound for this input, or fast math's undefined INF/NaN)
  bool pass = false;        // allowed, or explained by flushing
  bool flushed = false;     // passed only as a flushed denormal (7.1)
  bool special = false;     // the exact result is INF or NaN
  bool towardZero = false;  // correctly rounded toward zero, not to nearest (7.2)
  bool nearestOnly = false; // correctly rounded to nearest where toward zero differs
  bool mpfr = false;        // the verdict asked Exact
  bool mpfrWhenFlushed = false; // the judgement at flushed inputs asked Exact
  bool onBound = false;     // the result is an end of a formula's interval
  bool absolute = false;    // measured as an absolute error (the row's bound is absolute)
  double error = 0;         // in ulp of the exact result; absolute: |got - exact|
  double allowed = 0;       // what the bound allows here, in ulp of the exact result
};

/// Judges the device's results for one sample (fn.arity inputs `in`,
/// fn.results outputs `gotBits`, exact results `exact`): verdicts[k] per
/// result. Returns false when the whole sample is skipped (fast math and an
/// INF or NaN input).
template <typename Exact>
MSL_HD bool judgeSample(const FunctionInfo &fn, const FloatFormat &f, MathMode mode, const double *in,
                        const uint32_t *gotBits, const Approx *exact, ResultVerdict *verdicts) {
  using namespace judge_detail;
  const bool fast = mode == MathMode::Fast;
  const int floatArgs = fn.intSecondArg ? 1 : fn.arity;
  if (fast) {
    for (int j = 0; j < floatArgs; ++j)
      if (!std::isfinite(in[j])) return false;
  }
  bool anySubnormal = false;
  for (int j = 0; j < floatArgs; ++j) anySubnormal |= isSubnormal(f, in[j]);

  for (int k = 0; k < fn.results; ++k) {
    ResultVerdict &out = verdicts[k];
    out = ResultVerdict();
    const Approx &e = exact[k];
    if (fast && e.defined && !fn.intResult[k] && !std::isfinite(roundTo(f, e.v, Rounding::NearestEven)))
      continue;
    double got = fn.intResult[k] ? double(int32_t(gotBits[k])) : valueOf(f, gotBits[k]);
    Verdict v = judge<Exact>(fn, f, mode, in, k, got, e);
    if (!v.checked) continue;
    bool flushed = false;
    if (!v.pass && !fn.intResult[k] && got == 0 && v.subnormalAllowed) flushed = true;
    if (!v.pass && !flushed && anySubnormal) {
      // The same at the inputs with the subnormals flushed: to a zero of
      // their sign, then to +0.
      for (int variant = 0; variant < 2 && !flushed; ++variant) {
        double z[3] = {in[0], in[1], in[2]};
        for (int j = 0; j < floatArgs; ++j)
          if (isSubnormal(f, z[j])) z[j] = variant == 0 ? std::copysign(0.0, z[j]) : 0.0;
        Approx fe[2];
        reference(fn.fn, f, z, fe);
        if (fast && !fn.intResult[k] && !std::isfinite(roundTo(f, fe[k].v, Rounding::NearestEven))) {
          flushed = true; // undefined there: anything goes
          break;
        }
        Verdict w = judge<Exact>(fn, f, mode, z, k, got, fe[k]);
        out.mpfrWhenFlushed |= w.mpfr;
        flushed = !w.checked || w.pass || (!fn.intResult[k] && got == 0 && w.subnormalAllowed);
      }
    }
    out.counted = true;
    out.pass = v.pass || flushed;
    out.flushed = flushed;
    out.special = !fn.intResult[k] && (std::isnan(e.v) || std::isinf(e.v));
    out.towardZero = v.towardZero;
    out.nearestOnly = v.nearestOnly;
    out.mpfr = v.mpfr;
    out.onBound = v.onBound;
    out.absolute = !flushed && v.kind == Allowance::kAbs && !out.special;
    out.error = out.absolute ? std::fabs(got - e.v) : v.ulps;
    out.allowed = v.allowed;
  }
  return true;
}

} // namespace msl::conformance
