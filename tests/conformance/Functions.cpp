//===- Functions.cpp - The functions of the accuracy tables, and MPFR -------===//
#include "Functions.h"
#include "Reference.h"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <stdexcept>

namespace msl::conformance {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The catalog, in the order of the tables.
const std::vector<FunctionInfo> kFunctions = {
    // fn, name, display, arity, intSecondArg, results, intResult, edges, focus
    {Fn::Add, "add", "x + y", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Sub, "sub", "x - y", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Mul, "mul", "x * y", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Recip, "recip", "1.0 / x", 1, false, 1, {}, kEdgeSpecial, Focus::None},
    {Fn::Div, "div", "x / y", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Acos, "acos", "acos", 1, false, 1, {}, kEdgeSpecial | kEdgeUnit, Focus::None},
    {Fn::Acosh, "acosh", "acosh", 1, false, 1, {}, kEdgeSpecial | kEdgeUnit, Focus::None},
    {Fn::Asin, "asin", "asin", 1, false, 1, {}, kEdgeSpecial | kEdgeUnit, Focus::None},
    {Fn::Asinh, "asinh", "asinh", 1, false, 1, {}, kEdgeSpecial, Focus::None},
    {Fn::Atan, "atan", "atan", 1, false, 1, {}, kEdgeSpecial, Focus::None},
    {Fn::Atan2, "atan2", "atan2", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Atanh, "atanh", "atanh", 1, false, 1, {}, kEdgeSpecial | kEdgeUnit, Focus::None},
    {Fn::Ceil, "ceil", "ceil", 1, false, 1, {}, kEdgeSpecial | kEdgeRounding, Focus::None},
    {Fn::Copysign, "copysign", "copysign", 2, false, 1, {}, kEdgeSpecial, Focus::None},
    {Fn::Cos, "cos", "cos", 1, false, 1, {}, kEdgeSpecial | kEdgeTrig, Focus::None},
    {Fn::Cosh, "cosh", "cosh", 1, false, 1, {}, kEdgeSpecial | kEdgeExp, Focus::None},
    {Fn::Cospi, "cospi", "cospi", 1, false, 1, {}, kEdgeSpecial | kEdgePi, Focus::None},
    {Fn::Exp, "exp", "exp", 1, false, 1, {}, kEdgeSpecial | kEdgeExp, Focus::None},
    {Fn::Exp2, "exp2", "exp2", 1, false, 1, {}, kEdgeSpecial | kEdgeExp, Focus::None},
    {Fn::Exp10, "exp10", "exp10", 1, false, 1, {}, kEdgeSpecial | kEdgeExp, Focus::None},
    {Fn::Fabs, "fabs", "fabs", 1, false, 1, {}, kEdgeSpecial, Focus::None},
    {Fn::Fdim, "fdim", "fdim", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Floor, "floor", "floor", 1, false, 1, {}, kEdgeSpecial | kEdgeRounding, Focus::None},
    {Fn::Fma, "fma", "fma", 3, false, 1, {}, kEdgeSpecial, Focus::Fma},
    {Fn::Fmax, "fmax", "fmax", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Fmin, "fmin", "fmin", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Fmod, "fmod", "fmod", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Fract, "fract", "fract", 1, false, 1, {}, kEdgeSpecial | kEdgeRounding, Focus::None},
    {Fn::Frexp, "frexp", "frexp", 1, false, 2, {false, true}, kEdgeSpecial, Focus::None},
    {Fn::Ilogb, "ilogb", "ilogb", 1, false, 1, {true, false}, kEdgeSpecial | kEdgeLog, Focus::None},
    {Fn::Ldexp, "ldexp", "ldexp", 2, true, 1, {}, kEdgeSpecial, Focus::None},
    {Fn::Log, "log", "log", 1, false, 1, {}, kEdgeSpecial | kEdgeLog, Focus::None},
    {Fn::Log2, "log2", "log2", 1, false, 1, {}, kEdgeSpecial | kEdgeLog, Focus::None},
    {Fn::Log10, "log10", "log10", 1, false, 1, {}, kEdgeSpecial | kEdgeLog, Focus::None},
    {Fn::Modf, "modf", "modf", 1, false, 2, {}, kEdgeSpecial | kEdgeRounding, Focus::None},
    {Fn::Nextafter, "nextafter", "nextafter", 2, false, 1, {}, kEdgeSpecial, Focus::CloseExponents},
    {Fn::Pow, "pow", "pow", 2, false, 1, {}, kEdgeSpecial, Focus::Pow},
    {Fn::Powr, "powr", "powr", 2, false, 1, {}, kEdgeSpecial, Focus::Pow},
    {Fn::Rint, "rint", "rint", 1, false, 1, {}, kEdgeSpecial | kEdgeRounding, Focus::None},
    {Fn::Round, "round", "round", 1, false, 1, {}, kEdgeSpecial | kEdgeRounding, Focus::None},
    {Fn::Rsqrt, "rsqrt", "rsqrt", 1, false, 1, {}, kEdgeSpecial | kEdgeLog, Focus::None},
    {Fn::Sin, "sin", "sin", 1, false, 1, {}, kEdgeSpecial | kEdgeTrig, Focus::None},
    {Fn::Sincos, "sincos", "sincos", 1, false, 2, {}, kEdgeSpecial | kEdgeTrig, Focus::None},
    {Fn::Sinh, "sinh", "sinh", 1, false, 1, {}, kEdgeSpecial | kEdgeExp, Focus::None},
    {Fn::Sinpi, "sinpi", "sinpi", 1, false, 1, {}, kEdgeSpecial | kEdgePi, Focus::None},
    {Fn::Sqrt, "sqrt", "sqrt", 1, false, 1, {}, kEdgeSpecial | kEdgeLog, Focus::None},
    {Fn::Tan, "tan", "tan", 1, false, 1, {}, kEdgeSpecial | kEdgeTrig, Focus::None},
    {Fn::Tanh, "tanh", "tanh", 1, false, 1, {}, kEdgeSpecial | kEdgeExp, Focus::None},
    {Fn::Tanpi, "tanpi", "tanpi", 1, false, 1, {}, kEdgeSpecial | kEdgePi, Focus::None},
    {Fn::Trunc, "trunc", "trunc", 1, false, 1, {}, kEdgeSpecial | kEdgeRounding, Focus::None},
};

} // namespace

