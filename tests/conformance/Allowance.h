//===- Allowance.h - What the accuracy tables allow, per input -----------===//
//
// The rows of the accuracy tables of MSL 2.0 section 7.4 as code: for a
// function, format, mode and input, the results the specification allows
// (Allowance). A bound may depend on the input (fast exp: 3 + floor(|2x|)
// ulp; a domain outside which nothing is promised), and a fast-math row that
// says "implemented as <formula>" is measured as that formula: the allowed
// results are those the formula can give when each of its steps has its own
// row's accuracy (interval arithmetic over the steps). The rows' text is
// Bounds.h's. Shared by the host and the GPU checker (HostDevice.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "HostDevice.h"
#include "Reference.h"
#include "Ulp.h"

#include <algorithm>
#include <cmath>

namespace msl::conformance {

enum class MathMode { Precise, Fast };

struct Allowance {
  enum Kind {
    kUndefined,        // no bound for this input: not checked
    kCorrectlyRounded, // the exact result rounded (to nearest even or toward zero, 7.2)
    kUlps,             // |got - exact| <= ulps * ulp(exact); 0: exactly
    kAbs,              // |got - exact| <= abs
    kInterval,         // lo <= got <= hi (a formula's possible results)
  } kind = kUndefined;
  double ulps = 0, abs = 0, lo = 0, hi = 0;
};

namespace allowance_detail {

MSL_HD inline double min4(const double *c) { return fmin(fmin(c[0], c[1]), fmin(c[2], c[3])); }
MSL_HD inline double max4(const double *c) { return fmax(fmax(c[0], c[1]), fmax(c[2], c[3])); }

//===-- The fast-math formulas, step by step --------------------------------===//

// The fast table is single precision.
MSL_HD inline FloatFormat fastFormat() { return binary32(); }
constexpr double kPiF = 0x1.921fb6p+1;     // M_PI_F
constexpr double kLog2Of10F = 0x1.a934f0p+1; // log2(10) as a float
constexpr double kLog10Of2F = 0x1.344136p-2; // log10(2) as a float

// The floats one step of a formula may give, as their hull; !bounded: the
// step may give anything (outside its row's domain, or an INF or NaN, which
// fast math leaves undefined, 7.1).
struct Range {
  double lo = 0, hi = 0;
  bool bounded = true;
};
MSL_HD inline Range anything() { return {0, 0, false}; }
MSL_HD inline Range point(double v) { return {v, v, true}; }
MSL_HD inline Range hull(const Range &a, const Range &b) {
  if (!a.bounded || !b.bounded) return anything();
  return {std::min(a.lo, b.lo), std::max(a.hi, b.hi), true};
}

// Slack for the double evaluation of exact values (a few double ulps).
MSL_HD inline double slackDown(double v) { return v - std::fabs(v) * 0x1p-50; }
MSL_HD inline double slackUp(double v) { return v + std::fabs(v) * 0x1p-50; }

MSL_HD inline Range finiteOrAnything(double lo, double hi) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || std::fabs(lo) > fastFormat().maxFinite() || std::fabs(hi) > fastFormat().maxFinite())
    return anything();
  return {lo, hi, true};
}
// A correctly rounded step of an exact value in [lo, hi]: RD(lo) .. RU(hi).
MSL_HD inline Range correctlyRounded(double lo, double hi) {
  return finiteOrAnything(roundTo(fastFormat(), slackDown(lo), Rounding::Down), roundTo(fastFormat(), slackUp(hi), Rounding::Up));
}
// The floats within `error` of an exact value in [lo, hi] (the floats
// inside, so rounded inwards). Where that reaches past the largest float, an
// INF may be among them: undefined.
MSL_HD inline Range within(double lo, double hi, double error) {
  double a = slackDown(lo - error), b = slackUp(hi + error);
  if (!std::isfinite(a) || !std::isfinite(b) || std::fabs(a) > fastFormat().maxFinite() || std::fabs(b) > fastFormat().maxFinite())
    return anything();
  return {roundTo(fastFormat(), a, Rounding::Up), roundTo(fastFormat(), b, Rounding::Down), true};
}
MSL_HD inline Range withinUlps(double lo, double hi, double n) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return anything();
  return within(lo, hi, n * fastFormat().spacing(std::max(std::fabs(lo), std::fabs(hi))));
}
MSL_HD inline Range withinAbs(double lo, double hi, double a) { return within(lo, hi, a); }

