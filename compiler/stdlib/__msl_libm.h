// __msl_libm.h: accurate single-precision math for metal::precise:: (and the
// default functions under -fno-fast-math) on targets without a libm (NVPTX).
//
// Plain C++17 over float only, so it also compiles on the host for the
// accuracy test (tests/compiler/LibmAccuracyTest.cpp). No double anywhere:
// Metal has none. Extra precision comes from float-float ("ff") arithmetic.
//
// Robustness rules the code follows, because these functions are inlined into
// kernels built with -ffast-math and -ffp-contract=fast:
//  * A rounded product whose rounding error is used elsewhere is never added
//    to anything: the backend may fuse that add into an fma, which would use
//    the unrounded product and count the error twice. Products that feed an
//    add inside an error-free transform are exact instead (mul_exact splits
//    its operands by masking, Cody-Waite constants have short mantissas), and
//    then contraction changes nothing. All other contractions only add
//    accuracy.
//  * Divisions and square roots are followed by an fma residual correction,
//    so an approximate (not correctly rounded) div/sqrt costs nothing.
//  * NaN/Inf are classified on the bit pattern (cannot be folded away under
//    finite-math assumptions) and NaN results are a constant quiet NaN, not
//    x + x; zero tests use float compares, so a flushed subnormal counts as
//    zero.
#ifndef __MSL_LIBM_H
#define __MSL_LIBM_H

#ifdef __clang__
// Keep reassociation and other fast-math rewrites out of the range reductions
// and error-free transforms even when the including TU uses -ffast-math.
// Clang 19 ignores float_control on targets without strict-FP support (NVPTX,
// unless -Xclang -fexperimental-strict-floating-point), hence the silenced
// warning and the per-function `clang fp reassociate(off)`, which every
// target honours and which is scoped to each function body.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wignored-pragmas"
#pragma float_control(precise, on, push)
#pragma clang diagnostic pop
#define __MSL_LIBM_PRECISE _Pragma("clang fp reassociate(off)")
#else
#define __MSL_LIBM_PRECISE
#endif

#define __MSL_LIBM_FN inline __attribute__((always_inline))
// The public functions are called, not inlined: a float4 sin is then four
// calls of one copy rather than four copies (compile time), and the caller
// keeps its own fast-math settings while these run precisely.
#define __MSL_LIBM_API inline __attribute__((noinline))

