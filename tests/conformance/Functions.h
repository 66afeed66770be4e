//===- Functions.h - The functions of the accuracy tables, their references --===//
//
// Every operation and function with a row in the accuracy tables of MSL 2.0
// section 7.4 (single precision, single precision with fast math, half
// precision), with references for its exact result:
//
//  * reference() (Reference.h): in double, with its error bound.
//  * ExactValue (MPFR, 256 bits): used where the double answer cannot decide,
//    i.e. where the exact result is within eps of a rounding boundary of the
//    result format (correctly rounded rows) or the measured error is within
//    eps of the bound (ulp rows). Everywhere else a double within 2^-48 of
//    the exact value rounds, and measures, the same as the exact value itself,
//    since the format's boundaries are at least 2^-24 (relative) apart.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Ulp.h"

#include <memory>
#include <string>
#include <vector>

namespace msl::conformance {

enum class Fn {
  Add, Sub, Mul, Recip, Div,
  Acos, Acosh, Asin, Asinh, Atan, Atan2, Atanh, Ceil, Copysign, Cos, Cosh, Cospi,
  Exp, Exp2, Exp10, Fabs, Fdim, Floor, Fma, Fmax, Fmin, Fmod, Fract, Frexp, Ilogb,
  Ldexp, Log, Log2, Log10, Modf, Nextafter, Pow, Powr, Rint, Round, Rsqrt, Sin,
  Sincos, Sinh, Sinpi, Sqrt, Tan, Tanh, Tanpi, Trunc,
};

/// Edge-case families of a function (Inputs.cpp).
enum EdgeFamily : unsigned {
  kEdgeSpecial = 1,   // zeros, subnormals, extremes, INF, NaN, small integers (and neighbours)
  kEdgeTrig = 2,      // the floats nearest k * pi/2
  kEdgePi = 4,        // near integers, half- and quarter-integers (sinpi, cospi, tanpi)
  kEdgeRounding = 8,  // near integers and half-integers (floor, round, ...)
  kEdgeExp = 16,      // near the overflow and underflow thresholds, integers
  kEdgeLog = 32,      // near 1, the powers of 2 and 10
  kEdgeUnit = 64,     // near +-1 and +-0.5 (asin, acos, atanh, acosh)
};

/// Extra host-generated samples of two- and three-argument functions, where
/// random bit patterns rarely reach the interesting part.
enum class Focus { None, CloseExponents, Pow, Fma };

struct FunctionInfo {
  Fn fn;
  const char *name;    // kernel f32_<name> / f16_<name>
  const char *display; // as the tables name it
  int arity;
  bool intSecondArg;   // ldexp(x, k)
  int results;         // 2: sincos, frexp, modf
  bool intResult[2];   // ilogb, frexp's exponent
  unsigned edges;
  Focus focus;
};

const std::vector<FunctionInfo> &allFunctions();
const FunctionInfo &info(Fn fn);

/// An exact result held by MPFR, computed when first needed.
class ExactValue {
public:
  ExactValue(Fn fn, const FloatFormat &f, const double *in, int result);
  ~ExactValue();
  ExactValue(const ExactValue &) = delete;
  ExactValue &operator=(const ExactValue &) = delete;

  /// The exact result rounded to the format.
  double rounded(Rounding r);
  /// |got - exact| / ulp(exact), exactly, then rounded to double.
  double ulpError(double got);
  /// |got - exact| <= n * ulp(exact), decided exactly.
  bool withinUlps(double got, double n);
  /// |got - exact| <= a, decided exactly.
  bool withinAbs(double got, double a);
  /// The sign of exact - v.
  int compare(double v);

private:
  struct Impl;
  void compute();
  bool overflowsTo(double got);
  Fn fn_;
  const FloatFormat &format_;
  double in_[3];
  int result_;
  std::unique_ptr<Impl> impl_;
};

} // namespace msl::conformance
