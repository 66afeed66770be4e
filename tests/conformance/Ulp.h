//===- Ulp.h - ULP and rounding for binary32 and binary16, in double -------===//
//
// The unit of the accuracy tables of the Metal specification (MSL 2.0
// section 7.4): "If x is a real number that lies between two finite
// consecutive floating-point numbers a and b, without being equal to one of
// them, then ulp(x) = |b - a|, otherwise ulp(x) is the distance between the
// two non-equal finite floating-point numbers nearest x."
//
// Read literally, that is the spacing of the binade holding |x|, except at an
// exact power of two 2^e (above the smallest normal), whose two nearest
// floats are 2^e itself and its predecessor: there ulp is the smaller spacing
// below. Beyond the largest finite float it is the last spacing; at zero and
// in the subnormal range the subnormal spacing.
//
// Values are doubles: every binary32 and binary16 value is one, and so is the
// double approximation of an exact result. Header-only, shared by the
// accuracy tests (tests/compiler/LibmAccuracyTest.cpp) and msl-conformance.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "HostDevice.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace msl::conformance {

/// A binary floating-point format (IEEE 754 binary32 or binary16).
struct FloatFormat {
  const char *name;
  int precision;   // significand bits, the implicit one included
  int minExponent; // the smallest normal is 2^minExponent
  int maxExponent; // the largest binade is [2^maxExponent, 2^(maxExponent+1))

  MSL_HD double minNormal() const { return std::ldexp(1.0, minExponent); }
  MSL_HD double maxFinite() const { return std::ldexp(2.0 - std::ldexp(1.0, 1 - precision), maxExponent); }
  /// The spacing of the subnormals (the smallest positive value).
  MSL_HD double minSubnormal() const { return std::ldexp(1.0, minExponent - precision + 1); }
  /// The exponent e of the binade [2^e, 2^(e+1)) holding |x|, clamped to
  /// [minExponent, maxExponent] (x finite).
  MSL_HD int binade(double x) const {
    if (x == 0) return minExponent;
    int e;
    std::frexp(x, &e); // |x| in [2^(e-1), 2^e)
    e -= 1;
    return e < minExponent ? minExponent : e > maxExponent ? maxExponent : e;
  }
  /// The spacing of the values in the binade holding |x| (x finite).
  MSL_HD double spacing(double x) const { return std::ldexp(1.0, binade(x) - precision + 1); }
  /// Whether this is binary32 (code the GPU runs cannot name kBinary32).
  MSL_HD bool isBinary32() const { return precision == 24; }
};

/// The formats by value, for code the GPU runs too (which cannot name the
/// host's kBinary32 and kBinary16).
MSL_HD constexpr FloatFormat binary32() { return {"float", 24, -126, 127}; }
MSL_HD constexpr FloatFormat binary16() { return {"half", 11, -14, 15}; }

inline constexpr FloatFormat kBinary32 = binary32();
inline constexpr FloatFormat kBinary16 = binary16();

/// ulp(x) of the specification (see the file comment), for a finite x.
MSL_HD inline double ulp(const FloatFormat &f, double x) {
  double a = std::fabs(x);
  double s = f.spacing(a);
  int e;
  bool powerOfTwo = std::frexp(a, &e) == 0.5;
  if (powerOfTwo && a > f.minNormal() && a <= std::ldexp(1.0, f.maxExponent)) return s / 2;
  return s;
}

/// The smallest magnitude that rounds to infinity (to nearest): the largest
/// finite value plus half its spacing.
MSL_HD inline double overflowThreshold(const FloatFormat &f) {
  return f.maxFinite() + f.spacing(f.maxFinite()) / 2;
}

/// |got - exact| / ulp(exact). A NaN `got` is infinitely wrong unless `exact`
/// is NaN; an infinite `exact` needs the same infinity. An infinite `got` is
/// exact (0) where `exact` rounds to that infinity; elsewhere it counts as
/// +-2^(maxExponent+1), so an early overflow is measured by how far the
/// exact result is from overflowing.
MSL_HD inline double ulpError(const FloatFormat &f, double got, double exact) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (std::isnan(exact)) return std::isnan(got) ? 0.0 : kInf;
  if (std::isnan(got)) return kInf;
  if (std::isinf(exact)) return got == exact ? 0.0 : kInf;
  if (std::isinf(got)) {
    if (std::fabs(exact) >= overflowThreshold(f) && std::signbit(got) == std::signbit(exact)) return 0.0;
    got = std::copysign(std::ldexp(1.0, f.maxExponent + 1), got);
  }
  return std::fabs(got - exact) / ulp(f, exact);
}

/// 7.2 allows round to nearest even and round toward zero; the directed
/// roundings bound intervals of results.
enum class Rounding { NearestEven, TowardZero, Down, Up };

/// x rounded to the format (with its subnormals and overflow). Exact for any
/// double x.
MSL_HD inline double roundTo(const FloatFormat &f, double x, Rounding r) {
  if (std::isnan(x) || std::isinf(x) || x == 0) return x;
  double q = f.spacing(std::fabs(x));
  double t = std::fabs(x) / q; // exact: a power-of-two scaling
  bool away = (r == Rounding::Up && x > 0) || (r == Rounding::Down && x < 0);
  if (r == Rounding::NearestEven) t = std::nearbyint(t);
  else t = away ? std::ceil(t) : std::trunc(t);
  double v = t * q;
  if (v > f.maxFinite())
    v = r == Rounding::NearestEven || away ? std::numeric_limits<double>::infinity() : f.maxFinite();
  return std::copysign(v, x);
}

} // namespace msl::conformance
