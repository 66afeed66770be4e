//===- Inputs.cpp - The samples msl-conformance measures --------------------===//
#include "Inputs.h"

#include "Functions.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>

namespace msl::conformance {

Params chunkParams(const Batch &b, uint64_t offset) {
  Params p = b.params;
  if (p.mode == Params::kSweep) p.start += uint32_t(offset * p.stride);
  if (p.mode == Params::kHashed) p.start += uint32_t(offset);
  return p;
}

uint32_t bitsOf(const FloatFormat &f, double v) {
  if (f.isBinary32()) {
    float x = float(v);
    uint32_t b;
    std::memcpy(&b, &x, 4);
    return b;
  }
  uint32_t sign = std::signbit(v) ? 0x8000u : 0;
  if (std::isnan(v)) return 0x7e00u;
  double a = std::fabs(v);
  if (std::isinf(a)) return sign | 0x7c00u;
  if (a < f.minNormal()) return sign | uint32_t(a / f.minSubnormal());
  int e = f.binade(a);
  uint32_t m = uint32_t(a / std::ldexp(1.0, e - 10)) & 0x3ffu;
  return sign | uint32_t(e + 15) << 10 | m;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Distinct bit patterns in insertion order.
class Patterns {
public:
  explicit Patterns(const FloatFormat &f) : f_(f) {}
  void add(double v) {
    if (!std::isnan(v) && !std::isinf(v)) v = roundTo(f_, v, Rounding::NearestEven);
    uint32_t b = bitsOf(f_, v);
    if (seen_.insert(b).second) list_.push_back(b);
  }
  // v (rounded to the format) and its k neighbours on each side.
  void around(double v, int k) {
    v = roundTo(f_, v, Rounding::NearestEven);
    if (!std::isfinite(v)) return add(v);
    add(v);
    double up = v, down = v;
    for (int i = 0; i < k; ++i) {
      up = step(up, true);
      down = step(down, false);
      add(up);
      add(down);
    }
  }
  const std::vector<uint32_t> &list() const { return list_; }

private:
  double step(double v, bool upwards) {
    double next = roundTo(f_, upwards ? v + ulp(f_, v) / 2 : v - ulp(f_, v) / 2,
                          upwards ? Rounding::Up : Rounding::Down);
    if (next == v) next = roundTo(f_, upwards ? v + ulp(f_, v) : v - ulp(f_, v), Rounding::NearestEven);
    return next;
  }
  const FloatFormat &f_;
  std::set<uint32_t> seen_;
  std::vector<uint32_t> list_;
};

// Zeros, subnormals, the normal extremes, INF, NaN and everyday values.
std::vector<double> specialValues(const FloatFormat &f) {
  double sub = f.minSubnormal(), mn = f.minNormal(), mx = f.maxFinite();
  std::vector<double> v = {0.0, sub, 2 * sub, 3 * sub, mn / 2, mn - sub, mn, mn + ulp(f, mn),
                           0x1p-100, 0x1p-64, 0x1p-24, 0x1p-12, 1e-3, 0.1, 0.25, 1.0 / 3, 0.5,
                           0.75, 1.0, 1.5, 2.0, 2.5, 3.0, M_PI_4, M_PI_2, M_PI, 1.5 * M_PI, 2 * M_PI,
                           M_E, 10.0, 100.0, 1000.0, 1e4, 65504.0, 1e5, 0x1p22, 0x1p23, 0x1p24,
                           1e10, 0x1p64, 1e30, 0x1p126, 0x1p127, mx / 2, mx, kInf};
  std::vector<double> out;
  for (double x : v) {
    if (std::isfinite(x) && x > mx) continue;
    out.push_back(x);
    out.push_back(-x);
  }
  out.push_back(std::numeric_limits<double>::quiet_NaN());
  return out;
}

void addUnaryEdges(const FunctionInfo &fn, const FloatFormat &f, Patterns &p) {
  const double mx = f.maxFinite();
  if (fn.edges & kEdgeSpecial)
    for (double v : specialValues(f)) p.around(v, 3);
  if (fn.edges & kEdgeTrig) {
    // The floats nearest k * pi/2 (hard for the argument reduction).
    for (double k = 1; k < 0x1p24; k = std::floor(k * 1.25) + 1)
      for (double s : {1.0, -1.0}) p.around(s * k * M_PI_2, 4);
    for (double x : {0x1.921fb6p+0, 0x1.921fb6p+1, 0x1.2d97c8p+3, 0x1.f6a7a2p+12, 0x1.5c3c8p+97,
                     0x1.b33faep+126, 0x1.7c3ae4p+18, 0x1.fffffep+127})
      if (x <= mx) p.around(x, 4);
  }
  if (fn.edges & kEdgePi) {
    // Integers, half- and quarter-integers: the exact zeros, ones and poles.
    for (int i = -64; i <= 64; ++i) p.around(i * 0.25, 16);
    for (double x : {0x1p21, 0x1p22, 0x1p22 + 0.5, 0x1p23 - 0.5, 0x1p23, 0x1p23 + 1, 0x1p24, 0x1p24 + 2,
                     0x1p30, 12345.5, 1234567.0, 4194303.5, 1000.25, 2047.5, 1023.0, 1024.0})
      for (double s : {1.0, -1.0})
        if (x <= mx) p.around(s * x, 16);
  }
  if (fn.edges & kEdgeRounding) {
    for (int i = -80; i <= 80; ++i) p.around(i * 0.5, 4);
    for (double x : {0x1p22 - 0.5, 0x1p22 + 0.5, 0x1p23 - 0.5, 0x1p23, 0x1p23 + 1, 0x1p24, 1023.5, 2047.5,
                     1e6 + 0.5, 0x1p31, 0x1p63})
      for (double s : {1.0, -1.0})
        if (x <= mx) p.around(s * x, 4);
  }
  if (fn.edges & kEdgeExp) {
    // Overflow and underflow thresholds (log of max, min normal, min
    // subnormal in the function's base), and the integers.
    double base = fn.fn == Fn::Exp2 ? 2.0 : fn.fn == Fn::Exp10 ? 10.0 : M_E;
    double lb = std::log(base);
    for (double t : {std::log(mx), std::log(f.minNormal()), std::log(f.minSubnormal()),
                     std::log(f.minSubnormal() / 2)})
      for (double s : {1.0, -1.0}) p.around(s * t / lb, 64);
    for (int i = -160; i <= 160; ++i) p.add(i);
  }
  if (fn.edges & kEdgeLog) {
    p.around(1.0, 4096);
    for (int e = f.minExponent - f.precision + 1; e <= f.maxExponent; ++e) p.around(std::ldexp(1.0, e), 1);
    for (double t = 10; t <= mx; t *= 10) p.around(t, 1);
    for (double t = 0.1; t >= f.minSubnormal(); t /= 10) p.around(t, 1);
  }
  if (fn.edges & kEdgeUnit)
    for (double x : {1.0, -1.0, 0.5, -0.5}) p.around(x, 4096);
}

void addBinaryEdges(const FunctionInfo &fn, const FloatFormat &f, std::vector<uint32_t> &bits) {
  std::vector<double> v = specialValues(f);
  std::vector<double> second = v;
  if (fn.intSecondArg) {
    // ldexp's k is intArg(bits): pick bits that give these k.
    second.clear();
    for (int k : {-320, -300, -200, -160, -151, -150, -149, -148, -127, -126, -125, -25, -24, -15, -14,
                  -1, 0, 1, 14, 15, 16, 126, 127, 128, 254, 255, 300, 320})
      second.push_back(k);
  }
  for (double a : v)
    for (double b : second) {
      bits.push_back(bitsOf(f, a));
      bits.push_back(fn.intSecondArg ? uint32_t(int(b) + 320) : bitsOf(f, b));
    }
}

void addTernaryEdges(const FloatFormat &f, std::vector<uint32_t> &bits) {
  double sub = f.minSubnormal(), mn = f.minNormal(), mx = f.maxFinite();
  std::vector<double> v = {0.0, -0.0, sub, -sub, mn, -mn, 1.0, -1.0, 1.5, -2.0, 3.0, 0x1p-12,
                           mx, -mx, kInf, -kInf, std::numeric_limits<double>::quiet_NaN()};
  for (double a : v)
    for (double b : v)
      for (double c : v) {
        bits.push_back(bitsOf(f, a));
        bits.push_back(bitsOf(f, b));
        bits.push_back(bitsOf(f, c));
      }
}

// Random values of the format from their parts.
struct FormatRandom {
  const FloatFormat &f;
  std::mt19937_64 &rng;
  uint32_t mantissaBits() const { return uint32_t(f.precision - 1); }
  // Sign s, binade e (normal), random significand.
  double normal(int e, bool negative) {
    e = std::clamp(e, f.minExponent, f.maxExponent);
    uint64_t m = rng() & ((1ull << mantissaBits()) - 1);
    double v = std::ldexp(double(m | (1ull << mantissaBits())), e - int(mantissaBits()));
    return negative ? -v : v;
  }
  bool coin() { return rng() & 1; }
  int uniformInt(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); }
  double anyFinite() {
    for (;;) {
      uint32_t b = uint32_t(rng());
      if (f.precision != kBinary32.precision) b &= 0xffffu;
      double v = valueOf(f, b);
      if (std::isfinite(v)) return v;
    }
  }
};

void addFocused(const FunctionInfo &fn, const FloatFormat &f, uint64_t count, uint32_t seed,
                std::vector<uint32_t> &bits) {
  std::mt19937_64 rng(seed ^ (uint64_t(fn.fn) << 32));
  FormatRandom r{f, rng};
  auto push = [&](double v) { bits.push_back(bitsOf(f, roundTo(f, v, Rounding::NearestEven))); };
  for (uint64_t i = 0; i < count; ++i) {
    switch (fn.focus) {
    case Focus::CloseExponents: {
      // Exponents within 30 binades: cancellation and rounding in +, -, fmod, atan2, ...
      double x = r.anyFinite();
      double y = r.normal(f.binade(x) + r.uniformInt(-30, 30), r.coin());
      if (r.coin()) std::swap(x, y);
      push(x);
      push(y);
      break;
    }
    case Focus::Pow: {
      // x at any scale, y such that |y log2 x| stays within the range; some
      // x near 1 with large y; for pow, negative x with integer y.
      double x, y;
      int kind = r.uniformInt(0, 9);
      if (kind < 6) {
        x = r.normal(r.uniformInt(f.minExponent - 1, f.maxExponent), false);
        if (x == 0) x = f.minNormal();
        double l = std::log2(x);
        y = l == 0 ? r.uniform(-100, 100) : r.uniform(f.minExponent - f.precision - 4, f.maxExponent + 3) / l;
      } else if (kind < 8) {
        x = 1.0 + r.uniformInt(-2000, 2000) * std::ldexp(1.0, 1 - f.precision);
        double l = std::log2(x);
        y = l == 0 ? 1e6 : r.uniform(f.minExponent - f.precision - 4, f.maxExponent + 3) / l;
      } else {
        x = r.normal(r.uniformInt(-8, 8), fn.fn == Fn::Pow);
        y = r.uniformInt(-40, 40);
      }
      push(x);
      push(y);
      break;
    }
    case Focus::Fma: {
      // c near -(a*b): cancellation, where only a fused, correctly rounded
      // fma gets the low bits right.
      double a = r.normal(r.uniformInt(f.minExponent / 2, f.maxExponent / 2), r.coin());
      double b = r.normal(r.uniformInt(f.minExponent / 2, f.maxExponent / 2), r.coin());
      double p = a * b;
      double c = r.coin() ? -roundTo(f, p, Rounding::NearestEven)
                          : r.normal(f.binade(std::fabs(p)) + r.uniformInt(-f.precision - 2, 2), r.coin());
      if (r.coin() && std::isfinite(c)) c += r.uniformInt(-4, 4) * ulp(f, c);
      push(a);
      push(b);
      push(c);
      break;
    }
    case Focus::None: return;
    }
  }
}

} // namespace