// x + y, x - y, x * y: correctly rounded.
MSL_HD inline Range add(const Range &a, const Range &b) {
  if (!a.bounded || !b.bounded) return anything();
  return correctlyRounded(a.lo + b.lo, a.hi + b.hi);
}
MSL_HD inline Range sub(const Range &a, const Range &b) {
  if (!a.bounded || !b.bounded) return anything();
  return correctlyRounded(a.lo - b.hi, a.hi - b.lo);
}
MSL_HD inline Range mul(const Range &a, const Range &b) {
  if (!a.bounded || !b.bounded) return anything();
  double c[] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}; // exact: floats
  return correctlyRounded(min4(c), max4(c));
}
// x / y: <= 2.5 ulp for |y| in [2^-126, 2^126]; 1.0 / x: <= 1 ulp likewise.
MSL_HD inline bool inDivisorDomain(const Range &b) {
  double lo = std::min(std::fabs(b.lo), std::fabs(b.hi)), hi = std::max(std::fabs(b.lo), std::fabs(b.hi));
  bool straddlesZero = b.lo <= 0 && b.hi >= 0;
  return !straddlesZero && lo >= 0x1p-126 && hi <= 0x1p126;
}
MSL_HD inline Range divide(const Range &a, const Range &b, double ulps) {
  if (!a.bounded || !b.bounded || !inDivisorDomain(b)) return anything();
  double c[] = {a.lo / b.lo, a.lo / b.hi, a.hi / b.lo, a.hi / b.hi};
  return withinUlps(min4(c), max4(c), ulps);
}
MSL_HD inline Range fastDivide(const Range &a, const Range &b) { return divide(a, b, 2.5); }
MSL_HD inline Range fastRecip(const Range &b) { return divide(point(1.0), b, 1.0); }

// exp, exp2: <= 3 + floor(fabs(2 * x)) ulp (monotonic).
template <typename F> MSL_HD Range fastExpLike(const Range &t, F f) {
  if (!t.bounded) return anything();
  double n = 3 + std::floor(std::fabs(2 * std::max(std::fabs(t.lo), std::fabs(t.hi))));
  return withinUlps(f(t.lo), f(t.hi), n);
}
MSL_HD inline Range fastExp(const Range &t) { return fastExpLike(t, [](double v) { return std::exp(v); }); }
MSL_HD inline Range fastExp2(const Range &t) { return fastExpLike(t, [](double v) { return std::exp2(v); }); }

// log, log2: abs error <= absErr for x in [0.5, 2]; <= ulps ulp for other
// x > 0; undefined for x <= 0 (monotonic).
template <typename F> MSL_HD Range fastLogLike(const Range &a, double absErr, double ulps, F f) {
  if (!a.bounded || a.lo <= 0) return anything();
  Range r;
  bool any = false;
  auto add = [&](const Range &part) {
    r = any ? hull(r, part) : part;
    any = true;
  };
  if (a.lo <= 2.0 && a.hi >= 0.5)
    add(withinAbs(f(std::max(a.lo, 0.5)), f(std::min(a.hi, 2.0)), absErr));
  if (a.lo < 0.5) add(withinUlps(f(a.lo), f(std::min(a.hi, 0.5)), ulps));
  if (a.hi > 2.0) add(withinUlps(f(std::max(a.lo, 2.0)), f(a.hi), ulps));
  return r;
}
MSL_HD inline Range fastLog(const Range &a) { return fastLogLike(a, 0x1p-21, 3, [](double v) { return std::log(v); }); }
MSL_HD inline Range fastLog2(const Range &a) { return fastLogLike(a, 0x1p-22, 2, [](double v) { return std::log2(v); }); }