namespace __msl_libm {
namespace detail {

typedef unsigned u32;
struct ff { float hi, lo; };       // unevaluated sum hi + lo

__MSL_LIBM_FN u32 bits(float x) { return __builtin_bit_cast(u32, x); }
__MSL_LIBM_FN float from_bits(u32 u) { return __builtin_bit_cast(float, u); }
__MSL_LIBM_FN float fma_(float a, float b, float c) {
  __MSL_LIBM_PRECISE
  return __builtin_fmaf(a, b, c);
}
__MSL_LIBM_FN float fabs_(float x) { return __builtin_fabsf(x); }
__MSL_LIBM_FN float copysign_(float a, float b) { return __builtin_copysignf(a, b); }
__MSL_LIBM_FN float inf_() { return from_bits(0x7f800000u); }
__MSL_LIBM_FN float qnan_() { return from_bits(0x7fc00000u); }
__MSL_LIBM_FN bool isnan_(float x) { return (bits(x) & 0x7fffffffu) > 0x7f800000u; }
__MSL_LIBM_FN bool isinf_(float x) { return (bits(x) & 0x7fffffffu) == 0x7f800000u; }
__MSL_LIBM_FN bool nonfinite_(float x) { return (bits(x) & 0x7fffffffu) >= 0x7f800000u; }
__MSL_LIBM_FN bool signbit_(float x) { return (bits(x) >> 31) != 0u; }
// Sign flip / sign transfer on the bits: robust where -0 matters (no-signed-
// zeros rewrites cannot touch integer ops).
__MSL_LIBM_FN float neg_if(float x, bool c) { return from_bits(bits(x) ^ (c ? 0x80000000u : 0u)); }
__MSL_LIBM_FN float pos_zero_if_zero(float x) { return from_bits(x == 0.0f ? 0u : bits(x)); }

// 2^n for -126 <= n <= 127.
__MSL_LIBM_FN float pow2i(int n) { return from_bits((u32)(n + 127) << 23); }

// v * 2^k, rounded once even when the result is subnormal (the first step
// keeps it normal and exact); overflows to inf, underflows to 0.
__MSL_LIBM_FN float scale(float v, int k) {
  __MSL_LIBM_PRECISE
  if (k > 127) {
    v *= 0x1p127f;
    k -= 127;
    if (k > 127) k = 127;
  } else if (k < -126) {
    if (k < -180) k = -180;
    v *= pow2i(k + 64);
    k = -64;
  }
  return v * pow2i(k);
}

// Error-free transforms. Only adds and subtracts: contraction cannot apply.
__MSL_LIBM_FN ff two_sum(float a, float b) {
  __MSL_LIBM_PRECISE
  float s = a + b;
  float bb = s - a;
  float e = (a - (s - bb)) + (b - bb);
  return {s, e};
}
// Needs |a| >= |b| or a == 0.
__MSL_LIBM_FN ff fast_two_sum(float a, float b) {
  __MSL_LIBM_PRECISE
  float s = a + b;
  float e = b - (s - a);
  return {s, e};
}

// Upper 12 significant bits of a (by masking: no arithmetic to contract).
__MSL_LIBM_FN float hi12(float a) { return from_bits(bits(a) & 0xfffff000u); }

// a * b = hi + lo (to ~2^-47 relative) from exact 12x12-bit partial products,
// so a fused multiply-add anywhere in here gives the same result.
__MSL_LIBM_FN ff mul_exact(float a, float b) {
  __MSL_LIBM_PRECISE
  float ah = hi12(a), al = a - ah;
  float bh = hi12(b), bl = b - bh;
  ff m = two_sum(ah * bl, al * bh);
  ff r = fast_two_sum(ah * bh, m.hi);
  r.lo += m.lo + al * bl;
  return r;
}

// (nh + nl) / (dh + dl). The first quotient may be inexact (approximate div);
// the fma residual fixes it.
__MSL_LIBM_FN ff div_ff(float nh, float nl, float dh, float dl) {
  __MSL_LIBM_PRECISE
  float q = nh / dh;
  float r = (fma_(-q, dh, nh) + nl) - q * dl;
  return fast_two_sum(q, r / dh);
}

// sqrt(h + l) for h > 0, as ff.
__MSL_LIBM_FN ff sqrt_ff(float h, float l) {
  __MSL_LIBM_PRECISE
  float s = __builtin_sqrtf(h);
  float c = (fma_(-s, s, h) + l) / (s + s);
  return fast_two_sum(s, c);
}

// ---------------------------------------------------------------- constants
// ff splits of the irrational constants (hi = nearest float, lo = remainder).
const float PIO2_hi = 0x1.921fb6p+0f, PIO2_lo = -0x1.777a5cp-25f;
const float PI_hi = 0x1.921fb6p+1f, PI_lo = -0x1.777a5cp-24f;
const float PIO4_hi = 0x1.921fb6p-1f, PIO4_lo = -0x1.777a5cp-26f;
const float LOG2E_hi = 0x1.715476p+0f, LOG2E_lo = 0x1.4ae0c0p-26f;     // 1/ln2
const float LOG2_10_hi = 0x1.a934f0p+1f, LOG2_10_lo = 0x1.2f346ep-24f;
const float INVLN10_hi = 0x1.bcb7b2p-2f, INVLN10_lo = -0x1.5b235ep-27f;
const float LN2_hi = 0x1.62e430p-1f, LN2_lo = -0x1.05c610p-29f;
// ln2 and log10(2) with a 16-bit head, so e * head is exact for any exponent.
const float LN2_16_hi = 0x1.62e4p-1f, LN2_16_lo = 0x1.7f7d1cp-20f;
const float LG2_16_hi = 0x1.3442p-2f, LG2_16_lo = -0x1.95ec10p-19f;
const float TWO3_hi = 0x1.555556p-1f, TWO3_lo = -0x1.555556p-26f;      // 2/3
const float ATAN_HALF_hi = 0x1.dac670p-2f, ATAN_HALF_lo = 0x1.586ed4p-28f;
// pi/2 in 12-bit pieces for Cody-Waite: k * P1..P4 is exact for |k| < 2^12.
const float CW_P1 = 0x1.922p+0f, CW_P2 = -0x1.2aep-18f, CW_P3 = -0x1.deap-31f,
            CW_P4 = 0x1.184p-44f, CW_P5 = 0x1.a62634p-58f;

// ---------------------------------------------------------------- exp core
struct exp_t { int k; float hi, lo; };   // 2^t = 2^k * (hi + lo)

// 2^(th + tl) for |th| <= ~200 (callers clamp). th must not be a bare
// product (it comes from mul_exact or an input), so th - k stays exact.
__MSL_LIBM_FN exp_t exp2_core(float th, float tl) {
  __MSL_LIBM_PRECISE
  float kf = __builtin_rintf(th);
  ff r = fast_two_sum(th - kf, tl);        // th - kf is exact; |r| <= 0.5
  // 2^r - 1 = r*ln2 (ff) + r^2 * P(r); Taylor terms (r ln2)^n/n!, n = 2..9:
  // truncation < 2^-32 on |r| <= 0.5.
  float x = r.hi;
  float p = 0x1.b5253ep-24f;
  p = fma_(p, x, 0x1.62c022p-20f);
  p = fma_(p, x, 0x1.ffcbfcp-17f);
  p = fma_(p, x, 0x1.430912p-13f);
  p = fma_(p, x, 0x1.5d87fep-10f);
  p = fma_(p, x, 0x1.3b2ab6p-7f);
  p = fma_(p, x, 0x1.c6b08ep-5f);
  p = fma_(p, x, 0x1.ebfbe0p-3f);
  ff a = mul_exact(x, LN2_hi);
  a.lo += fma_(x, LN2_lo, r.lo * LN2_hi);
  ff q = fast_two_sum(a.hi, x * x * p);
  q.lo += a.lo;
  ff v = fast_two_sum(1.0f, q.hi);
  v.lo += q.lo;
  return {(int)kf, v.hi, v.lo};
}

// e^a as an ff value (for sinh/cosh/tanh, 0 <= a <= ~20): exact rescale.
__MSL_LIBM_FN ff exp_ff(float a) {
  __MSL_LIBM_PRECISE
  ff t = mul_exact(a, LOG2E_hi);
  t.lo += a * LOG2E_lo;
  exp_t e = exp2_core(t.hi, t.lo);
  float s = pow2i(e.k);
  return {e.hi * s, e.lo * s};
}

// ---------------------------------------------------------------- log core
struct log_t { float e; float hi, lo; };   // ln(x) = e*ln2 + (hi + lo)

// x positive, finite, non-zero (subnormals are rescaled).
__MSL_LIBM_FN log_t log_core(float x) {
  __MSL_LIBM_PRECISE
  u32 ix = bits(x);
  int e = 0;
  if (ix < 0x00800000u) {
    ix = bits(x * 0x1p24f);
    e = -24;
  }
  e += (int)(ix >> 23) - 127;
  float m = from_bits((ix & 0x007fffffu) | 0x3f800000u);   // [1, 2)
  if (m > 0x1.6a09e6p+0f) {                                 // > sqrt(2)
    m *= 0.5f;
    e += 1;
  }
  float f = m - 1.0f;                       // exact, f in [-0.293, 0.414]
  // ln(1+f) = 2 atanh(s), s = f/(2+f) = 2s + 2s^3/3 + s^5 R(s^2)
  float dh = 2.0f + f;
  float dl = f - (dh - 2.0f);
  float sh = f / dh;
  float sl = ((fma_(-sh, dh, f)) - sh * dl) / dh;
  ff z = mul_exact(sh, sh);
  z.lo = fma_(2.0f * sh, sl, z.lo);
  ff c = mul_exact(z.hi, sh);              // s^3
  c.lo += fma_(z.lo, sh, z.hi * sl);
  ff t = mul_exact(c.hi, TWO3_hi);         // 2 s^3 / 3
  t.lo += fma_(c.hi, TWO3_lo, c.lo * TWO3_hi);
  float w = z.hi;                          // <= 0.0295
  float R = 0x1.3b13b2p-3f;                // 2/13 .. 2/5 (Taylor; < 2^-27 rel)
  R = fma_(R, w, 0x1.745d18p-3f);
  R = fma_(R, w, 0x1.c71c72p-3f);
  R = fma_(R, w, 0x1.24924ap-2f);
  R = fma_(R, w, 0x1.99999ap-2f);
  float rest = c.hi * w * R;
  ff h = fast_two_sum(2.0f * sh, t.hi);
  h.lo += (t.lo + 2.0f * sl) + rest;
  h = fast_two_sum(h.hi, h.lo);
  return {(float)e, h.hi, h.lo};
}

// ln as float from a log_t, plus a small extra term (e.g. ln(1 + lo/hi)).
__MSL_LIBM_FN float log_combine(log_t l, float extra) {
  __MSL_LIBM_PRECISE
  ff r = two_sum(l.e * LN2_16_hi, l.hi);   // product exact
  r.lo += l.lo + fma_(l.e, LN2_16_lo, extra);
  return r.hi + r.lo;
}

// log2 as ff (about 2^-40 relative), for pow.
__MSL_LIBM_FN ff log2_ff(log_t l) {
  __MSL_LIBM_PRECISE
  ff u = mul_exact(l.hi, LOG2E_hi);
  u.lo += fma_(l.hi, LOG2E_lo, l.lo * LOG2E_hi);
  ff a = two_sum(l.e, u.hi);
  a.lo += u.lo;
  return fast_two_sum(a.hi, a.lo);
}

// ---------------------------------------------------------------- trig core
struct red_t { int q; float hi, lo; };   // x = q*pi/2 + (hi + lo), |hi| <~ pi/4

__MSL_LIBM_FN u32 mulhi32(u32 a, u32 b) {
  __MSL_LIBM_PRECISE
  u32 al = a & 0xffffu, ah = a >> 16, bl = b & 0xffffu, bh = b >> 16;
  u32 lh = al * bh, hl = ah * bl;
  u32 mid = ((al * bl) >> 16) + (lh & 0xffffu) + (hl & 0xffffu);
  return ah * bh + (lh >> 16) + (hl >> 16) + (mid >> 16);
}

// Payne-Hanek for |x| >= 2^12: x * 2/pi with 128 bits of 2/pi aligned to x's
// exponent, all in 32-bit integers. The fraction is good to 2^-71 absolute,
// ample for the closest float to a multiple of pi/2.
__MSL_LIBM_FN red_t reduce_large(float x) {
  __MSL_LIBM_PRECISE
  // 2/pi in 32-bit words after one zero word (so the start index is >= 0).
  const u32 tbl[8] = {0u,          0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u,
                      0xF534DDC0u, 0xDB629599u, 0x3C439041u, 0xFE5163ABu};
  u32 ix = bits(x) & 0x7fffffffu;
  int e = (int)(ix >> 23) - 150 + 32;      // |x| = m * 2^(e-32)
  u32 m = (ix & 0x007fffffu) | 0x00800000u;
  int w0 = (e - 2) >> 5;                   // word holding the 2^1 bit of the product
  int sa = e - 2 - 32 * w0;                // 0..31
  u32 W0 = tbl[w0], W1 = tbl[w0 + 1], W2 = tbl[w0 + 2], W3 = tbl[w0 + 3];
  // Low 128 bits of m * (W0 W1 W2 W3); the top limb only holds multiples of 4.
  u32 L4 = m * W3;
  u32 lo2 = m * W2, L3 = mulhi32(m, W3) + lo2;
  u32 c3 = L3 < lo2 ? 1u : 0u;
  u32 lo1 = m * W1, L2 = mulhi32(m, W2) + lo1;
  u32 c2 = L2 < lo1 ? 1u : 0u;
  L2 += c3;
  c2 += L2 < c3 ? 1u : 0u;
  u32 L1 = mulhi32(m, W1) + m * W0 + c2;
  // Shift so that the two integer bits (quadrant) are the top of Y0.
  u32 Y0 = (L1 << sa) | ((L2 >> 1) >> (31 - sa));
  u32 Y1 = (L2 << sa) | ((L3 >> 1) >> (31 - sa));
  u32 Y2 = (L3 << sa) | ((L4 >> 1) >> (31 - sa));
  u32 Y3 = L4 << sa;
  int q = (int)(Y0 >> 30);
  u32 Z0 = (Y0 << 2) | (Y1 >> 30), Z1 = (Y1 << 2) | (Y2 >> 30), Z2 = (Y2 << 2) | (Y3 >> 30);
  // Fraction = a + b + c, each 24 bits and exact in float.
  float a = (float)(Z0 >> 8) * 0x1p-24f;
  float b = (float)(((Z0 & 0xffu) << 16) | (Z1 >> 16)) * 0x1p-48f;
  float c = (float)(((Z1 & 0xffffu) << 8) | (Z2 >> 24)) * 0x1p-72f;
  if (a >= 0.5f) {                         // centre the fraction on 0
    a -= 1.0f;
    q += 1;
  }
  ff f = two_sum(a, b);
  f = fast_two_sum(f.hi, f.lo + c);
  ff r = mul_exact(f.hi, PIO2_hi);
  r.lo += fma_(f.hi, PIO2_lo, f.lo * PIO2_hi);
  r = fast_two_sum(r.hi, r.lo);
  bool neg = signbit_(x);
  return {(neg ? -q : q) & 3, neg ? -r.hi : r.hi, neg ? -r.lo : r.lo};
}

// x finite.
__MSL_LIBM_FN red_t reduce_pio2(float x) {
  __MSL_LIBM_PRECISE
  float ax = fabs_(x);
  if (ax <= 0x1.921fb6p-1f) return {0, x, 0.0f};
  if (ax >= 0x1p12f) return reduce_large(x);
  // Cody-Waite: every k*P1..P4 is exact and each step is an exact two_sum,
  // so r is good to ~2^-60 absolute.
  float k = __builtin_rintf(x * 0x1.45f306p-1f);
  float a = x - k * CW_P1;                 // exact
  ff h1 = two_sum(a, -k * CW_P2);
  ff h2 = two_sum(h1.hi, -k * CW_P3);
  ff h3 = two_sum(h2.hi, -k * CW_P4);
  float lo = ((h1.lo + h2.lo) + h3.lo) - k * CW_P5;
  ff r = fast_two_sum(h3.hi, lo);
  return {(int)k & 3, r.hi, r.lo};
}

// sin(rh + rl) = rh + lo, |rh| <~ pi/4. Taylor to x^13 (< 2^-36 there).
__MSL_LIBM_FN ff sin_k(float rh, float rl) {
  __MSL_LIBM_PRECISE
  float z = rh * rh;
  float s = -0x1.ae6456p-26f;
  s = fma_(s, z, 0x1.71de3ap-19f);
  s = fma_(s, z, -0x1.a01a02p-13f);
  s = fma_(s, z, 0x1.111112p-7f);
  s = fma_(s, z, -0x1.555556p-3f);
  float lo = fma_(rh * z, s, fma_(-0.5f * z, rl, rl));   // rl * cos(rh)
  return {rh, lo};
}

// cos(rh + rl) = hi + lo. 1 - z/2 is split exactly; Taylor to x^12.
__MSL_LIBM_FN ff cos_k(float rh, float rl) {
  __MSL_LIBM_PRECISE
  ff z2 = mul_exact(rh, rh);
  float zl = fma_(2.0f * rh, rl, z2.lo);
  float z = z2.hi;
  float hz = 0.5f * z;
  float w = 1.0f - hz;
  float c = 0x1.1eed8ep-29f;
  c = fma_(c, z, -0x1.27e4fcp-22f);
  c = fma_(c, z, 0x1.a01a02p-16f);
  c = fma_(c, z, -0x1.6c16c2p-10f);
  c = fma_(c, z, 0x1.555556p-5f);
  float lo = ((1.0f - w) - hz) + fma_(z * z, c, -0.5f * zl);
  return {w, lo};
}

__MSL_LIBM_FN float sum(ff v) {
  __MSL_LIBM_PRECISE
  return v.hi + v.lo;
}
__MSL_LIBM_FN ff norm(ff v) { return fast_two_sum(v.hi, v.lo); }

// tan of a reduced argument: quadrant parity picks tan or -cot.
__MSL_LIBM_FN float tan_from(int q, float rh, float rl) {
  __MSL_LIBM_PRECISE
  ff s = norm(sin_k(rh, rl));
  ff c = norm(cos_k(rh, rl));
  ff n = s, d = c;
  if (q & 1) {
    n = {-c.hi, -c.lo};
    d = s;
  }
  return sum(div_ff(n.hi, n.lo, d.hi, d.lo));
}

// |x| mod 2 = j/2 + r, |r| <= 1/4 (all exact).
struct redpi_t { int q; float r; };
__MSL_LIBM_FN redpi_t reduce_pi(float a) {
  __MSL_LIBM_PRECISE
  float y = a - 2.0f * __builtin_floorf(a * 0.5f);
  float j = __builtin_rintf(2.0f * y);
  return {(int)j & 3, y - 0.5f * j};
}
__MSL_LIBM_FN ff pi_mul(float r) {
  __MSL_LIBM_PRECISE
  ff t = mul_exact(r, PI_hi);
  t.lo = fma_(r, PI_lo, t.lo);
  return t;
}

// --------------------------------------------------------------- atan core
// atan(num/den) as ff, 0 <= num <= den, den normal and < 2^121.
// Reduce with atan(t) = atan(c) + atan((t-c)/(1+tc)), c in {0, 1/2, 1};
// the new argument is formed straight from num and den (exactly where it
// matters) so the ratio is never rounded twice. |u| <= 7/16.
__MSL_LIBM_FN ff atan_core(float num, float den) {
  __MSL_LIBM_PRECISE
  float t = num / den;
  float ch = 0.0f, cl = 0.0f, n = num, dh = den, dl = 0.0f;
  if (t >= 0.4375f) {
    ff d;
    if (t < 0.6875f) {
      ch = ATAN_HALF_hi;
      cl = ATAN_HALF_lo;
      n = num - 0.5f * den;                // exact (Sterbenz)
      d = two_sum(den, 0.5f * num);
    } else {
      ch = PIO4_hi;
      cl = PIO4_lo;
      n = num - den;                       // exact (Sterbenz)
      d = two_sum(den, num);
    }
    dh = d.hi;
    dl = d.lo;
  }
  ff u = div_ff(n, 0.0f, dh, dl);
  float z = u.hi * u.hi;
  // atan(u) = u + u z A(z), A near-minimax (Chebyshev fit) on [0, 0.1914].
  float A = -0x1.39b60ap-5f;
  A = fma_(A, z, 0x1.1fe196p-4f);
  A = fma_(A, z, -0x1.71029cp-4f);
  A = fma_(A, z, 0x1.c6e4b4p-4f);
  A = fma_(A, z, -0x1.24916ap-3f);
  A = fma_(A, z, 0x1.999996p-3f);
  A = fma_(A, z, -0x1.555556p-2f);
  float tail = fma_(u.hi * z, A, fma_(-z, u.lo, u.lo));  // + u.lo/(1+z)
  ff h = fast_two_sum(ch, u.hi);
  h.lo += cl + tail;
  return h;
}

// (ch + cl) - a for ch >= a.
__MSL_LIBM_FN ff sub_from(float ch, float cl, ff a) {
  __MSL_LIBM_PRECISE
  ff h = fast_two_sum(ch, -a.hi);
  h.lo += cl - a.lo;
  return h;
}

// asin(x) = x + x z P(z), z = x^2 <= 1/4 (Chebyshev fit).
__MSL_LIBM_FN float asin_p(float z) {
  __MSL_LIBM_PRECISE
  float p = 0x1.fb7ca4p-6f;
  p = fma_(p, z, 0x1.5a80a0p-7f);
  p = fma_(p, z, 0x1.82db24p-6f);
  p = fma_(p, z, 0x1.efedf8p-6f);
  p = fma_(p, z, 0x1.6dc0f0p-5f);
  p = fma_(p, z, 0x1.33331ep-4f);
  p = fma_(p, z, 0x1.555556p-3f);
  return p;
}

// For |x| in (1/2, 1]: asin|x| = pi/2 - 2*(s + w); returns (s, w) with
// s = sqrt((1-|x|)/2) and w the remaining small part.
__MSL_LIBM_FN ff asin_big(float ax) {
  __MSL_LIBM_PRECISE
  float z = (1.0f - ax) * 0.5f;            // exact
  if (z == 0.0f) return {0.0f, 0.0f};
  ff s = sqrt_ff(z, 0.0f);
  return {s.hi, fma_(s.hi * z, asin_p(z), s.lo)};
}

// exp2(x * (m_hi + m_lo)) for exp and exp10 (m = log2(e), log2(10)), with
// their overflow and underflow thresholds in x.
__MSL_LIBM_FN float exp2_of_product(float x, float m_hi, float m_lo, float over, float under) {
  __MSL_LIBM_PRECISE
  if (isnan_(x)) return qnan_();
  if (x > over) return inf_();
  if (x < under) return 0.0f;
  ff t = mul_exact(x, m_hi);
  t.lo = fma_(x, m_lo, t.lo);
  exp_t e = exp2_core(t.hi, t.lo);
  return scale(e.hi + e.lo, e.k);
}

// The logarithms' special cases: NaN, 0 (-inf), negative (NaN), +inf.
// False for a positive finite x.
__MSL_LIBM_FN bool log_special(float x, float &result) {
  if (isnan_(x) || x < 0.0f) result = qnan_();
  else if (x == 0.0f) result = -inf_();
  else if (isinf_(x)) result = x;
  else return false;
  return true;
}

}  // namespace detail

// =================================================================== public

__MSL_LIBM_API float exp2(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  if (x >= 128.0f) return inf_();
  if (x < -151.0f) return 0.0f;
  exp_t e = exp2_core(x, 0.0f);
  return scale(e.hi + e.lo, e.k);
}

__MSL_LIBM_API float exp(float x) {
  __MSL_LIBM_PRECISE
  return detail::exp2_of_product(x, detail::LOG2E_hi, detail::LOG2E_lo, 89.0f, -104.0f);
}

__MSL_LIBM_API float exp10(float x) {
  __MSL_LIBM_PRECISE
  return detail::exp2_of_product(x, detail::LOG2_10_hi, detail::LOG2_10_lo, 39.0f, -46.0f);
}

__MSL_LIBM_API float log(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (float special; log_special(x, special)) return special;
  return log_combine(log_core(x), 0.0f);
}

__MSL_LIBM_API float log2(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (float special; log_special(x, special)) return special;
  return sum(log2_ff(log_core(x)));
}

__MSL_LIBM_API float log10(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (float special; log_special(x, special)) return special;
  log_t l = log_core(x);
  ff u = mul_exact(l.hi, INVLN10_hi);
  u.lo += fma_(l.hi, INVLN10_lo, l.lo * INVLN10_hi);
  ff a = two_sum(l.e * LG2_16_hi, u.hi);   // product exact
  a.lo += u.lo + l.e * LG2_16_lo;
  return a.hi + a.lo;
}

namespace detail {
// |x|^y for finite x > 0, finite y != 0: exp2(y * log2 x) in ff.
__MSL_LIBM_FN float pow_core(float ax, float y) {
  __MSL_LIBM_PRECISE
  ff l = log2_ff(log_core(ax));
  float ta = y * l.hi;                     // only for the range check
  if (ta > 200.0f) return inf_();
  if (ta < -200.0f) return 0.0f;
  ff t = mul_exact(y, l.hi);
  t.lo = fma_(y, l.lo, t.lo);
  exp_t e = exp2_core(t.hi, t.lo);
  return scale(e.hi + e.lo, e.k);
}
}  // namespace detail

// C99 F.9.4.4 semantics.
__MSL_LIBM_API float pow(float x, float y) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  // NaN first, on the bits, so that no-NaNs assumptions cannot misroute it.
  if (isnan_(y)) return bits(x) == 0x3f800000u ? 1.0f : qnan_();
  if (isnan_(x)) return y == 0.0f ? 1.0f : qnan_();
  if (y == 0.0f || x == 1.0f) return 1.0f;
  float ax = fabs_(x), ay = fabs_(y);
  // 0: not an integer, 1: odd integer, 2: even integer
  int yint = 0;
  if (ay >= 0x1p24f) yint = 2;
  else if (__builtin_truncf(y) == y) yint = ((int)ay & 1) ? 1 : 2;
  if (isinf_(y)) {
    if (ax == 1.0f) return 1.0f;             // (-1)^inf
    return ((ax > 1.0f) == (y > 0.0f)) ? inf_() : 0.0f;
  }
  bool odd = yint == 1;
  if (x == 0.0f) {
    float r = y < 0.0f ? inf_() : 0.0f;
    return odd ? copysign_(r, x) : r;
  }
  if (isinf_(x)) {
    float r = y < 0.0f ? 0.0f : inf_();
    return neg_if(r, signbit_(x) && odd);
  }
  if (x < 0.0f && yint == 0) return qnan_();
  return neg_if(pow_core(ax, y), x < 0.0f && odd);
}

