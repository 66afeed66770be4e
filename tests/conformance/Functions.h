//===- Functions.h - The functions of the accuracy tables, their references --===//
//
// Every operation and function with a row in the accuracy tables of MSL 2.0
// section 7.4 (single precision, single precision with fast math, half
// precision), with a reference for its exact result:
//
//  * reference(): in double. A binary32 or binary16 input is a double, and
//    the exact result of most rows (+ - * of floats, fma's product, the
//    rounding functions, fmod, ldexp, ...) is a double too, or the double
//    operation is error-free-checkable (an fma residual, a two-sum), so the
//    double result is exact and says so (eps 0). The transcendental functions
//    come from glibc's double libm, whose largest documented errors are a few
//    double ulps (libm-test-ulps), far inside kLibmEps relative.
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

/// The exact results of fn at `in` (values of f; an int argument as a
/// double): out[0], and out[1] for two-result functions.
void reference(Fn fn, const FloatFormat &f, const double *in, Approx *out);

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