// rsqrt: <= 2 ulp; sqrt: x * rsqrt(x), with sqrt(0) = 0 (a special case
// "handled correctly").
MSL_HD inline Range fastRsqrt(const Range &a) {
  if (!a.bounded || a.lo <= 0) return anything();
  return withinUlps(1 / std::sqrt(a.hi), 1 / std::sqrt(a.lo), 2);
}
MSL_HD inline Range fastSqrt(const Range &a) {
  if (!a.bounded || a.lo < 0) return anything();
  if (a.hi == 0) return point(0);
  Range positive{std::max(a.lo, fastFormat().minSubnormal()), a.hi, true};
  Range r = mul(positive, fastRsqrt(positive));
  return a.lo == 0 ? hull(r, point(0)) : r;
}

// sin, cos: abs error <= 2^-13 for x in [-pi, pi] (and larger otherwise:
// unbounded). The ranges these get are a float or two wide.
MSL_HD inline Range fastSin(const Range &t) {
  if (!t.bounded || std::max(std::fabs(t.lo), std::fabs(t.hi)) > M_PI) return anything();
  double lo = std::min(std::sin(t.lo), std::sin(t.hi)), hi = std::max(std::sin(t.lo), std::sin(t.hi));
  if (t.lo <= M_PI_2 && t.hi >= M_PI_2) hi = 1;
  if (t.lo <= -M_PI_2 && t.hi >= -M_PI_2) lo = -1;
  return withinAbs(lo, hi, 0x1p-13);
}
MSL_HD inline Range fastCos(const Range &t) {
  if (!t.bounded || std::max(std::fabs(t.lo), std::fabs(t.hi)) > M_PI) return anything();
  double lo = std::min(std::cos(t.lo), std::cos(t.hi)), hi = std::max(std::cos(t.lo), std::cos(t.hi));
  if (t.lo <= 0 && t.hi >= 0) hi = 1;
  return withinAbs(lo, hi, 0x1p-13);
}
// tan: sin(x) * (1.0 / cos(x)).
MSL_HD inline Range fastTan(const Range &t) { return mul(fastSin(t), fastRecip(fastCos(t))); }
// atan: <= 5 ulp (monotonic).
MSL_HD inline Range fastAtan(const Range &q) {
  if (!q.bounded) return anything();
  return withinUlps(std::atan(q.lo), std::atan(q.hi), 5);
}

// The "implemented as" rows.
MSL_HD inline Range fastFormula(Fn fn, const double *in) {
  Range x = point(in[0]), y = point(in[1]);
  Range one = point(1.0), half = point(0.5);
  switch (fn) {
  case Fn::Acosh: return fastLog(add(x, fastSqrt(sub(mul(x, x), one))));
  case Fn::Asinh: return fastLog(add(x, fastSqrt(add(mul(x, x), one))));
  // The table's "0.5 * (log(1.0 + x) / (1.0 - x))" is read as
  // 0.5 * log((1.0 + x) / (1.0 - x)), atanh's identity.
  case Fn::Atanh: return mul(half, fastLog(fastDivide(add(one, x), sub(one, x))));
  case Fn::Atan2: {
    // atan2(y, x), the kernel's (in[0], in[1]); x = 0 or y = 0: undefined.
    double yv = in[0], xv = in[1];
    if (xv == 0 || yv == 0) return anything();
    Range a = fastAtan(fastDivide(point(yv), point(xv)));
    if (xv > 0) return a;
    return yv > 0 ? add(a, point(kPiF)) : sub(a, point(kPiF));
  }
  case Fn::Cosh: return mul(half, add(fastExp(x), fastExp(point(-in[0]))));
  case Fn::Sinh: return mul(half, sub(fastExp(x), fastExp(point(-in[0]))));
  case Fn::Tanh: {
    Range t = fastExp(mul(point(2.0), x));
    return fastDivide(sub(t, one), add(t, one));
  }
  case Fn::Tan: return fastTan(x);
  case Fn::Tanpi: return fastTan(mul(x, point(kPiF)));
  case Fn::Exp10: return fastExp2(mul(x, point(kLog2Of10F)));
  case Fn::Log10: return mul(fastLog2(x), point(kLog10Of2F));
  case Fn::Pow:
  case Fn::Powr: return fastExp2(mul(y, fastLog2(x))); // log2 is undefined for x <= 0
  case Fn::Sqrt: return fastSqrt(x);
  default: return anything();
  }
}