// OpenCL powr: x >= 0 only.
__MSL_LIBM_API float powr(float x, float y) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x) || isnan_(y)) return qnan_();
  if (x < 0.0f) return qnan_();
  if (x == 0.0f) {
    if (y == 0.0f) return qnan_();
    return y < 0.0f ? inf_() : 0.0f;
  }
  if (isinf_(x)) {
    if (y == 0.0f) return qnan_();
    return y < 0.0f ? 0.0f : inf_();
  }
  if (x == 1.0f) return isinf_(y) ? qnan_() : 1.0f;
  if (y == 0.0f) return 1.0f;
  if (isinf_(y)) return ((x > 1.0f) == (y > 0.0f)) ? inf_() : 0.0f;
  return pow_core(x, y);
}

// Correct rounding of rsqrt, which the spec requires: y is within 0.5 ulp
// plus a little of 1/sqrt(x); the exact result lies beyond the midpoint m
// between y and a neighbour exactly when x*m^2 is on the other side of 1,
// decided in integers (x and y normal). Ties cannot occur for a float x
// other than a power of 4 (where y is exact), but are rounded to even.
namespace detail {
typedef unsigned long u64; // 64 bits in OpenCL C++, and on the LP64 hosts that run the accuracy test
// Sign of X * M^2 * 2^e - 1 (X < 2^24, M < 2^27), exactly.
__MSL_LIBM_FN int cmp_one(u64 X, u64 M, int e) {
  u64 m2 = M * M; // < 2^54
  u64 hiPart = X * (m2 >> 32), loPart = X * (m2 & 0xffffffffu); // < 2^46, < 2^56
  // p = hiPart * 2^32 + loPart as (hi, lo) 64-bit words.
  u64 lo = loPart + (hiPart << 32);
  u64 hi = (hiPart >> 32) + (lo < loPart ? 1u : 0u);
  int k = -e; // compare p with 2^k
  if (k < 0) return 1;
  if (k >= 128) return -1;
  u64 khi = k >= 64 ? u64(1) << (k - 64) : 0, klo = k < 64 ? u64(1) << k : 0;
  if (hi != khi) return hi < khi ? -1 : 1;
  if (lo != klo) return lo < klo ? -1 : 1;
  return 0;
}
__MSL_LIBM_FN float round_rsqrt_exactly(float x, float y) {
  u32 xb = bits(x), yb = bits(y);
  u64 X = (xb & 0x7fffffu) | 0x800000u, Y = (yb & 0x7fffffu) | 0x800000u;
  int ex = int((xb >> 23) & 0xffu) - 150, ey = int((yb >> 23) & 0xffu) - 150;
  // Above: m = (2Y + 1) * 2^(ey - 1); x*m^2 < 1 means the exact result is past it.
  int up = cmp_one(X, 2 * Y + 1, ex + 2 * (ey - 1));
  if (up < 0 || (up == 0 && (Y & 1u)))
    return from_bits(yb + 1u);
  // Below: the spacing halves at a power of two.
  bool binadeStart = Y == 0x800000u;
  int down = binadeStart ? cmp_one(X, 4 * Y - 1, ex + 2 * (ey - 2)) : cmp_one(X, 2 * Y - 1, ex + 2 * (ey - 1));
  if (down > 0 || (down == 0 && (Y & 1u)))
    return from_bits(yb - 1u);
  return y;
}
} // namespace detail

