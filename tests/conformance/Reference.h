//===- Reference.h - The exact results of the tables' functions, in double -===//
//
// reference(): the exact result of each function of Functions.h as a double
// with its error bound (Approx). A binary32 or binary16 input is a double,
// and the exact result of most rows (+ - * of floats, fma's product, the
// rounding functions, fmod, ldexp, ...) is a double too, or the double
// operation is error-free-checkable (an fma residual, a two-sum), so the
// double result is exact and says so (eps 0). The transcendental functions
// come from the double libm of the compiler that builds this (glibc's on the
// host, CUDA's in the GPU checker), whose largest documented errors are a
// few double ulps (glibc's libm-test-ulps; the CUDA programming guide's
// table of double-precision functions: at most 3), far inside kLibmEps
// relative. Where the double cannot decide, MPFR does (Functions.h
// ExactValue, host only).
//
// Shared by the host and the GPU checker (HostDevice.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Functions.h"
#include "HostDevice.h"
#include "Ulp.h"

#include <cmath>
#include <limits>

namespace msl::conformance {

/// A double approximation of an exact result: |v - exact| <= eps * |v|;
/// eps 0: v is exact (NaN and infinities are always exact). Where the double
/// is one correctly rounded operation, its residual also gives the sign of
/// exact - v (tailSign, with tailKnown), which decides every rounding of the
/// exact value without MPFR. !defined: the spec leaves this result open
/// (ilogb(0), frexp's exponent of INF).
struct Approx {
  double v = 0;
  double eps = 0;
  bool defined = true;
  bool tailKnown = false;
  int tailSign = 0;
};
constexpr double kLibmEps = 0x1p-48;

namespace reference_detail {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

MSL_HD inline Approx exact(double v) { return {v, 0, true}; }
// Below 2^-1000 a double result may be subnormal, with a larger relative
// error; at that size only its magnitude matters to a float's ulp.
MSL_HD inline Approx libm(double v) {
  if (!std::isfinite(v) || v == 0) return exact(v);
  return {v, std::fabs(v) < 0x1p-1000 ? 1.0 : kLibmEps, true};
}
MSL_HD inline Approx undefinedResult() { return {0, 0, false}; }
// One correctly rounded double operation whose error has the sign `tail`
// (exact - v; 0: v is exact).
MSL_HD inline Approx rounded(double v, double tail) {
  if (!std::isfinite(v) || tail == 0) return exact(v);
  return {v, 0x1p-53, true, true, tail > 0 ? 1 : -1};
}

// a + b: two-sum gives the rounding error of the double sum exactly.
MSL_HD inline Approx sum(double a, double b) {
  double s = a + b;
  if (!std::isfinite(s)) return exact(s);
  double bb = s - a;
  return rounded(s, (a - (s - bb)) + (b - bb));
}
// a / b: exact - q = -(q * b - a) / b, and the fma residual is exact.
MSL_HD inline Approx quotient(double a, double b) {
  double q = a / b;
  if (!std::isfinite(q) || q == 0) return exact(q);
  double r = std::fma(q, b, -a);
  return rounded(q, b > 0 ? -r : r);
}

// The next value of the format after finite v, towards +inf.
MSL_HD inline double formatNextUp(const FloatFormat &f, double v) {
  if (v == -kInf) return -f.maxFinite();
  if (v >= f.maxFinite()) return kInf;
  if (v >= 0) return v + f.spacing(v);
  return -(-v - ulp(f, -v)); // below a power of two the spacing is the smaller one
}

// sin, cos, tan of pi*x with x reduced exactly first (fmod is exact), so the
// double rounding of pi matters only relatively, and the exact zeros and
// poles come out exact. x = 2n + q/2 + r, |r| <= 1/4.
struct PiReduced {
  int q;
  double r;
};
MSL_HD inline PiReduced reducePi(double x) {
  double y = std::fmod(std::fabs(x), 2.0);
  double j = std::nearbyint(2.0 * y);
  return {int(j) & 3, y - 0.5 * j};
}
MSL_HD inline Approx sinpiRef(double x) {
  if (!std::isfinite(x)) return exact(kNaN);
  PiReduced p = reducePi(x);
  if (p.r == 0 && !(p.q & 1)) return exact(std::copysign(0.0, x));
  if (p.r == 0) return exact((p.q & 2) == (x < 0 ? 2 : 0) ? 1.0 : -1.0); // sinpi(+-1/2) = +-1, sinpi(3/2) = -1
  double v = (p.q & 1) ? std::cos(M_PI * p.r) : std::sin(M_PI * p.r);
  if (p.q & 2) v = -v;
  return libm(x < 0 ? -v : v);
}
MSL_HD inline Approx cospiRef(double x) {
  if (!std::isfinite(x)) return exact(kNaN);
  PiReduced p = reducePi(x);
  int n = p.q + 1;
  if (p.r == 0) return exact((n & 1) ? ((n & 2) ? -1.0 : 1.0) : 0.0); // cospi(n + 1/2) = +0
  double v = (n & 1) ? std::cos(M_PI * p.r) : std::sin(M_PI * p.r);
  return libm((n & 2) ? -v : v);
}
// IEEE 754-2019 9.2.1 / C23: tanpi(n) = +0 for even n, -0 for odd n (x > 0,
// odd symmetry), tanpi(n + 1/2) = +inf for even n, -inf for odd n.
MSL_HD inline Approx tanpiRef(double x) {
  if (!std::isfinite(x)) return exact(kNaN);
  PiReduced p = reducePi(x);
  double v;
  if (p.r == 0 && (p.q & 1)) return exact((p.q == 1) != (x < 0) ? kInf : -kInf);
  if (p.r == 0) v = p.q == 2 ? -0.0 : 0.0;
  else v = (p.q & 1) ? -1.0 / std::tan(M_PI * p.r) : std::tan(M_PI * p.r);
  if (x < 0) v = -v;
  return p.r == 0 ? exact(v) : libm(v);
}

// powr (OpenCL's and IEEE 754's): pow for x >= 0 only, NaN for 0^0, inf^0, 1^inf.
MSL_HD inline Approx powrRef(double x, double y) {
  if (std::isnan(x) || std::isnan(y) || x < 0) return exact(kNaN);
  if (x == 0) return exact(y == 0 ? kNaN : (y < 0 ? kInf : 0.0));
  if (std::isinf(x)) return exact(y == 0 ? kNaN : (y < 0 ? 0.0 : kInf));
  if (x == 1) return exact(std::isinf(y) ? kNaN : 1.0);
  if (y == 0) return exact(1.0);
  return libm(std::pow(x, y));
}
MSL_HD inline Approx powRef(double x, double y) {
  double v = std::pow(x, y);
  // The C99 special cases (F.9.4.4) are exact; so is an exact power of an integer.
  if (!std::isfinite(x) || !std::isfinite(y) || x == 0 || y == 0 || x == 1 || x == -1) return exact(v);
  return libm(v);
}

// fract: x - floor(x), which Metal keeps below 1: where the exact value would
// round to 1 the answer is the largest value below 1 (x - floor(x) is exact in
// double except for |x| < 2^-30, which is such a case). fract(+-inf) = +-0
// and fract(NaN) = NaN, as OpenCL C's edge cases have it.
MSL_HD inline Approx fractRef(const FloatFormat &f, double x) {
  if (std::isnan(x)) return exact(kNaN);
  if (std::isinf(x)) return exact(std::copysign(0.0, x));
  double v = x - std::floor(x);
  double belowOne = 1.0 - std::ldexp(1.0, -f.precision);
  if (v > belowOne) return exact(belowOne);
  return exact(v);
}

} // namespace reference_detail

/// The exact results of fn at `in` (values of f; an int argument as a
/// double): out[0], and out[1] for two-result functions.
MSL_HD inline void reference(Fn fn, const FloatFormat &f, const double *in, Approx *out) {
  using namespace reference_detail;
  const double x = in[0], y = in[1], z = in[2];
  switch (fn) {
  case Fn::Add: out[0] = sum(x, y); return;
  case Fn::Sub: out[0] = sum(x, -y); return;
  case Fn::Mul: out[0] = exact(x * y); return; // 24 x 24 bits: exact in double
  case Fn::Recip: out[0] = quotient(1.0, x); return;
  case Fn::Div: out[0] = quotient(x, y); return;
  case Fn::Acos: out[0] = libm(std::acos(x)); return;
  case Fn::Acosh: out[0] = libm(std::acosh(x)); return;
  case Fn::Asin: out[0] = libm(std::asin(x)); return;
  case Fn::Asinh: out[0] = libm(std::asinh(x)); return;
  case Fn::Atan: out[0] = libm(std::atan(x)); return;
  case Fn::Atan2: out[0] = libm(std::atan2(x, y)); return;
  case Fn::Atanh: out[0] = libm(std::atanh(x)); return;
  case Fn::Ceil: out[0] = exact(std::ceil(x)); return;
  case Fn::Copysign: out[0] = exact(std::copysign(x, y)); return;
  case Fn::Cos: out[0] = libm(std::cos(x)); return;
  case Fn::Cosh: out[0] = libm(std::cosh(x)); return;
  case Fn::Cospi: out[0] = cospiRef(x); return;
  case Fn::Exp: out[0] = libm(std::exp(x)); return;
  case Fn::Exp2: out[0] = std::nearbyint(x) == x ? exact(std::exp2(x)) : libm(std::exp2(x)); return;
  case Fn::Exp10: out[0] = libm(::exp10(x)); return;
  case Fn::Fabs: out[0] = exact(std::fabs(x)); return;
  case Fn::Fdim:
    if (std::isnan(x) || std::isnan(y)) out[0] = exact(kNaN);
    else out[0] = x > y ? sum(x, -y) : exact(0.0);
    return;
  case Fn::Floor: out[0] = exact(std::floor(x)); return;
  case Fn::Fma: {
    double p = x * y; // exact
    out[0] = std::isfinite(p) ? sum(p, z) : exact(std::fma(x, y, z));
    return;
  }
  case Fn::Fmax: out[0] = exact(std::fmax(x, y)); return;
  case Fn::Fmin: out[0] = exact(std::fmin(x, y)); return;
  case Fn::Fmod: out[0] = exact(std::fmod(x, y)); return;
  case Fn::Fract: out[0] = fractRef(f, x); return;
  case Fn::Frexp: {
    int e = 0;
    double m = std::frexp(x, &e);
    out[0] = exact(m);
    out[1] = std::isfinite(x) ? exact(e) : undefinedResult();
    return;
  }
  case Fn::Ilogb:
    // ilogb(0), ilogb(INF) and ilogb(NaN) are FP_ILOGB0/INT_MAX/FP_ILOGBNAN
    // in C, values Metal does not give.
    out[0] = std::isfinite(x) && x != 0 ? exact(std::ilogb(x)) : undefinedResult();
    return;
  case Fn::Ldexp: out[0] = exact(std::ldexp(x, int(y))); return; // |k| <= 320: no double overflow
  case Fn::Log: out[0] = x == 1 ? exact(0.0) : libm(std::log(x)); return;
  case Fn::Log2: {
    int e;
    bool powerOfTwo = x > 0 && std::isfinite(x) && std::frexp(x, &e) == 0.5;
    out[0] = powerOfTwo ? exact(std::log2(x)) : libm(std::log2(x));
    return;
  }
  case Fn::Log10: out[0] = libm(std::log10(x)); return;
  case Fn::Modf: {
    double whole;
    double frac = std::modf(x, &whole);
    out[0] = exact(frac);
    out[1] = exact(whole);
    return;
  }
  case Fn::Nextafter:
    if (std::isnan(x) || std::isnan(y)) out[0] = exact(kNaN);
    else if (x == y) out[0] = exact(y);
    else if (y > x) out[0] = exact(formatNextUp(f, x));
    else out[0] = exact(-formatNextUp(f, -x));
    return;
  case Fn::Pow: out[0] = powRef(x, y); return;
  case Fn::Powr: out[0] = powrRef(x, y); return;
  case Fn::Rint: out[0] = exact(std::nearbyint(x)); return;
  case Fn::Round: out[0] = exact(std::round(x)); return;
  case Fn::Rsqrt: {
    double s = std::sqrt(x);
    double r = 1.0 / s;
    bool isExact = !std::isfinite(r) || std::isnan(s) || (std::fma(s, s, -x) == 0 && std::fma(r, s, -1.0) == 0);
    out[0] = isExact ? exact(r) : Approx{r, 0x1p-51, true};
    return;
  }
  case Fn::Sin: out[0] = libm(std::sin(x)); return;
  case Fn::Sincos:
    out[0] = libm(std::sin(x));
    out[1] = x == 0 ? exact(1.0) : libm(std::cos(x));
    return;
  case Fn::Sinh: out[0] = libm(std::sinh(x)); return;
  case Fn::Sinpi: out[0] = sinpiRef(x); return;
  case Fn::Sqrt: {
    double s = std::sqrt(x);
    out[0] = std::isfinite(s) ? rounded(s, -std::fma(s, s, -x)) : exact(s); // exact - s has the sign of x - s^2
    return;
  }
  case Fn::Tan: out[0] = libm(std::tan(x)); return;
  case Fn::Tanh: out[0] = libm(std::tanh(x)); return;
  case Fn::Tanpi: out[0] = tanpiRef(x); return;
  case Fn::Trunc: out[0] = exact(std::trunc(x)); return;
  }
  out[0] = undefinedResult(); // not reached: every Fn has a case
}

} // namespace msl::conformance