MSL_HD inline bool isFormulaRow(Fn fn) {
  switch (fn) {
  case Fn::Acosh: case Fn::Asinh: case Fn::Atanh: case Fn::Atan2: case Fn::Cosh: case Fn::Sinh:
  case Fn::Tanh: case Fn::Tan: case Fn::Tanpi: case Fn::Exp10: case Fn::Log10: case Fn::Pow:
  case Fn::Powr: case Fn::Sqrt:
    return true;
  default:
    return false;
  }
}

//===-- The tables -------------------------------------------------------===//

enum class Row { None, CorrectlyRounded, ZeroUlp, Ulps, Special };
struct RowSpec {
  Row row;
  double ulps = 0;
};

MSL_HD inline bool isCorrectlyRoundedRow(Fn fn) {
  switch (fn) {
  case Fn::Add: case Fn::Sub: case Fn::Mul: case Fn::Recip: case Fn::Div: case Fn::Ceil:
  case Fn::Fdim: case Fn::Floor: case Fn::Fma: case Fn::Fract: case Fn::Ldexp: case Fn::Rint:
  case Fn::Round: case Fn::Rsqrt: case Fn::Sqrt: case Fn::Trunc:
    return true;
  default:
    return false;
  }
}
MSL_HD inline bool isZeroUlpRow(Fn fn) {
  switch (fn) {
  case Fn::Copysign: case Fn::Fabs: case Fn::Fmax: case Fn::Fmin: case Fn::Fmod: case Fn::Frexp:
  case Fn::Ilogb: case Fn::Modf: case Fn::Nextafter:
    return true;
  default:
    return false;
  }
}

// Table 36: single precision, -fno-fast-math.
MSL_HD inline RowSpec preciseRow(Fn fn) {
  if (isCorrectlyRoundedRow(fn)) return {Row::CorrectlyRounded};
  if (isZeroUlpRow(fn)) return {Row::ZeroUlp};
  switch (fn) {
  case Fn::Atan: case Fn::Atanh: case Fn::Tanh: return {Row::Ulps, 5};
  case Fn::Atan2: case Fn::Tan: case Fn::Tanpi: return {Row::Ulps, 6};
  case Fn::Pow: case Fn::Powr: return {Row::Ulps, 16};
  default: return {Row::Ulps, 4};
  }
}
// Table 38: half precision; no row for pow and powr.
MSL_HD inline RowSpec halfRow(Fn fn) {
  if (isCorrectlyRoundedRow(fn)) return {Row::CorrectlyRounded};
  if (isZeroUlpRow(fn)) return {Row::ZeroUlp};
  if (fn == Fn::Pow || fn == Fn::Powr) return {Row::None};
  return {Row::Ulps, 1};
}
// Table 37: single precision with fast math; no row for nextafter.
MSL_HD inline RowSpec fastRow(Fn fn) {
  switch (fn) {
  case Fn::Add: case Fn::Sub: case Fn::Mul: case Fn::Ceil: case Fn::Fdim: case Fn::Floor: case Fn::Fma:
  case Fn::Fract: case Fn::Ldexp: case Fn::Rint: case Fn::Round: case Fn::Trunc:
    return {Row::CorrectlyRounded};
  case Fn::Copysign: case Fn::Fabs: case Fn::Fmax: case Fn::Fmin: case Fn::Frexp: case Fn::Ilogb:
  case Fn::Modf:
    return {Row::ZeroUlp};
  case Fn::Atan: return {Row::Ulps, 5};
  case Fn::Rsqrt: return {Row::Ulps, 2};
  case Fn::Nextafter: return {Row::None};
  default: return {Row::Special}; // domains, input-dependent bounds, formulas, fmod's "undefined"
  }
}