__MSL_LIBM_API float rsqrt(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  if (x == 0.0f) return copysign_(inf_(), x);
  if (x < 0.0f) return qnan_();
  if (isinf_(x)) return 0.0f;
  // Keep x*y^2 away from under/overflow.
  float s = 1.0f;
  if (x < 0x1p-100f) {
    x *= 0x1p100f;
    s = 0x1p50f;
  } else if (x > 0x1p100f) {
    x *= 0x1p-100f;
    s = 0x1p-50f;
  }
  float y = 1.0f / __builtin_sqrtf(x);
  // One Newton step on an accurately computed residual 1 - x*y^2: within
  // 0.5 ulp plus about 2^-25 of the exact result.
  ff y2 = mul_exact(y, y);
  float t = fma_(-x, y2.lo, fma_(-x, y2.hi, 1.0f));
  y = fma_(0.5f * y, t, y);
  return round_rsqrt_exactly(x, y) * s;
}

__MSL_LIBM_API float sin(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (nonfinite_(x)) return qnan_();
  if (x == 0.0f) return x;
  red_t r = reduce_pio2(x);
  ff v = (r.q & 1) ? cos_k(r.hi, r.lo) : sin_k(r.hi, r.lo);
  return neg_if(sum(v), (r.q & 2) != 0);
}