const std::vector<FunctionInfo> &allFunctions() { return kFunctions; }

const FunctionInfo &info(Fn fn) {
  for (const auto &f : kFunctions)
    if (f.fn == fn) return f;
  std::abort();
}

//===-- ExactValue (MPFR) ---------------------------------------------------===//

namespace {
// 256 bits decide every rounding of a transcendental result; a sum of floats
// (add, sub, fdim, fma) is exact only with its whole exponent span, which for
// fma's product plus a float is below 600 bits.
constexpr mpfr_prec_t kBits = 256;
constexpr mpfr_prec_t kSumBits = 640;
mpfr_prec_t precisionOf(Fn fn) {
  return fn == Fn::Add || fn == Fn::Sub || fn == Fn::Fdim || fn == Fn::Fma ? kSumBits : kBits;
}

// The exact result of fn at `in`, result `k`, rounded to 256 bits. Only
// called for results whose double reference is inexact (eps > 0); exact
// ones (and every special value) never get here.
void mpfrReference(Fn fn, const double *in, int k, mpfr_t out) {
  mpfr_t x, y, z, r;
  mpfr_inits2(53, x, y, z, (mpfr_ptr)nullptr);
  mpfr_init2(r, precisionOf(fn));
  mpfr_set_d(x, in[0], MPFR_RNDN); // exact: inputs are doubles
  mpfr_set_d(y, in[1], MPFR_RNDN);
  mpfr_set_d(z, in[2], MPFR_RNDN);
  const mpfr_rnd_t n = MPFR_RNDN;
  switch (fn) {
  case Fn::Add: mpfr_add(r, x, y, n); break;
  case Fn::Sub: mpfr_sub(r, x, y, n); break;
  case Fn::Mul: mpfr_mul(r, x, y, n); break;
  case Fn::Recip: mpfr_ui_div(r, 1, x, n); break;
  case Fn::Div: mpfr_div(r, x, y, n); break;
  case Fn::Acos: mpfr_acos(r, x, n); break;
  case Fn::Acosh: mpfr_acosh(r, x, n); break;
  case Fn::Asin: mpfr_asin(r, x, n); break;
  case Fn::Asinh: mpfr_asinh(r, x, n); break;
  case Fn::Atan: mpfr_atan(r, x, n); break;
  case Fn::Atan2: mpfr_atan2(r, x, y, n); break;
  case Fn::Atanh: mpfr_atanh(r, x, n); break;
  case Fn::Cos: mpfr_cos(r, x, n); break;
  case Fn::Cosh: mpfr_cosh(r, x, n); break;
  case Fn::Cospi: mpfr_cospi(r, x, n); break;
  case Fn::Exp: mpfr_exp(r, x, n); break;
  case Fn::Exp2: mpfr_exp2(r, x, n); break;
  case Fn::Exp10: mpfr_exp10(r, x, n); break;
  case Fn::Fdim: mpfr_sub(r, x, y, n); break; // only x > y is inexact
  case Fn::Fma: mpfr_fma(r, x, y, z, n); break;
  case Fn::Log: mpfr_log(r, x, n); break;
  case Fn::Log2: mpfr_log2(r, x, n); break;
  case Fn::Log10: mpfr_log10(r, x, n); break;
  case Fn::Pow:
  case Fn::Powr: mpfr_pow(r, x, y, n); break; // powr's inexact cases have x > 0
  case Fn::Rsqrt: mpfr_rec_sqrt(r, x, n); break;
  case Fn::Sin: mpfr_sin(r, x, n); break;
  case Fn::Sincos:
    if (k == 0) mpfr_sin(r, x, n);
    else mpfr_cos(r, x, n);
    break;
  case Fn::Sinh: mpfr_sinh(r, x, n); break;
  case Fn::Sinpi: mpfr_sinpi(r, x, n); break;
  case Fn::Sqrt: mpfr_sqrt(r, x, n); break;
  case Fn::Tan: mpfr_tan(r, x, n); break;
  case Fn::Tanh: mpfr_tanh(r, x, n); break;
  case Fn::Tanpi: mpfr_tanpi(r, x, n); break;
  default:
    mpfr_clears(x, y, z, r, (mpfr_ptr)nullptr);
    throw std::logic_error(std::string("no MPFR reference for an exact function: ") + info(fn).name);
  }
  mpfr_set(out, r, MPFR_RNDN); // out is wider: exact
  mpfr_clears(x, y, z, r, (mpfr_ptr)nullptr);
}
} // namespace