MSL_HD inline RowSpec rowOf(Fn fn, const FloatFormat &f, MathMode m) {
  if (!f.isBinary32()) return halfRow(fn);
  return m == MathMode::Precise ? preciseRow(fn) : fastRow(fn);
}

MSL_HD inline Allowance interval(const Range &r) {
  if (!r.bounded) return {};
  Allowance a;
  a.kind = Allowance::kInterval;
  a.lo = r.lo;
  a.hi = r.hi;
  return a;
}
MSL_HD inline Allowance ulps(double n) {
  Allowance a;
  a.kind = Allowance::kUlps;
  a.ulps = n;
  return a;
}
MSL_HD inline Allowance absolute(double e) {
  Allowance a;
  a.kind = Allowance::kAbs;
  a.abs = e;
  return a;
}

// Table 37's rows that are not a constant bound.
MSL_HD inline Allowance fastSpecial(Fn fn, const double *in) {
  double x = in[0], ax = std::fabs(in[0]);
  switch (fn) {
  case Fn::Recip: return ax >= 0x1p-126 && ax <= 0x1p126 ? ulps(1) : Allowance{};
  case Fn::Div: {
    double ay = std::fabs(in[1]);
    return ay >= 0x1p-126 && ay <= 0x1p126 ? ulps(2.5) : Allowance{};
  }
  case Fn::Acos: return ax <= 1 ? ulps(5) : Allowance{};
  case Fn::Asin: return ax <= 1 && ax >= 0x1p-125 ? ulps(5) : Allowance{};
  case Fn::Exp: case Fn::Exp2: return ulps(3 + std::floor(std::fabs(2 * x)));
  case Fn::Sin: case Fn::Cos: case Fn::Sincos: return ax <= M_PI ? absolute(0x1p-13) : Allowance{};
  case Fn::Sinpi: case Fn::Cospi: return ax <= 1 ? absolute(0x1p-13) : Allowance{};
  case Fn::Log: return x >= 0.5 && x <= 2 ? absolute(0x1p-21) : x > 0 ? ulps(3) : Allowance{};
  case Fn::Log2: return x >= 0.5 && x <= 2 ? absolute(0x1p-22) : x > 0 ? ulps(2) : Allowance{};
  case Fn::Fmod: return {}; // "Undefined"
  default: return interval(fastFormula(fn, in));
  }
}

} // namespace allowance_detail

/// The allowed results of result k at `in`, given its exact value.
MSL_HD inline Allowance allowance(Fn fn, const FloatFormat &f, MathMode m, const double *in, int k, const Approx &exact) {
  using namespace allowance_detail;
  RowSpec r = rowOf(fn, f, m);
  switch (r.row) {
  case Row::None: return {};
  case Row::CorrectlyRounded: {
    Allowance a;
    a.kind = Allowance::kCorrectlyRounded;
    return a;
  }
  case Row::ZeroUlp: return ulps(0);
  case Row::Ulps: return ulps(r.ulps);
  case Row::Special:
    // sincos: "ULP values as defined for sin(x) and cos(x)".
    if (fn == Fn::Sincos) return fastSpecial(k == 0 ? Fn::Sin : Fn::Cos, in);
    return fastSpecial(fn, in);
  }
  return {};
}

} // namespace msl::conformance