__MSL_LIBM_API float cos(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (nonfinite_(x)) return qnan_();
  red_t r = reduce_pio2(x);
  int n = r.q + 1;
  ff v = (n & 1) ? cos_k(r.hi, r.lo) : sin_k(r.hi, r.lo);
  return neg_if(sum(v), (n & 2) != 0);
}

// Returns sin(x), stores cos(x) in c.
__MSL_LIBM_API float sincos(float x, float &c) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (nonfinite_(x)) {
    c = qnan_();
    return qnan_();
  }
  red_t r = reduce_pio2(x);
  float s0 = sum(sin_k(r.hi, r.lo));
  float c0 = sum(cos_k(r.hi, r.lo));
  if (x == 0.0f) s0 = x;
  float s = (r.q & 1) ? c0 : s0;
  float co = (r.q & 1) ? s0 : c0;
  c = neg_if(co, ((r.q + 1) & 2) != 0);
  return neg_if(s, (r.q & 2) != 0);
}

__MSL_LIBM_API float tan(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (nonfinite_(x)) return qnan_();
  if (x == 0.0f) return x;
  red_t r = reduce_pio2(x);
  return tan_from(r.q, r.hi, r.lo);
}

// sinpi(n) = +0 for positive integers n, -0 for negative (C23/IEEE 754).
__MSL_LIBM_API float sinpi(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (nonfinite_(x)) return qnan_();
  if (x == 0.0f) return x;
  float a = fabs_(x);
  if (a < 0x1p-20f) return fma_(x, PI_hi, x * PI_lo);   // pi x; cubic term < 2^-38
  redpi_t p = reduce_pi(a);
  ff t = pi_mul(p.r);
  ff v = (p.q & 1) ? cos_k(t.hi, t.lo) : sin_k(t.hi, t.lo);
  float y = pos_zero_if_zero(neg_if(sum(v), (p.q & 2) != 0));
  return neg_if(y, signbit_(x));
}

