//===- Checker.cpp - One sample against the tables, and the statistics ----===//
#include "Checker.h"

#include "Inputs.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace msl::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Verdict {
  bool checked = true; // false: no bound here
  Allowance::Kind kind = Allowance::kUlps;
  bool pass = false;
  bool towardZero = false;
  bool nearestOnly = false;
  bool mpfr = false;
  bool subnormalAllowed = false; // an allowed result is subnormal, so a zero is too (7.1)
  double ulps = 0;
  double allowed = 0;
};

// Whether a double within eps (relative) of v may round differently from v:
// v near a midpoint (to nearest) or a value (toward zero) of the format.
bool nearRoundingBoundary(const FloatFormat &f, double v, double eps) {
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
void roundWithTail(const FloatFormat &f, double v, int tailSign, double &nearest, double &towardZero) {
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
bool decideUlps(const FloatFormat &f, double got, double lo, double hi, double n, bool &pass) {
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

Verdict judge(const FunctionInfo &fn, const FloatFormat &f, MathMode mode, const double *in, int k, double got,
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
    v.ulps = v.pass ? 0 : kInf;
    return v;
  }
  const double x = exact.v, ax = std::fabs(x);
  const double u = ulp(f, x);
  v.ulps = ulpError(f, got, x);
  ExactValue precise(fn.fn, f, in, k); // MPFR, computed only when asked
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
    v.allowed = std::max(std::fabs(x - a.lo), std::fabs(a.hi - x)) / u;
    v.subnormalAllowed = (a.lo <= 0 && a.hi >= 0) || std::min(std::fabs(a.lo), std::fabs(a.hi)) < f.minNormal();
    break;
  case Allowance::kUndefined: break;
  }
  return v;
}

} // namespace

void RowStats::merge(const RowStats &o) {
  checked += o.checked;
  skipped += o.skipped;
  failures += o.failures;
  flushed += o.flushed;
  towardZero += o.towardZero;
  nearestOnly += o.nearestOnly;
  mpfr += o.mpfr;
  specials += o.specials;
  specialFailures += o.specialFailures;
  if (o.haveMax && (!haveMax || o.max.ulps > max.ulps)) {
    max = o.max;
    haveMax = true;
  }
  if (o.haveMaxAbs && (!haveMaxAbs || o.maxAbs.ulps > maxAbs.ulps)) {
    maxAbs = o.maxAbs;
    haveMaxAbs = true;
  }
  for (const auto &s : o.failed)
    if (failed.size() < kKeptFailures) failed.push_back(s);
  for (const auto &s : o.roundedTowardZero)
    if (roundedTowardZero.size() < kKeptFailures) roundedTowardZero.push_back(s);
}

void RowStats::finish() {
  if (!towardZero || !nearestOnly) return;
  failures += towardZero;
  for (const auto &s : roundedTowardZero)
    if (failed.size() < kKeptFailures) failed.push_back(s);
}

void checkSample(const FunctionInfo &fn, const FloatFormat &f, MathMode mode, const uint32_t *inBits,
                 const double *in, const uint32_t *gotBits, const Approx *exact, RowStats &stats) {
  const bool fast = mode == MathMode::Fast;
  const int floatArgs = fn.intSecondArg ? 1 : fn.arity;
  if (fast) {
    for (int j = 0; j < floatArgs; ++j)
      if (!std::isfinite(in[j])) {
        stats.skipped += fn.results;
        return;
      }
  }
  bool anySubnormal = false;
  for (int j = 0; j < floatArgs; ++j) anySubnormal |= isSubnormal(f, in[j]);

  for (int k = 0; k < fn.results; ++k) {
    const Approx &e = exact[k];
    if (fast && e.defined && !fn.intResult[k] && !std::isfinite(roundTo(f, e.v, Rounding::NearestEven))) {
      ++stats.skipped;
      continue;
    }
    double got = fn.intResult[k] ? double(int32_t(gotBits[k])) : valueOf(f, gotBits[k]);
    Verdict v = judge(fn, f, mode, in, k, got, e);
    if (!v.checked) {
      ++stats.skipped;
      continue;
    }
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
        Verdict w = judge(fn, f, mode, z, k, got, fe[k]);
        flushed = !w.checked || w.pass || (!fn.intResult[k] && got == 0 && w.subnormalAllowed);
      }
    }
    bool pass = v.pass || flushed;
    bool special = !fn.intResult[k] && (std::isnan(e.v) || std::isinf(e.v));

    ++stats.checked;
    stats.mpfr += v.mpfr;
    stats.towardZero += v.towardZero && !flushed;
    stats.nearestOnly += v.nearestOnly;
    if (special) {
      ++stats.specials;
      stats.specialFailures += !pass;
    }
    SampleRecord r;
    for (int j = 0; j < fn.arity; ++j) r.in[j] = inBits[j];
    r.result = k;
    r.got = gotBits[k];
    r.exact = e.v;
    r.ulps = v.ulps;
    r.allowed = v.allowed;
    if (flushed) {
      ++stats.flushed;
    } else if (v.kind == Allowance::kAbs && !special) {
      r.ulps = std::fabs(got - e.v);
      if (!stats.haveMaxAbs || r.ulps > stats.maxAbs.ulps) {
        stats.maxAbs = r;
        stats.haveMaxAbs = true;
      }
    } else if (!stats.haveMax || v.ulps > stats.max.ulps) {
      stats.max = r;
      stats.haveMax = true;
    }
    if (!pass) {
      ++stats.failures;
      if (stats.failed.size() < RowStats::kKeptFailures) stats.failed.push_back(r);
    }
    if (v.towardZero && stats.roundedTowardZero.size() < RowStats::kKeptFailures) stats.roundedTowardZero.push_back(r);
  }
}

std::string formatValue(const FloatFormat &f, double v) {
  char b[64];
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::snprintf(b, sizeof b, f.precision == kBinary32.precision ? "%a (%.9g)" : "%a (%.5g)", v, v);
  return b;
}

} // namespace msl::conformance
