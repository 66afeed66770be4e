//===- Bounds.cpp - The accuracy tables of MSL 2.0 section 7.4, as text ----===//
#include "Bounds.h"

#include <cstdio>

namespace msl::conformance {
namespace {

using namespace allowance_detail;

const char *formulaText(Fn fn) {
  switch (fn) {
  case Fn::Acosh: return "as log(x + sqrt(x*x - 1.0))";
  case Fn::Asinh: return "as log(x + sqrt(x*x + 1.0))";
  case Fn::Atanh: return "as 0.5 * log((1.0 + x) / (1.0 - x))";
  case Fn::Atan2: return "as atan(y/x) (+-M_PI_F for x < 0); x or y 0: undefined";
  case Fn::Cosh: return "as 0.5 * (exp(x) + exp(-x))";
  case Fn::Sinh: return "as 0.5 * (exp(x) - exp(-x))";
  case Fn::Tanh: return "as (t - 1.0)/(t + 1.0), t = exp(2.0*x)";
  case Fn::Tan: return "as sin(x) * (1.0 / cos(x))";
  case Fn::Tanpi: return "as tan(x * M_PI_F)";
  case Fn::Exp10: return "as exp2(x * log2(10))";
  case Fn::Log10: return "as log2(x) * log10(2)";
  case Fn::Pow: return "as exp2(y * log2(x))";
  case Fn::Powr: return "as exp2(y * log2(x))";
  case Fn::Sqrt: return "as x * rsqrt(x), special cases exact";
  default: return "";
  }
}

std::string ulpText(double n) {
  char b[32];
  std::snprintf(b, sizeof b, "<= %g ulp", n);
  return b;
}

std::string fastSpecialText(Fn fn) {
  switch (fn) {
  case Fn::Recip: return "<= 1 ulp for fabs(x) in [2^-126, 2^126]";
  case Fn::Div: return "<= 2.5 ulp for fabs(y) in [2^-126, 2^126]";
  case Fn::Acos: return "<= 5 ulp for x in [-1, 1]";
  case Fn::Asin: return "<= 5 ulp for x in [-1, 1], fabs(x) >= 2^-125";
  case Fn::Exp: case Fn::Exp2: return "<= 3 + floor(fabs(2x)) ulp";
  case Fn::Sin: case Fn::Cos: case Fn::Sincos: return "abs <= 2^-13 for x in [-pi, pi]";
  case Fn::Sinpi: case Fn::Cospi: return "abs <= 2^-13 for x in [-1, 1]";
  case Fn::Log: return "abs <= 2^-21 in [0.5, 2], else <= 3 ulp";
  case Fn::Log2: return "abs <= 2^-22 in [0.5, 2], else <= 2 ulp";
  case Fn::Fmod: return "undefined";
  default: return isFormulaRow(fn) ? formulaText(fn) : "?";
  }
}

} // namespace


const char *modeName(MathMode m) { return m == MathMode::Precise ? "precise" : "fast"; }

bool hasRow(Fn fn, const FloatFormat &f, MathMode m) { return rowOf(fn, f, m).row != Row::None; }

std::string boundText(Fn fn, const FloatFormat &f, MathMode m) {
  RowSpec r = rowOf(fn, f, m);
  switch (r.row) {
  case Row::None: return "no row";
  case Row::CorrectlyRounded: return "correctly rounded";
  case Row::ZeroUlp: return "0 ulp";
  case Row::Ulps: return ulpText(r.ulps);
  case Row::Special: return fastSpecialText(fn);
  }
  return "?";
}

} // namespace msl::conformance