// cospi(n + 1/2) = +0.
__MSL_LIBM_API float cospi(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (nonfinite_(x)) return qnan_();
  float a = fabs_(x);
  if (a < 0x1p-20f) return 1.0f;
  redpi_t p = reduce_pi(a);
  ff t = pi_mul(p.r);
  int n = p.q + 1;
  ff v = (n & 1) ? cos_k(t.hi, t.lo) : sin_k(t.hi, t.lo);
  return pos_zero_if_zero(neg_if(sum(v), (n & 2) != 0));
}

// tanpi(n) = +0 for positive even / negative odd n, -0 otherwise;
// tanpi(n + 1/2) = +inf for even n, -inf for odd n (C23 F.10.1.14).
__MSL_LIBM_API float tanpi(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (nonfinite_(x)) return qnan_();
  if (x == 0.0f) return x;
  float a = fabs_(x);
  if (a < 0x1p-20f) return fma_(x, PI_hi, x * PI_lo);
  redpi_t p = reduce_pi(a);
  float y;
  if (p.r == 0.0f) {
    if (p.q & 1) y = neg_if(inf_(), p.q == 3);
    else y = neg_if(0.0f, p.q == 2);
  } else {
    ff t = pi_mul(p.r);
    y = tan_from(p.q, t.hi, t.lo);
  }
  return neg_if(y, signbit_(x));
}

