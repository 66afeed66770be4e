// Accuracy of compiler/stdlib/__msl_libm.h (the float math behind
// metal::precise:: on the GPU target) against the host libm in double.
//
// Each function is measured over a strided sweep of all 2^32 float bit
// patterns (both signs, every exponent), random inputs in the ranges where it
// is interesting, and targeted hard cases; the max error in ulp (ulp = the
// distance between the two floats nearest the exact result, Ulp.h) must stay within
// the Metal spec's precise bound. Special values (zeros, infinities, NaN,
// integers for the *pi functions, the C99 pow table) must match exactly.
// The header is compiled here with the host compiler, IEEE (no flushing).
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#ifdef MSLD_LIBM_HEADER
#include MSLD_LIBM_HEADER
#else
#include "../../compiler/stdlib/__msl_libm.h"
#endif
#include "../conformance/Ulp.h"

namespace {

namespace M = __msl_libm;

float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint32_t toBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

const float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Error of `got` in ulps of the exact result `ref` (computed in double), ulp
// as the Metal specification defines it (shared with msl-conformance).
double ulpError(float got, double ref) { return msl::conformance::ulpError(msl::conformance::kBinary32, got, ref); }

std::string fmt(float x) {
  std::ostringstream os;
  os << std::hexfloat << x << std::defaultfloat << " (" << x << ")";
  return os.str();
}

struct Stat {
  double maxErr = 0;
  float wx = 0, wy = 0, wgot = 0;
  double wref = 0;
  long n = 0;
  bool binary = false;
  void add(float x, float y, float got, double ref) {
    ++n;
    double e = ulpError(got, ref);
    if (e > maxErr || (std::isnan(e) && !std::isnan(maxErr))) {
      maxErr = e;
      wx = x;
      wy = y;
      wgot = got;
      wref = ref;
    }
  }
  void report(const char *name, double bound) const {
    std::ostringstream os;
    os << name << ": max " << maxErr << " ulp (bound " << bound << ") over " << n
       << " inputs; worst " << name << "(" << fmt(wx);
    if (binary) os << ", " << fmt(wy);
    os << ") = " << fmt(wgot) << " ref " << std::setprecision(17) << wref;
    std::cout << os.str() << std::endl;
    ::testing::Test::RecordProperty("max_ulp", std::to_string(maxErr));
    ::testing::Test::RecordProperty("worst", os.str());
  }
};

// ~1M inputs per unary function: every kStride-th bit pattern. The odd
// stride varies the low mantissa bits from one exponent to the next.
constexpr uint64_t kStride = 4093;

template <class F, class R>
void sweep(Stat &st, F f, R ref, uint32_t offset = 0) {
  for (uint64_t i = offset; i < (1ull << 32); i += kStride) {
    float x = fromBits((uint32_t)i);
    st.add(x, 0, f(x), ref(x));
  }
}

std::mt19937 &rng() {
  static std::mt19937 g(12345);
  return g;
}

template <class F, class R>
void uniform(Stat &st, F f, R ref, float lo, float hi, int n) {
  std::uniform_real_distribution<float> d(lo, hi);
  for (int i = 0; i < n; ++i) {
    float x = d(rng());
    st.add(x, 0, f(x), ref(x));
  }
}

// Log-uniform magnitudes in [2^elo, 2^ehi), random sign if `bothSigns`.
float logUniform(int elo, int ehi, bool bothSigns) {
  std::uniform_int_distribution<uint32_t> e(elo + 127, ehi + 126), m(0, 0x7fffff), s(0, 1);
  uint32_t sign = bothSigns ? s(rng()) << 31 : 0;
  return fromBits(sign | (e(rng()) << 23) | m(rng()));
}

template <class F, class R>
void logRange(Stat &st, F f, R ref, int elo, int ehi, bool bothSigns, int n) {
  for (int i = 0; i < n; ++i) {
    float x = logUniform(elo, ehi, bothSigns);
    st.add(x, 0, f(x), ref(x));
  }
}

// Inputs right around given points: the point and its neighbours.
template <class F, class R>
void around(Stat &st, F f, R ref, const std::vector<float> &pts, int k = 64) {
  for (float p : pts) {
    float x = p;
    for (int i = 0; i < k; ++i) x = std::nextafter(x, -kInf);
    for (int i = 0; i < 2 * k; ++i) {
      st.add(x, 0, f(x), ref(x));
      x = std::nextafter(x, kInf);
    }
  }
}

// Bitwise equality, any NaN matching any NaN.
::testing::AssertionResult same(float got, float want) {
  if (std::isnan(want) ? std::isnan(got) : toBits(got) == toBits(want))
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << fmt(got) << ", want " << fmt(want);
}

#define EXPECT_SAME(call, want) EXPECT_TRUE(same((call), (want))) << #call

// The special values every unary sweep also runs through.
std::vector<float> specials() {
  std::vector<float> v = {0.0f, 1.0f, 2.0f, 0.5f, 0.25f, 3.0f, 10.0f, 100.0f, 1e10f, 1e30f,
                          FLT_MAX, FLT_MIN, FLT_TRUE_MIN, 0x1p-130f, 0x1.fffffcp-127f,
                          0x1p-20f, 0x1p-12f, 0x1p12f, 0x1p24f, 0x1p64f, kInf, kNaN};
  std::vector<float> out;
  for (float x : v) {
    out.push_back(x);
    out.push_back(-x);
  }
  return out;
}

template <class F, class R>
void runSpecials(Stat &st, F f, R ref) {
  for (float x : specials()) st.add(x, 0, f(x), ref(x));
}

// ------------------------------------------------------------ references
// sin/cos/tan(pi x) with the argument reduced exactly in double first.
struct PiRed { int q; double r; };
PiRed piRed(float x) {
  double a = std::fabs((double)x);
  double y = std::fmod(a, 2.0);
  double j = std::nearbyint(2.0 * y);
  return {(int)j & 3, y - 0.5 * j};
}
double refSinpi(float x) {
  if (!std::isfinite(x)) return NAN;
  PiRed p = piRed(x);
  double v = (p.q & 1) ? std::cos(M_PI * p.r) : std::sin(M_PI * p.r);
  if (p.q & 2) v = -v;
  return x < 0 ? -v : v;
}
double refCospi(float x) {
  if (!std::isfinite(x)) return NAN;
  PiRed p = piRed(x);
  int n = p.q + 1;
  double v = (n & 1) ? std::cos(M_PI * p.r) : std::sin(M_PI * p.r);
  return (n & 2) ? -v : v;
}
double refTanpi(float x) {
  if (!std::isfinite(x)) return NAN;
  PiRed p = piRed(x);
  double v;
  if (p.r == 0 && (p.q & 1)) v = p.q == 1 ? INFINITY : -INFINITY;
  else if (p.q & 1) v = -1.0 / std::tan(M_PI * p.r);
  else v = std::tan(M_PI * p.r);
  return x < 0 ? -v : v;
}

double refPowr(float x, float y) {
  if (std::isnan(x) || std::isnan(y) || x < 0) return NAN;
  if (x == 0) return y == 0 ? NAN : (y < 0 ? INFINITY : 0.0);
  if (std::isinf(x)) return y == 0 ? NAN : (y < 0 ? 0.0 : INFINITY);
  if (x == 1) return std::isinf(y) ? NAN : 1.0;
  return std::pow((double)x, (double)y);
}

// ------------------------------------------------------------ unary tests

template <class F, class R>
Stat unaryStandard(F f, R ref) {
  Stat st;
  sweep(st, f, ref);
  runSpecials(st, f, ref);
  return st;
}

#define CHECK_BOUND(st, name, bound) \
  do {                               \
    (st).report(name, bound);        \
    EXPECT_LE((st).maxErr, bound);   \
  } while (0)

// Floats nearest to k*pi/2 (hard for the argument reduction), k < 2^20,
// and a few huge multiples.
std::vector<float> nearPiOver2() {
  std::vector<float> v;
  for (int k = 1; k < (1 << 20); k = k * 5 / 4 + 1) v.push_back((float)(k * M_PI_2));
  for (float x : {0x1.921fb6p+0f, 0x1.921fb6p+1f, 0x1.2d97c8p+3f, 0x1.f6a7a2p+12f,
                  0x1.5c3c8p+97f, 0x1.b33faep+126f, 0x1.7c3ae4p+18f})
    v.push_back(x);
  return v;
}

float sinF(float x) { return M::sin(x); }
float cosF(float x) { return M::cos(x); }

TEST(LibmAccuracy, Sin) {
  auto ref = [](float x) { return std::sin((double)x); };
  Stat st = unaryStandard(sinF, ref);
  uniform(st, sinF, ref, -10.0f, 10.0f, 200000);
  uniform(st, sinF, ref, -5000.0f, 5000.0f, 100000);
  around(st, sinF, ref, nearPiOver2(), 8);
  CHECK_BOUND(st, "sin", 4.0);
  EXPECT_SAME(M::sin(0.0f), 0.0f);
  EXPECT_SAME(M::sin(-0.0f), -0.0f);
  EXPECT_SAME(M::sin(kInf), kNaN);
  EXPECT_SAME(M::sin(-kInf), kNaN);
  EXPECT_SAME(M::sin(kNaN), kNaN);
  EXPECT_SAME(M::sin(FLT_TRUE_MIN), FLT_TRUE_MIN);
  EXPECT_SAME(M::sin(-0x1p-30f), -0x1p-30f);
}

TEST(LibmAccuracy, Cos) {
  auto ref = [](float x) { return std::cos((double)x); };
  Stat st = unaryStandard(cosF, ref);
  uniform(st, cosF, ref, -10.0f, 10.0f, 200000);
  uniform(st, cosF, ref, -5000.0f, 5000.0f, 100000);
  around(st, cosF, ref, nearPiOver2(), 8);
  CHECK_BOUND(st, "cos", 4.0);
  EXPECT_SAME(M::cos(0.0f), 1.0f);
  EXPECT_SAME(M::cos(-0.0f), 1.0f);
  EXPECT_SAME(M::cos(kInf), kNaN);
  EXPECT_SAME(M::cos(kNaN), kNaN);
}

TEST(LibmAccuracy, SinCos) {
  auto fs = [](float x) { float c; return M::sincos(x, c); };
  auto fc = [](float x) { float c; M::sincos(x, c); return c; };
  auto rs = [](float x) { return std::sin((double)x); };
  auto rc = [](float x) { return std::cos((double)x); };
  Stat s, c;
  for (uint64_t i = 17; i < (1ull << 32); i += kStride) {
    float x = fromBits((uint32_t)i), co;
    float si = M::sincos(x, co);
    s.add(x, 0, si, rs(x));
    c.add(x, 0, co, rc(x));
  }
  runSpecials(s, fs, rs);
  runSpecials(c, fc, rc);
  uniform(s, fs, rs, -10.0f, 10.0f, 50000);
  uniform(c, fc, rc, -10.0f, 10.0f, 50000);
  CHECK_BOUND(s, "sincos (sin)", 4.0);
  CHECK_BOUND(c, "sincos (cos)", 4.0);
  // sincos must agree with sin and cos bit for bit.
  for (uint64_t i = 5; i < (1ull << 32); i += 65537 * 3) {
    float x = fromBits((uint32_t)i), co;
    float si = M::sincos(x, co);
    ASSERT_TRUE(same(si, M::sin(x))) << fmt(x);
    ASSERT_TRUE(same(co, M::cos(x))) << fmt(x);
  }
  float co;
  EXPECT_SAME(M::sincos(-0.0f, co), -0.0f);
  EXPECT_SAME(co, 1.0f);
  EXPECT_SAME(M::sincos(kInf, co), kNaN);
  EXPECT_SAME(co, kNaN);
}

TEST(LibmAccuracy, Tan) {
  auto f = [](float x) { return M::tan(x); };
  auto ref = [](float x) { return std::tan((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -10.0f, 10.0f, 200000);
  uniform(st, f, ref, -5000.0f, 5000.0f, 100000);
  around(st, f, ref, nearPiOver2(), 8);
  CHECK_BOUND(st, "tan", 6.0);
  EXPECT_SAME(M::tan(0.0f), 0.0f);
  EXPECT_SAME(M::tan(-0.0f), -0.0f);
  EXPECT_SAME(M::tan(kInf), kNaN);
  EXPECT_SAME(M::tan(kNaN), kNaN);
}

// Integers and half-integers, where the *pi functions have exact results.
std::vector<float> piGrid() {
  std::vector<float> v;
  for (int i = -40; i <= 40; ++i) v.push_back(i * 0.5f);
  for (float x : {0x1p22f, 0x1p22f + 0.5f, 0x1p23f - 0.5f, 0x1p23f, 0x1p23f + 1.0f, 0x1p24f,
                  0x1p24f + 2.0f, 0x1p30f, FLT_MAX, 12345.5f, 1234567.0f, 4194303.5f}) {
    v.push_back(x);
    v.push_back(-x);
  }
  return v;
}

TEST(LibmAccuracy, SinPi) {
  auto f = [](float x) { return M::sinpi(x); };
  Stat st = unaryStandard(f, refSinpi);
  uniform(st, f, refSinpi, -4.0f, 4.0f, 200000);
  around(st, f, refSinpi, piGrid(), 16);
  CHECK_BOUND(st, "sinpi", 4.0);
  for (float x : piGrid()) {
    if (x == std::floor(x)) {   // sinpi(+n) = +0, sinpi(-n) = -0
      EXPECT_SAME(M::sinpi(x), std::copysign(0.0f, x)) << fmt(x);
    }
  }
  EXPECT_SAME(M::sinpi(0.5f), 1.0f);
  EXPECT_SAME(M::sinpi(-0.5f), -1.0f);
  EXPECT_SAME(M::sinpi(1.5f), -1.0f);
  EXPECT_SAME(M::sinpi(-0.0f), -0.0f);
  EXPECT_SAME(M::sinpi(kInf), kNaN);
  EXPECT_SAME(M::sinpi(kNaN), kNaN);
}

TEST(LibmAccuracy, CosPi) {
  auto f = [](float x) { return M::cospi(x); };
  Stat st = unaryStandard(f, refCospi);
  uniform(st, f, refCospi, -4.0f, 4.0f, 200000);
  around(st, f, refCospi, piGrid(), 16);
  CHECK_BOUND(st, "cospi", 4.0);
  for (float x : piGrid()) {
    if (x != std::floor(x)) {   // cospi(n + 1/2) = +0
      EXPECT_SAME(M::cospi(x), 0.0f) << fmt(x);
    } else {
      EXPECT_SAME(M::cospi(x), std::fmod(std::fabs(x), 2.0f) == 0 ? 1.0f : -1.0f) << fmt(x);
    }
  }
  EXPECT_SAME(M::cospi(-0.0f), 1.0f);
  EXPECT_SAME(M::cospi(kInf), kNaN);
  EXPECT_SAME(M::cospi(kNaN), kNaN);
}

TEST(LibmAccuracy, TanPi) {
  auto f = [](float x) { return M::tanpi(x); };
  Stat st = unaryStandard(f, refTanpi);
  uniform(st, f, refTanpi, -4.0f, 4.0f, 200000);
  around(st, f, refTanpi, piGrid(), 16);
  CHECK_BOUND(st, "tanpi", 6.0);
  // C23 F.10.1.14: tanpi(n) = +0 for positive even and negative odd n, -0 for
  // positive odd and negative even; tanpi(n + 1/2) = +inf for even n, -inf for odd n.
  for (float x : piGrid()) {
    float fl = std::floor(x);
    bool nOdd = std::fmod(std::fabs(fl), 2.0f) == 1.0f;
    if (x == fl) {
      EXPECT_SAME(M::tanpi(x), (nOdd != (x < 0)) ? -0.0f : 0.0f) << fmt(x);
    } else {
      EXPECT_SAME(M::tanpi(x), nOdd ? -kInf : kInf) << fmt(x);
    }
  }
  EXPECT_SAME(M::tanpi(0.0f), 0.0f);
  EXPECT_SAME(M::tanpi(-0.0f), -0.0f);
  EXPECT_SAME(M::tanpi(0.25f), 1.0f);
  EXPECT_SAME(M::tanpi(-0.25f), -1.0f);
  EXPECT_SAME(M::tanpi(kInf), kNaN);
  EXPECT_SAME(M::tanpi(kNaN), kNaN);
}

TEST(LibmAccuracy, Asin) {
  auto f = [](float x) { return M::asin(x); };
  auto ref = [](float x) { return std::asin((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -1.0f, 1.0f, 300000);
  around(st, f, ref, {-1.0f, -0.5f, 0.5f, 1.0f}, 4096);
  CHECK_BOUND(st, "asin", 4.0);
  EXPECT_SAME(M::asin(0.0f), 0.0f);
  EXPECT_SAME(M::asin(-0.0f), -0.0f);
  EXPECT_SAME(M::asin(1.0f), (float)M_PI_2);
  EXPECT_SAME(M::asin(-1.0f), -(float)M_PI_2);
  EXPECT_SAME(M::asin(1.0000001f), kNaN);
  EXPECT_SAME(M::asin(-kInf), kNaN);
  EXPECT_SAME(M::asin(kNaN), kNaN);
}

TEST(LibmAccuracy, Acos) {
  auto f = [](float x) { return M::acos(x); };
  auto ref = [](float x) { return std::acos((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -1.0f, 1.0f, 300000);
  around(st, f, ref, {-1.0f, -0.5f, 0.5f, 1.0f}, 4096);
  CHECK_BOUND(st, "acos", 4.0);
  EXPECT_SAME(M::acos(1.0f), 0.0f);
  EXPECT_SAME(M::acos(-1.0f), (float)M_PI);
  EXPECT_SAME(M::acos(0.0f), (float)M_PI_2);
  EXPECT_SAME(M::acos(-0.0f), (float)M_PI_2);
  EXPECT_SAME(M::acos(-1.0000001f), kNaN);
  EXPECT_SAME(M::acos(kInf), kNaN);
  EXPECT_SAME(M::acos(kNaN), kNaN);
}

TEST(LibmAccuracy, Atan) {
  auto f = [](float x) { return M::atan(x); };
  auto ref = [](float x) { return std::atan((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -10.0f, 10.0f, 200000);
  around(st, f, ref, {0.4375f, 0.6875f, 1.0f, 1 / 0.6875f, 1 / 0.4375f, 0x1p26f}, 256);
  CHECK_BOUND(st, "atan", 5.0);
  EXPECT_SAME(M::atan(0.0f), 0.0f);
  EXPECT_SAME(M::atan(-0.0f), -0.0f);
  EXPECT_SAME(M::atan(kInf), (float)M_PI_2);
  EXPECT_SAME(M::atan(-kInf), -(float)M_PI_2);
  EXPECT_SAME(M::atan(1.0f), (float)M_PI_4);
  EXPECT_SAME(M::atan(kNaN), kNaN);
}

TEST(LibmAccuracy, Atan2) {
  auto ref = [](float y, float x) { return std::atan2((double)y, (double)x); };
  Stat st;
  st.binary = true;
  auto add = [&](float y, float x) { st.add(y, x, M::atan2(y, x), ref(y, x)); };
  std::uniform_int_distribution<uint32_t> anyBits;
  for (int i = 0; i < 600000; ++i) add(fromBits(anyBits(rng())), fromBits(anyBits(rng())));
  std::uniform_real_distribution<float> u(-10.0f, 10.0f);
  for (int i = 0; i < 400000; ++i) add(u(rng()), u(rng()));
  // Ratios near the reduction breakpoints and near 1, at many scales.
  std::uniform_real_distribution<float> r(0.3f, 1.0f);
  for (int i = 0; i < 200000; ++i) {
    float x = logUniform(-149, 128, true);
    float y = x * r(rng());
    add(y, x);
    add(x, y);
  }
  for (float a : {0.0f, -0.0f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, FLT_TRUE_MIN, -FLT_TRUE_MIN, kInf,
                  -kInf, kNaN})
    for (float b : {0.0f, -0.0f, 1.0f, -1.0f, FLT_MAX, -FLT_MAX, FLT_TRUE_MIN, -FLT_TRUE_MIN,
                    kInf, -kInf, kNaN})
      add(a, b);
  CHECK_BOUND(st, "atan2", 6.0);
  const float pi = (float)M_PI, pi2 = (float)M_PI_2, pi4 = (float)M_PI_4;
  EXPECT_SAME(M::atan2(0.0f, -0.0f), pi);
  EXPECT_SAME(M::atan2(-0.0f, -0.0f), -pi);
  EXPECT_SAME(M::atan2(0.0f, 0.0f), 0.0f);
  EXPECT_SAME(M::atan2(-0.0f, 0.0f), -0.0f);
  EXPECT_SAME(M::atan2(0.0f, -1.0f), pi);
  EXPECT_SAME(M::atan2(-0.0f, -1.0f), -pi);
  EXPECT_SAME(M::atan2(0.0f, 1.0f), 0.0f);
  EXPECT_SAME(M::atan2(-0.0f, 1.0f), -0.0f);
  EXPECT_SAME(M::atan2(-1.0f, 0.0f), -pi2);
  EXPECT_SAME(M::atan2(-1.0f, -0.0f), -pi2);
  EXPECT_SAME(M::atan2(1.0f, 0.0f), pi2);
  EXPECT_SAME(M::atan2(1.0f, -kInf), pi);
  EXPECT_SAME(M::atan2(-1.0f, -kInf), -pi);
  EXPECT_SAME(M::atan2(1.0f, kInf), 0.0f);
  EXPECT_SAME(M::atan2(-1.0f, kInf), -0.0f);
  EXPECT_SAME(M::atan2(kInf, 5.0f), pi2);
  EXPECT_SAME(M::atan2(-kInf, -5.0f), -pi2);
  EXPECT_SAME(M::atan2(kInf, -kInf), (float)(3 * M_PI_4));
  EXPECT_SAME(M::atan2(-kInf, -kInf), -(float)(3 * M_PI_4));
  EXPECT_SAME(M::atan2(kInf, kInf), pi4);
  EXPECT_SAME(M::atan2(-kInf, kInf), -pi4);
  EXPECT_SAME(M::atan2(kNaN, 1.0f), kNaN);
  EXPECT_SAME(M::atan2(1.0f, kNaN), kNaN);
}

TEST(LibmAccuracy, Sinh) {
  auto f = [](float x) { return M::sinh(x); };
  auto ref = [](float x) { return std::sinh((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -12.0f, 12.0f, 200000);
  uniform(st, f, ref, -90.0f, 90.0f, 100000);
  around(st, f, ref, {1.0f, -1.0f, 10.0f, 89.41598f, -89.41598f}, 256);
  CHECK_BOUND(st, "sinh", 4.0);
  EXPECT_SAME(M::sinh(0.0f), 0.0f);
  EXPECT_SAME(M::sinh(-0.0f), -0.0f);
  EXPECT_SAME(M::sinh(kInf), kInf);
  EXPECT_SAME(M::sinh(-kInf), -kInf);
  EXPECT_SAME(M::sinh(90.0f), kInf);
  EXPECT_SAME(M::sinh(kNaN), kNaN);
}

TEST(LibmAccuracy, Cosh) {
  auto f = [](float x) { return M::cosh(x); };
  auto ref = [](float x) { return std::cosh((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -12.0f, 12.0f, 200000);
  uniform(st, f, ref, -90.0f, 90.0f, 100000);
  around(st, f, ref, {10.0f, 89.41598f, -89.41598f}, 256);
  CHECK_BOUND(st, "cosh", 4.0);
  EXPECT_SAME(M::cosh(0.0f), 1.0f);
  EXPECT_SAME(M::cosh(-0.0f), 1.0f);
  EXPECT_SAME(M::cosh(kInf), kInf);
  EXPECT_SAME(M::cosh(-kInf), kInf);
  EXPECT_SAME(M::cosh(kNaN), kNaN);
}

TEST(LibmAccuracy, Tanh) {
  auto f = [](float x) { return M::tanh(x); };
  auto ref = [](float x) { return std::tanh((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -10.0f, 10.0f, 300000);
  around(st, f, ref, {0.55f, -0.55f, 9.1f}, 256);
  CHECK_BOUND(st, "tanh", 6.0);
  EXPECT_SAME(M::tanh(0.0f), 0.0f);
  EXPECT_SAME(M::tanh(-0.0f), -0.0f);
  EXPECT_SAME(M::tanh(kInf), 1.0f);
  EXPECT_SAME(M::tanh(-kInf), -1.0f);
  EXPECT_SAME(M::tanh(kNaN), kNaN);
}

TEST(LibmAccuracy, Asinh) {
  auto f = [](float x) { return M::asinh(x); };
  auto ref = [](float x) { return std::asinh((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -10.0f, 10.0f, 200000);
  logRange(st, f, ref, -14, 14, true, 200000);
  CHECK_BOUND(st, "asinh", 4.0);
  EXPECT_SAME(M::asinh(0.0f), 0.0f);
  EXPECT_SAME(M::asinh(-0.0f), -0.0f);
  EXPECT_SAME(M::asinh(kInf), kInf);
  EXPECT_SAME(M::asinh(-kInf), -kInf);
  EXPECT_SAME(M::asinh(kNaN), kNaN);
}

TEST(LibmAccuracy, Acosh) {
  auto f = [](float x) { return M::acosh(x); };
  auto ref = [](float x) { return std::acosh((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, 1.0f, 10.0f, 200000);
  logRange(st, f, ref, 0, 14, false, 200000);
  around(st, f, ref, {1.0f}, 20000);
  CHECK_BOUND(st, "acosh", 4.0);
  EXPECT_SAME(M::acosh(1.0f), 0.0f);
  EXPECT_SAME(M::acosh(kInf), kInf);
  EXPECT_SAME(M::acosh(0.9999999f), kNaN);
  EXPECT_SAME(M::acosh(-kInf), kNaN);
  EXPECT_SAME(M::acosh(kNaN), kNaN);
}

TEST(LibmAccuracy, Atanh) {
  auto f = [](float x) { return M::atanh(x); };
  auto ref = [](float x) { return std::atanh((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -1.0f, 1.0f, 300000);
  logRange(st, f, ref, -14, 0, true, 200000);
  around(st, f, ref, {-1.0f, 1.0f}, 20000);
  CHECK_BOUND(st, "atanh", 5.0);
  EXPECT_SAME(M::atanh(0.0f), 0.0f);
  EXPECT_SAME(M::atanh(-0.0f), -0.0f);
  EXPECT_SAME(M::atanh(1.0f), kInf);
  EXPECT_SAME(M::atanh(-1.0f), -kInf);
  EXPECT_SAME(M::atanh(1.0000001f), kNaN);
  EXPECT_SAME(M::atanh(kNaN), kNaN);
}

TEST(LibmAccuracy, Exp) {
  auto f = [](float x) { return M::exp(x); };
  auto ref = [](float x) { return std::exp((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -104.0f, 89.0f, 300000);
  uniform(st, f, ref, -1.0f, 1.0f, 100000);
  around(st, f, ref, {88.72284f, -87.33655f, -103.27893f, -103.97208f}, 1024);
  CHECK_BOUND(st, "exp", 4.0);
  EXPECT_SAME(M::exp(0.0f), 1.0f);
  EXPECT_SAME(M::exp(-0.0f), 1.0f);
  EXPECT_SAME(M::exp(kInf), kInf);
  EXPECT_SAME(M::exp(-kInf), 0.0f);
  EXPECT_SAME(M::exp(89.0f), kInf);
  EXPECT_SAME(M::exp(-105.0f), 0.0f);
  EXPECT_SAME(M::exp(kNaN), kNaN);
}

TEST(LibmAccuracy, Exp2) {
  auto f = [](float x) { return M::exp2(x); };
  auto ref = [](float x) { return std::exp2((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -151.0f, 128.0f, 300000);
  uniform(st, f, ref, -1.0f, 1.0f, 100000);
  around(st, f, ref, {128.0f, -126.0f, -149.0f, -150.0f}, 1024);
  CHECK_BOUND(st, "exp2", 4.0);
  for (int n = -149; n <= 127; ++n) EXPECT_SAME(M::exp2((float)n), std::ldexp(1.0f, n)) << n;
  EXPECT_SAME(M::exp2(128.0f), kInf);
  EXPECT_SAME(M::exp2(-151.0f), 0.0f);
  EXPECT_SAME(M::exp2(kInf), kInf);
  EXPECT_SAME(M::exp2(-kInf), 0.0f);
  EXPECT_SAME(M::exp2(kNaN), kNaN);
}

TEST(LibmAccuracy, Exp10) {
  auto f = [](float x) { return M::exp10(x); };
  auto ref = [](float x) { return std::pow(10.0, (double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, -46.0f, 39.0f, 300000);
  uniform(st, f, ref, -1.0f, 1.0f, 100000);
  around(st, f, ref, {38.53184f, -37.92978f, -44.85346f, -45.1545f}, 1024);
  CHECK_BOUND(st, "exp10", 4.0);
  float p = 1.0f;
  for (int n = 0; n <= 10; ++n, p *= 10.0f) EXPECT_SAME(M::exp10((float)n), p) << n;
  EXPECT_SAME(M::exp10(kInf), kInf);
  EXPECT_SAME(M::exp10(-kInf), 0.0f);
  EXPECT_SAME(M::exp10(kNaN), kNaN);
}

template <class F>
void logSpecials(F f) {
  EXPECT_SAME(f(0.0f), -kInf);
  EXPECT_SAME(f(-0.0f), -kInf);
  EXPECT_SAME(f(1.0f), 0.0f);
  EXPECT_SAME(f(-1.0f), kNaN);
  EXPECT_SAME(f(-FLT_TRUE_MIN), kNaN);
  EXPECT_SAME(f(kInf), kInf);
  EXPECT_SAME(f(-kInf), kNaN);
  EXPECT_SAME(f(kNaN), kNaN);
}

TEST(LibmAccuracy, Log) {
  auto f = [](float x) { return M::log(x); };
  auto ref = [](float x) { return std::log((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, 0.5f, 2.0f, 300000);
  around(st, f, ref, {1.0f, 0x1.6a09e6p+0f, 0x1.6a09e6p-1f}, 4096);
  CHECK_BOUND(st, "log", 4.0);
  logSpecials(f);
}

TEST(LibmAccuracy, Log2) {
  auto f = [](float x) { return M::log2(x); };
  auto ref = [](float x) { return std::log2((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, 0.5f, 2.0f, 300000);
  around(st, f, ref, {1.0f, 0x1.6a09e6p+0f, 0x1.6a09e6p-1f}, 4096);
  CHECK_BOUND(st, "log2", 4.0);
  logSpecials(f);
  for (int n = -149; n <= 127; ++n) EXPECT_SAME(M::log2(std::ldexp(1.0f, n)), (float)n) << n;
}

TEST(LibmAccuracy, Log10) {
  auto f = [](float x) { return M::log10(x); };
  auto ref = [](float x) { return std::log10((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, 0.5f, 2.0f, 300000);
  around(st, f, ref, {1.0f, 10.0f, 0x1.6a09e6p+0f, 0x1.6a09e6p-1f}, 4096);
  CHECK_BOUND(st, "log10", 4.0);
  logSpecials(f);
  float p = 1.0f;
  for (int n = 0; n <= 10; ++n, p *= 10.0f) EXPECT_SAME(M::log10(p), (float)n) << n;
}

TEST(LibmAccuracy, Rsqrt) {
  auto f = [](float x) { return M::rsqrt(x); };
  auto ref = [](float x) { return 1.0 / std::sqrt((double)x); };
  Stat st = unaryStandard(f, ref);
  uniform(st, f, ref, 0.25f, 4.0f, 300000);
  CHECK_BOUND(st, "rsqrt", 2.0);
  EXPECT_SAME(M::rsqrt(0.0f), kInf);
  EXPECT_SAME(M::rsqrt(-0.0f), -kInf);
  EXPECT_SAME(M::rsqrt(kInf), 0.0f);
  EXPECT_SAME(M::rsqrt(-1.0f), kNaN);
  EXPECT_SAME(M::rsqrt(-kInf), kNaN);
  EXPECT_SAME(M::rsqrt(kNaN), kNaN);
  EXPECT_SAME(M::rsqrt(4.0f), 0.5f);
  EXPECT_SAME(M::rsqrt(0x1p-148f), 0x1p74f);
}

// Table 36: rsqrt correctly rounded. Checked exactly in integers: the result
// y is right when x * m^2 is on the right side of 1 for both midpoints m
// between y and its neighbours (x = X 2^ex, m = M 2^em; ties to even). Every
// 997th positive float, and the input msl-conformance found 0.50000002 ulp off
// (0x1.13e07p+87, exact 0x1.5cc0a9000000bp-44: just above a midpoint).
TEST(LibmAccuracy, RsqrtIsCorrectlyRounded) {
  using u128 = unsigned __int128;
  auto decompose = [](float f, uint64_t &m, int &e) {
    uint32_t b;
    std::memcpy(&b, &f, 4);
    int be = int(b >> 23) & 0xff;
    m = be ? (b & 0x7fffffu) | 0x800000u : b & 0x7fffffu;
    e = be ? be - 150 : -149;
  };
  auto side = [](uint64_t X, int ex, uint64_t Mi, int em) { // sign of X Mi^2 2^(ex + 2 em) - 1
    u128 p = u128(X) * Mi * Mi;
    int k = -(ex + 2 * em);
    if (k < 0) return 1;
    if (k >= 128) return -1;
    u128 one = u128(1) << k;
    return p < one ? -1 : p > one ? 1 : 0;
  };
  auto correctlyRounded = [&](float x, float y) {
    uint64_t X, Y;
    int ex, ey;
    decompose(x, X, ex);
    decompose(y, Y, ey);
    int up = side(X, ex, 2 * Y + 1, ey - 1);
    int down = Y == 0x800000u ? side(X, ex, 4 * Y - 1, ey - 2) : side(X, ex, 2 * Y - 1, ey - 1);
    return (up > 0 || (up == 0 && !(Y & 1))) && (down < 0 || (down == 0 && !(Y & 1)));
  };
  EXPECT_SAME(M::rsqrt(0x1.13e07p+87f), 0x1.5cc0aap-44f);
  EXPECT_FALSE(correctlyRounded(0x1.13e07p+87f, 0x1.5cc0a8p-44f)) << "the check itself";
  size_t wrong = 0;
  for (uint32_t b = 1; b < 0x7f800000u; b += 997) {
    float x;
    std::memcpy(&x, &b, 4);
    if (!correctlyRounded(x, M::rsqrt(x)) && wrong++ < 5)
      ADD_FAILURE() << std::hexfloat << "rsqrt(" << x << ") = " << M::rsqrt(x) << " is not correctly rounded";
  }
  EXPECT_EQ(wrong, 0u);
}

// ------------------------------------------------------------ pow, powr

template <class F, class R>
Stat powFamily(F f, R ref, bool negativeX) {
  Stat st;
  st.binary = true;
  auto add = [&](float x, float y) { st.add(x, y, f(x, y), ref(x, y)); };
  auto sgn = [&](float v) { return negativeX && (rng()() & 1) ? -v : v; };
  std::uniform_int_distribution<uint32_t> anyBits;
  // Arbitrary bit patterns (mostly special/overflow/underflow behaviour).
  for (int i = 0; i < 300000; ++i) add(fromBits(anyBits(rng())), fromBits(anyBits(rng())));
  // Moderate x, y.
  std::uniform_real_distribution<float> ux(0.0f, 10.0f), uy(-30.0f, 30.0f);
  for (int i = 0; i < 300000; ++i) add(sgn(ux(rng())), uy(rng()));
  // x at any scale, y such that |y log2 x| stays within about 130.
  std::uniform_real_distribution<float> t(-155.0f, 130.0f);
  for (int i = 0; i < 300000; ++i) {
    float x = logUniform(-149, 128, false);
    float l2 = std::log2(x);
    if (l2 == 0) continue;
    add(sgn(x), t(rng()) / l2);
  }
  // x near 1 with huge |y| (tests the extra precision of log2).
  for (int i = 0; i < 200000; ++i) {
    float x = 1.0f + (float)(int)(rng()() % 2001 - 1000) * 0x1p-23f;
    float l2 = std::log2(x);
    if (l2 == 0) continue;
    add(x, t(rng()) / l2);
  }
  // Negative x with integer y (pow only); other combinations give NaN.
  if (negativeX) {
    std::uniform_int_distribution<int> yi(-40, 40);
    for (int i = 0; i < 100000; ++i) add(-ux(rng()), (float)yi(rng()));
  }
  return st;
}

TEST(LibmAccuracy, Pow) {
  auto f = [](float x, float y) { return M::pow(x, y); };
  auto ref = [](float x, float y) { return std::pow((double)x, (double)y); };
  Stat st = powFamily(f, ref, true);
  CHECK_BOUND(st, "pow", 16.0);
  // Exact results.
  EXPECT_SAME(M::pow(2.0f, 10.0f), 1024.0f);
  EXPECT_SAME(M::pow(2.0f, -149.0f), FLT_TRUE_MIN);
  EXPECT_SAME(M::pow(3.0f, 2.0f), 9.0f);
  EXPECT_SAME(M::pow(-2.0f, 3.0f), -8.0f);
  EXPECT_SAME(M::pow(-2.0f, -1.0f), -0.5f);
  EXPECT_SAME(M::pow(10.0f, 10.0f), 1e10f);
  EXPECT_SAME(M::pow(4.0f, 0.5f), 2.0f);
  EXPECT_SAME(M::pow(-8.0f, 1.0f / 3.0f), kNaN);
  // C99 F.9.4.4.
  for (float y : {-3.0f, -1.0f})   // odd integer y < 0
  {
    EXPECT_SAME(M::pow(0.0f, y), kInf);
    EXPECT_SAME(M::pow(-0.0f, y), -kInf);
    EXPECT_SAME(M::pow(-kInf, y), -0.0f);
  }
  for (float y : {-2.0f, -0.5f, -kInf, -FLT_MAX})   // y < 0, not an odd integer
  {
    EXPECT_SAME(M::pow(0.0f, y), kInf);
    EXPECT_SAME(M::pow(-0.0f, y), kInf);
    EXPECT_SAME(M::pow(-kInf, y), 0.0f);
  }
  for (float y : {1.0f, 3.0f})   // odd integer y > 0
  {
    EXPECT_SAME(M::pow(0.0f, y), 0.0f);
    EXPECT_SAME(M::pow(-0.0f, y), -0.0f);
    EXPECT_SAME(M::pow(-kInf, y), -kInf);
  }
  for (float y : {2.0f, 0.5f, kInf, FLT_MAX})   // y > 0, not an odd integer
  {
    EXPECT_SAME(M::pow(0.0f, y), 0.0f);
    EXPECT_SAME(M::pow(-0.0f, y), 0.0f);
    EXPECT_SAME(M::pow(-kInf, y), kInf);
  }
  EXPECT_SAME(M::pow(-1.0f, kInf), 1.0f);
  EXPECT_SAME(M::pow(-1.0f, -kInf), 1.0f);
  for (float y : {0.0f, -0.0f, 1.0f, kInf, -kInf, kNaN}) EXPECT_SAME(M::pow(1.0f, y), 1.0f);
  for (float x : {0.0f, -0.0f, 2.0f, -2.0f, kInf, -kInf, kNaN}) {
    EXPECT_SAME(M::pow(x, 0.0f), 1.0f);
    EXPECT_SAME(M::pow(x, -0.0f), 1.0f);
  }
  EXPECT_SAME(M::pow(-2.0f, 0.5f), kNaN);
  EXPECT_SAME(M::pow(0.5f, -kInf), kInf);
  EXPECT_SAME(M::pow(-0.5f, -kInf), kInf);
  EXPECT_SAME(M::pow(2.0f, -kInf), 0.0f);
  EXPECT_SAME(M::pow(-2.0f, -kInf), 0.0f);
  EXPECT_SAME(M::pow(0.5f, kInf), 0.0f);
  EXPECT_SAME(M::pow(-0.5f, kInf), 0.0f);
  EXPECT_SAME(M::pow(2.0f, kInf), kInf);
  EXPECT_SAME(M::pow(-2.0f, kInf), kInf);
  EXPECT_SAME(M::pow(kInf, -1.0f), 0.0f);
  EXPECT_SAME(M::pow(kInf, 0.5f), kInf);
  EXPECT_SAME(M::pow(kNaN, 1.0f), kNaN);
  EXPECT_SAME(M::pow(2.0f, kNaN), kNaN);
  EXPECT_SAME(M::pow(10.0f, 39.0f), kInf);
  EXPECT_SAME(M::pow(-10.0f, 39.0f), -kInf);
  EXPECT_SAME(M::pow(10.0f, -50.0f), 0.0f);
  EXPECT_SAME(M::pow(-10.0f, -51.0f), -0.0f);
}

TEST(LibmAccuracy, Powr) {
  auto f = [](float x, float y) { return M::powr(x, y); };
  Stat st = powFamily(f, refPowr, false);
  CHECK_BOUND(st, "powr", 16.0);
  // OpenCL powr special cases.
  for (float y : {0.0f, -0.0f}) {
    EXPECT_SAME(M::powr(2.0f, y), 1.0f);
    EXPECT_SAME(M::powr(0.0f, y), kNaN);
    EXPECT_SAME(M::powr(-0.0f, y), kNaN);
    EXPECT_SAME(M::powr(kInf, y), kNaN);
  }
  for (float x : {0.0f, -0.0f}) {
    EXPECT_SAME(M::powr(x, -1.0f), kInf);
    EXPECT_SAME(M::powr(x, -kInf), kInf);
    EXPECT_SAME(M::powr(x, 1.0f), 0.0f);
    EXPECT_SAME(M::powr(x, kInf), 0.0f);
  }
  EXPECT_SAME(M::powr(1.0f, 5.0f), 1.0f);
  EXPECT_SAME(M::powr(1.0f, kInf), kNaN);
  EXPECT_SAME(M::powr(1.0f, -kInf), kNaN);
  EXPECT_SAME(M::powr(-1.0f, 2.0f), kNaN);
  EXPECT_SAME(M::powr(-2.0f, 3.0f), kNaN);
  EXPECT_SAME(M::powr(kNaN, 0.0f), kNaN);
  EXPECT_SAME(M::powr(2.0f, kNaN), kNaN);
  EXPECT_SAME(M::powr(kInf, 1.0f), kInf);
  EXPECT_SAME(M::powr(kInf, -1.0f), 0.0f);
  EXPECT_SAME(M::powr(0.5f, kInf), 0.0f);
  EXPECT_SAME(M::powr(0.5f, -kInf), kInf);
  EXPECT_SAME(M::powr(2.0f, kInf), kInf);
  EXPECT_SAME(M::powr(2.0f, -kInf), 0.0f);
  EXPECT_SAME(M::powr(2.0f, 10.0f), 1024.0f);
}

}  // namespace