struct ExactValue::Impl {
  mpfr_t v;       // the exact result
  mpfr_t ulp;     // ulp(v) of the format
  mpfr_t scratch; // |got - v| and such: as wide as v, so exact
  explicit Impl(mpfr_prec_t bits) { mpfr_inits2(bits, v, ulp, scratch, (mpfr_ptr)nullptr); }
  ~Impl() { mpfr_clears(v, ulp, scratch, (mpfr_ptr)nullptr); }
};

ExactValue::ExactValue(Fn fn, const FloatFormat &f, const double *in, int result)
    : fn_(fn), format_(f), in_{in[0], in[1], in[2]}, result_(result) {}
ExactValue::~ExactValue() = default;

void ExactValue::compute() {
  if (impl_) return;
  impl_ = std::make_unique<Impl>(precisionOf(fn_) + 64);
  mpfrReference(fn_, in_, result_, impl_->v);
  // ulp (Ulp.h): the spacing of the binade of |v|, halved at an exact power
  // of two above the smallest normal.
  const FloatFormat &f = format_;
  long e = mpfr_zero_p(impl_->v) ? f.minExponent : long(mpfr_get_exp(impl_->v)) - 1; // |v| in [2^e, 2^(e+1))
  long binade = std::clamp<long>(e, f.minExponent, f.maxExponent);
  mpfr_set_ui_2exp(impl_->ulp, 1, binade - f.precision + 1, MPFR_RNDN);
  if (!mpfr_zero_p(impl_->v) && e == binade && e > f.minExponent) {
    mpfr_abs(impl_->scratch, impl_->v, MPFR_RNDN);
    if (mpfr_cmp_ui_2exp(impl_->scratch, 1, e) == 0) mpfr_div_2ui(impl_->ulp, impl_->ulp, 1, MPFR_RNDN);
  }
}