__MSL_LIBM_API float asin(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  float a = fabs_(x);
  if (a > 1.0f) return qnan_();
  if (x == 0.0f) return x;
  if (a <= 0.5f) {
    float z = x * x;
    return fma_(x * z, asin_p(z), x);
  }
  ff s = asin_big(a);
  ff h = fast_two_sum(PIO2_hi, -2.0f * s.hi);
  h.lo += PIO2_lo - 2.0f * s.lo;
  return copysign_(sum(h), x);
}

__MSL_LIBM_API float acos(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  float a = fabs_(x);
  if (a > 1.0f) return qnan_();
  if (a <= 0.5f) {
    float z = x * x;
    ff h = fast_two_sum(PIO2_hi, -x);
    h.lo += PIO2_lo - x * z * asin_p(z);
    return sum(h);
  }
  ff s = asin_big(a);
  if (x > 0.0f) return 2.0f * (s.hi + s.lo);
  ff h = fast_two_sum(PI_hi, -2.0f * s.hi);
  h.lo += PI_lo - 2.0f * s.lo;
  return sum(h);
}

__MSL_LIBM_API float atan(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  if (x == 0.0f) return x;
  float a = fabs_(x);
  if (a > 0x1p26f) return copysign_(PIO2_hi, x);   // includes inf
  ff r = (a <= 1.0f) ? atan_core(a, 1.0f) : sub_from(PIO2_hi, PIO2_lo, atan_core(1.0f, a));
  return copysign_(sum(r), x);
}

// C99 F.9.1.4 special cases.
__MSL_LIBM_API float atan2(float y, float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x) || isnan_(y)) return qnan_();
  float ax = fabs_(x), ay = fabs_(y);
  bool xneg = signbit_(x);
  if (ay == 0.0f) return copysign_(xneg ? PI_hi : 0.0f, y);
  if (ax == 0.0f) return copysign_(PIO2_hi, y);
  if (isinf_(ax) && isinf_(ay)) {
    ax = 1.0f;
    ay = 1.0f;
  }
  bool swap = ay > ax;
  float num = swap ? ax : ay, den = swap ? ay : ax;
  ff r = {0.0f, 0.0f};
  if (!isinf_(den)) {
    // Rescale both (ratio unchanged) so den is normal and den + num is finite.
    if (den < 0x1p-60f) {
      num *= 0x1p80f;
      den *= 0x1p80f;
    } else if (den > 0x1p120f) {
      num *= 0x1p-8f;
      den *= 0x1p-8f;
    }
    r = atan_core(num, den);
  }
  if (swap) r = sub_from(PIO2_hi, PIO2_lo, r);
  if (xneg) r = sub_from(PI_hi, PI_lo, r);
  return copysign_(sum(r), y);
}

__MSL_LIBM_API float sinh(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  if (x == 0.0f) return x;
  float a = fabs_(x);
  if (a < 1.0f) {
    // x + x z S(z), Taylor to x^13 (< 2^-32 on |x| < 1).
    float z = x * x;
    float s = 0x1.612462p-33f;
    s = fma_(s, z, 0x1.ae6456p-26f);
    s = fma_(s, z, 0x1.71de3ap-19f);
    s = fma_(s, z, 0x1.a01a02p-13f);
    s = fma_(s, z, 0x1.111112p-7f);
    s = fma_(s, z, 0x1.555556p-3f);
    return fma_(x * z, s, x);
  }
  if (a > 95.0f) return copysign_(inf_(), x);
  float r;
  if (a > 10.0f) {                         // e^-a below 2^-28 relative
    ff t = mul_exact(a, LOG2E_hi);
    t.lo = fma_(a, LOG2E_lo, t.lo);
    exp_t e = exp2_core(t.hi, t.lo);
    r = scale(e.hi + e.lo, e.k - 1);
  } else {
    ff E = exp_ff(a);
    ff i = div_ff(1.0f, 0.0f, E.hi, E.lo);
    ff d = two_sum(E.hi, -i.hi);
    d.lo += E.lo - i.lo;
    r = 0.5f * sum(d);
  }
  return copysign_(r, x);
}

__MSL_LIBM_API float cosh(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  float a = fabs_(x);
  if (a > 95.0f) return inf_();
  if (a > 10.0f) {
    ff t = mul_exact(a, LOG2E_hi);
    t.lo = fma_(a, LOG2E_lo, t.lo);
    exp_t e = exp2_core(t.hi, t.lo);
    return scale(e.hi + e.lo, e.k - 1);
  }
  ff E = exp_ff(a);
  ff i = div_ff(1.0f, 0.0f, E.hi, E.lo);
  ff d = two_sum(E.hi, i.hi);
  d.lo += E.lo + i.lo;
  return 0.5f * sum(d);
}

__MSL_LIBM_API float tanh(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  if (x == 0.0f) return x;
  float a = fabs_(x);
  if (a < 0.55f) {
    // x + x z T(z), Chebyshev fit on [0, 0.3025].
    float z = x * x;
    float p = -0x1.fa3d1cp-11f;
    p = fma_(p, z, 0x1.be44c4p-9f);
    p = fma_(p, z, -0x1.2136fep-7f);
    p = fma_(p, z, 0x1.663f2cp-6f);
    p = fma_(p, z, -0x1.ba1b3cp-5f);
    p = fma_(p, z, 0x1.111110p-3f);
    p = fma_(p, z, -0x1.555556p-2f);
    return fma_(x * z, p, x);
  }
  if (a > 9.1f) return copysign_(1.0f, x);   // 2e^-2a < 2^-25
  // 1 - 2/(e^2a + 1)
  ff E = exp_ff(2.0f * a);
  ff D = two_sum(E.hi, 1.0f);
  D.lo += E.lo;
  ff g = div_ff(2.0f, 0.0f, D.hi, D.lo);
  ff r = two_sum(1.0f, -g.hi);
  r.lo -= g.lo;
  return copysign_(sum(r), x);
}