std::vector<Batch> planSamples(const FunctionInfo &fn, const FloatFormat &f, const PlanOptions &o) {
  std::vector<Batch> plan;
  const bool isHalf = f.precision != kBinary32.precision;
  const uint64_t all32 = 1ull << 32;

  // Edge cases, explicit.
  Batch edges;
  edges.what = "edge cases";
  edges.params.mode = Params::kExplicit;
  if (fn.arity == 1) {
    Patterns p(f);
    addUnaryEdges(fn, f, p);
    edges.bits = p.list();
  } else if (fn.arity == 2) {
    addBinaryEdges(fn, f, edges.bits);
  } else {
    addTernaryEdges(f, edges.bits);
  }
  edges.count = edges.bits.size() / fn.arity;
  plan.push_back(std::move(edges));

  // The bulk. A sweep takes every stride-th pattern (the stride odd, so the
  // low bits vary too) over the whole range: for a unary float all 2^32 with
  // --exhaustive; for half all 2^16 values always, and 2^32 pairs of a
  // binary function with --exhaustive. Other float functions take hashed
  // random patterns.
  auto sweep = [&](uint64_t space, uint64_t n) {
    Batch b;
    b.what = n >= space ? "every pattern" : "sweep";
    b.params.mode = Params::kSweep;
    n = std::min(n, space);
    uint64_t stride = std::max<uint64_t>(1, space / n);
    if (stride > 1 && stride % 2 == 0) --stride;
    b.params.stride = uint32_t(stride);
    b.params.start = n >= space ? 0 : o.seed % uint32_t(stride);
    b.count = n;
    plan.push_back(b);
  };
  if (fn.arity == 1 && isHalf) {
    sweep(1u << 16, 1u << 16);
  } else if (fn.arity == 1) {
    sweep(all32, o.exhaustive ? all32 : o.samples);
  } else if (fn.arity == 2 && isHalf) {
    sweep(all32, o.exhaustive ? all32 : o.samples);
  } else {
    Batch b;
    b.what = "random";
    b.params.mode = Params::kHashed;
    b.params.seed = o.seed * 2654435761u + uint32_t(fn.fn);
    b.count = std::min<uint64_t>(o.samples, all32);
    plan.push_back(b);
  }

  // Focused samples: a quarter of the bulk.
  if (fn.focus != Focus::None) {
    Batch b;
    b.what = "focused";
    b.params.mode = Params::kExplicit;
    addFocused(fn, f, std::max<uint64_t>(o.samples / 4, 1024), o.seed, b.bits);
    b.count = b.bits.size() / fn.arity;
    plan.push_back(std::move(b));
  }
  return plan;
}

} // namespace msl::conformance