double ExactValue::rounded(Rounding r) {
  compute();
  const FloatFormat &f = format_;
  mpfr_ptr t = impl_->scratch;
  if (mpfr_zero_p(impl_->v)) return mpfr_get_d(impl_->v, MPFR_RNDN);
  long e = long(mpfr_get_exp(impl_->v)) - 1;
  long binade = std::clamp<long>(e, f.minExponent, f.maxExponent);
  // t = v / spacing, rounded to an integer in the wanted direction: exact.
  mpfr_div_2si(t, impl_->v, binade - f.precision + 1, MPFR_RNDN);
  mpfr_rnd_t mode = r == Rounding::NearestEven ? MPFR_RNDN
                    : r == Rounding::TowardZero ? MPFR_RNDZ
                    : r == Rounding::Down      ? MPFR_RNDD
                                               : MPFR_RNDU;
  if (mode == MPFR_RNDN) mpfr_rint(t, t, MPFR_RNDN); // ties to even
  else mpfr_rint(t, t, mode);
  mpfr_mul_2si(t, t, binade - f.precision + 1, MPFR_RNDN);
  double d = mpfr_get_d(t, MPFR_RNDN); // exact: at most `precision` bits
  if (std::fabs(d) > f.maxFinite()) {
    bool away = r == Rounding::NearestEven || (r == Rounding::Up && d > 0) || (r == Rounding::Down && d < 0);
    d = std::copysign(away ? kInf : f.maxFinite(), d);
  }
  return d;
}

// An infinity that the exact result rounds to is exact (Ulp.h's ulpError);
// otherwise it counts as +-2^(maxExponent+1).
bool ExactValue::overflowsTo(double got) {
  if (!std::isinf(got) || std::signbit(got) != (mpfr_sgn(impl_->v) < 0)) return false;
  mpfr_set_d(impl_->scratch, overflowThreshold(format_), MPFR_RNDN);
  return mpfr_cmpabs(impl_->v, impl_->scratch) >= 0;
}

double ExactValue::ulpError(double got) {
  compute();
  if (overflowsTo(got)) return 0;
  if (std::isinf(got)) got = std::copysign(std::ldexp(1.0, format_.maxExponent + 1), got);
  mpfr_ptr t = impl_->scratch;
  mpfr_set_d(t, got, MPFR_RNDN);
  mpfr_sub(t, t, impl_->v, MPFR_RNDN);
  mpfr_abs(t, t, MPFR_RNDN);
  mpfr_div(t, t, impl_->ulp, MPFR_RNDN);
  return mpfr_get_d(t, MPFR_RNDN);
}

bool ExactValue::withinUlps(double got, double n) {
  compute();
  if (overflowsTo(got)) return true;
  if (std::isinf(got)) got = std::copysign(std::ldexp(1.0, format_.maxExponent + 1), got);
  mpfr_t d, allowed;
  mpfr_inits2(mpfr_get_prec(impl_->v) + 256, d, allowed, (mpfr_ptr)nullptr);
  mpfr_set_d(d, got, MPFR_RNDN);
  mpfr_sub(d, d, impl_->v, MPFR_RNDN);
  mpfr_abs(d, d, MPFR_RNDN);
  mpfr_mul_d(allowed, impl_->ulp, n, MPFR_RNDN); // exact: n has few bits
  bool ok = mpfr_lessequal_p(d, allowed);
  mpfr_clears(d, allowed, (mpfr_ptr)nullptr);
  return ok;
}

int ExactValue::compare(double v) {
  compute();
  int c = mpfr_cmp_d(impl_->v, v); // > 0: exact > v
  return c > 0 ? 1 : c < 0 ? -1 : 0;
}

bool ExactValue::withinAbs(double got, double a) {
  compute();
  mpfr_ptr t = impl_->scratch;
  mpfr_set_d(t, got, MPFR_RNDN);
  mpfr_sub(t, t, impl_->v, MPFR_RNDN);
  mpfr_abs(t, t, MPFR_RNDN);
  return mpfr_cmp_d(t, a) <= 0;
}

} // namespace msl::conformance