__MSL_LIBM_API float asinh(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (nonfinite_(x)) return isnan_(x) ? qnan_() : x;   // NaN, +-inf
  if (x == 0.0f) return x;
  float a = fabs_(x);
  float r;
  if (a < 0x1p-12f) {
    r = fma_(a * a * a, -0x1.555556p-3f, a);   // a - a^3/6
  } else if (a > 0x1p12f) {
    log_t l = log_core(a);                     // ln(2a)
    l.e += 1.0f;
    r = log_combine(l, 0.0f);
  } else {
    // ln(a + sqrt(a^2 + 1)) with the argument in ff.
    ff a2 = mul_exact(a, a);
    ff u = two_sum(1.0f, a2.hi);
    u.lo += a2.lo;
    ff s = sqrt_ff(u.hi, u.lo);
    ff v = two_sum(a, s.hi);
    v.lo += s.lo;
    v = fast_two_sum(v.hi, v.lo);
    r = log_combine(log_core(v.hi), v.lo / v.hi);
  }
  return copysign_(r, x);
}

__MSL_LIBM_API float acosh(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  if (x < 1.0f) return qnan_();
  if (x == 1.0f) return 0.0f;
  if (isinf_(x)) return x;
  if (x > 0x1p12f) {
    log_t l = log_core(x);                     // ln(2x)
    l.e += 1.0f;
    return log_combine(l, 0.0f);
  }
  // ln(x + sqrt(x^2 - 1)); x^2 - 1 is exact in ff.
  ff p = mul_exact(x, x);
  ff u = two_sum(p.hi, -1.0f);
  u = fast_two_sum(u.hi, u.lo + p.lo);
  ff s = sqrt_ff(u.hi, u.lo);
  ff v = two_sum(x, s.hi);
  v.lo += s.lo;
  v = fast_two_sum(v.hi, v.lo);
  return log_combine(log_core(v.hi), v.lo / v.hi);
}

__MSL_LIBM_API float atanh(float x) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  if (isnan_(x)) return qnan_();
  float a = fabs_(x);
  if (a > 1.0f) return qnan_();
  if (a == 1.0f) return copysign_(inf_(), x);
  if (x == 0.0f) return x;
  float r;
  if (a < 0x1p-12f) {
    r = fma_(a * a * a, 0x1.555556p-2f, a);    // a + a^3/3
  } else {
    // ln((1+a)/(1-a)) / 2 with the quotient in ff.
    ff n = two_sum(1.0f, a);
    ff d = two_sum(1.0f, -a);
    ff q = div_ff(n.hi, n.lo, d.hi, d.lo);
    r = 0.5f * log_combine(log_core(q.hi), q.lo / q.hi);
  }
  return copysign_(r, x);
}

// fmod(x, y) = x - trunc(x / y) * y, exactly (the result is representable):
// long division of the significands, one quotient bit per step, at most
// 277 steps. x - y * trunc(x / y) in float arithmetic is not exact (and NVPTX
// lowers frem that way).
__MSL_LIBM_API float fmod(float x, float y) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  u32 ax = bits(x) & 0x7fffffffu, ay = bits(y) & 0x7fffffffu;
  if (ay == 0u || ay > 0x7f800000u || ax >= 0x7f800000u) return qnan_(); // y 0 or NaN, x INF or NaN
  if (ax < ay) return x;                                                  // |x| < |y|, y INF included
  u32 sign = bits(x) & 0x80000000u;
  if (ax == ay) return from_bits(sign);
  // |x| = mx * 2^(ex - 150), |y| = my * 2^(ey - 150), mx and my in [2^23, 2^24).
  int ex = int(ax >> 23), ey = int(ay >> 23);
  u32 mx = ax & 0x7fffffu, my = ay & 0x7fffffu;
  if (ex == 0) {
    for (ex = 1; mx < 0x800000u; --ex) mx <<= 1;
  } else {
    mx |= 0x800000u;
  }
  if (ey == 0) {
    for (ey = 1; my < 0x800000u; --ey) my <<= 1;
  } else {
    my |= 0x800000u;
  }
  // mx stays below 2 * my < 2^25.
  for (; ex > ey; --ex) {
    if (mx >= my) mx -= my;
    mx <<= 1;
  }
  if (mx >= my) mx -= my;
  if (mx == 0u) return from_bits(sign);
  for (; mx < 0x800000u; --ey) mx <<= 1;
  if (ey >= 1) return from_bits(sign | u32(ey) << 23 | (mx & 0x7fffffu));
  return from_bits(sign | (mx >> (1 - ey))); // a multiple of 2^-149: exact
}

// fma of three halves (given as floats): a * b is exact in float (11 + 11
// bits), the sum is rounded to odd (an inexact result gets an odd last bit),
// and rounding that to half is then the correctly rounded fma, since float
// has more than 11 + 2 bits (Boldo and Melquiond, "Emulation of FMA and
// correctly rounded sums: proved algorithms using rounding to odd"). A float
// fma rounded to half would round twice.
__MSL_LIBM_API float fma_for_half(float a, float b, float c) {
  __MSL_LIBM_PRECISE
  using namespace detail;
  float p = a * b;
  if (nonfinite_(p) || nonfinite_(c)) return p + c;
  ff s = two_sum(p, c);
  if (s.lo != 0.0f && (bits(s.hi) & 1u) == 0u)
    s.hi = from_bits(bits(s.hi) + ((s.lo > 0.0f) == (s.hi > 0.0f) ? 1u : 0xffffffffu));
  return s.hi;
}

}  // namespace __msl_libm

#undef __MSL_LIBM_FN
#undef __MSL_LIBM_PRECISE

#ifdef __clang__
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wignored-pragmas"
#pragma float_control(pop)
#pragma clang diagnostic pop
#endif

#endif  // __MSL_LIBM_H
