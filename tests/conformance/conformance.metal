// Kernels of msl-conformance (ConformanceMain.cpp): one per math function and
// type, f32_<name> (float) and f16_<name> (half), each computing the function
// of one sample per thread with the unqualified names, so that the compile's
// -ffast-math / -fno-fast-math picks fast:: or precise:: as a user's kernel
// would. The tool compiles this file twice and runs the same kernel of both.
//
// Results go out as bits: out0[i] (and out1[i] for the functions with two
// results: sincos, frexp, modf), a half zero-extended, an int as is.
//
// Inputs are made from the sample index where that is simpler than sending
// them (Params.mode), exactly as Inputs.cpp does on the host (argBits):
//   0 sweep:    bits = start + i * stride; a unary kernel takes them as one
//               value, a binary half kernel as two (high and low 16 bits);
//   1 hashed:   argument a's bits = mix32(mix32(start + i + seed) ^ 0x9e3779b9 * (a + 1));
//   2 explicit: argument a's bits = in[i * arity + a].
#include <metal_stdlib>
using namespace metal;

struct Params {
  uint mode;
  uint start;
  uint stride;
  uint seed;
};

// lowbias32 (Wellons): a full-avalanche 32-bit mix.
static uint mix32(uint x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

static uint argBits(constant Params &p, device const uint *in, uint i, uint arg, uint arity) {
  if (p.mode == 2)
    return in[i * arity + arg];
  if (p.mode == 0) {
    uint b = p.start + i * p.stride;
    return arity == 1 ? b : (arg == 0 ? b >> 16 : b & 0xffffu);
  }
  return mix32(mix32(p.start + i + p.seed) ^ (0x9e3779b9u * (arg + 1)));
}

// ldexp's exponent: [-320, 320], past every float's range both ways.
static int intArg(uint bits) { return int(bits % 641u) - 320; }

static float f32(uint b) { return as_type<float>(b); }
static half f16(uint b) { return as_type<half>(ushort(b)); }
static uint bitsOf(float v) { return as_type<uint>(v); }
static uint bitsOf(half v) { return uint(as_type<ushort>(v)); }
static float one(float) { return 1.0f; }
static half one(half) { return half(1.0f); }

#define KERNEL_ARGS                                                             \
  device uint *out0 [[buffer(0)]], device uint *out1 [[buffer(1)]],             \
      device const uint *in [[buffer(2)]], constant Params &p [[buffer(3)]],    \
      uint i [[thread_position_in_grid]]

// One kernel per type: T is the type, C converts bits to it.
#define UNARY(NAME, EXPR)                                                       \
  kernel void f32_##NAME(KERNEL_ARGS) {                                         \
    float x = f32(argBits(p, in, i, 0, 1));                                     \
    out0[i] = bitsOf(EXPR);                                                     \
  }                                                                             \
  kernel void f16_##NAME(KERNEL_ARGS) {                                         \
    half x = f16(argBits(p, in, i, 0, 1));                                      \
    out0[i] = bitsOf(EXPR);                                                     \
  }
#define BINARY(NAME, EXPR)                                                      \
  kernel void f32_##NAME(KERNEL_ARGS) {                                         \
    float x = f32(argBits(p, in, i, 0, 2)), y = f32(argBits(p, in, i, 1, 2));   \
    out0[i] = bitsOf(EXPR);                                                     \
  }                                                                             \
  kernel void f16_##NAME(KERNEL_ARGS) {                                         \
    half x = f16(argBits(p, in, i, 0, 2)), y = f16(argBits(p, in, i, 1, 2));    \
    out0[i] = bitsOf(EXPR);                                                     \
  }

UNARY(acos, acos(x))
UNARY(acosh, acosh(x))
UNARY(asin, asin(x))
UNARY(asinh, asinh(x))
UNARY(atan, atan(x))
UNARY(atanh, atanh(x))
UNARY(ceil, ceil(x))
UNARY(cos, cos(x))
UNARY(cosh, cosh(x))
UNARY(cospi, cospi(x))
UNARY(exp, exp(x))
UNARY(exp2, exp2(x))
UNARY(exp10, exp10(x))
UNARY(fabs, fabs(x))
UNARY(floor, floor(x))
UNARY(fract, fract(x))
UNARY(log, log(x))
UNARY(log2, log2(x))
UNARY(log10, log10(x))
UNARY(recip, one(x) / x)
UNARY(rint, rint(x))
UNARY(round, round(x))
UNARY(rsqrt, rsqrt(x))
UNARY(sin, sin(x))
UNARY(sinh, sinh(x))
UNARY(sinpi, sinpi(x))
UNARY(sqrt, sqrt(x))
UNARY(tan, tan(x))
UNARY(tanh, tanh(x))
UNARY(tanpi, tanpi(x))
UNARY(trunc, trunc(x))

BINARY(add, x + y)
BINARY(sub, x - y)
BINARY(mul, x * y)
BINARY(div, x / y)
BINARY(atan2, atan2(x, y))
BINARY(copysign, copysign(x, y))
BINARY(fdim, fdim(x, y))
BINARY(fmax, fmax(x, y))
BINARY(fmin, fmin(x, y))
BINARY(fmod, fmod(x, y))
BINARY(nextafter, nextafter(x, y))
BINARY(pow, pow(x, y))
BINARY(powr, powr(x, y))

// ilogb: an int.
kernel void f32_ilogb(KERNEL_ARGS) { out0[i] = uint(ilogb(f32(argBits(p, in, i, 0, 1)))); }
kernel void f16_ilogb(KERNEL_ARGS) { out0[i] = uint(ilogb(f16(argBits(p, in, i, 0, 1)))); }

// Two results: sincos (sin, cos), frexp (mantissa, exponent), modf (fraction, integral part).
#define TWO_RESULTS(T, C, PREFIX)                                               \
  kernel void PREFIX##_sincos(KERNEL_ARGS) {                                    \
    T c;                                                                        \
    out0[i] = bitsOf(sincos(C(argBits(p, in, i, 0, 1)), c));                    \
    out1[i] = bitsOf(c);                                                        \
  }                                                                             \
  kernel void PREFIX##_frexp(KERNEL_ARGS) {                                     \
    int e;                                                                      \
    out0[i] = bitsOf(frexp(C(argBits(p, in, i, 0, 1)), e));                     \
    out1[i] = uint(e);                                                          \
  }                                                                             \
  kernel void PREFIX##_modf(KERNEL_ARGS) {                                      \
    T whole;                                                                    \
    out0[i] = bitsOf(modf(C(argBits(p, in, i, 0, 1)), whole));                  \
    out1[i] = bitsOf(whole);                                                    \
  }
TWO_RESULTS(float, f32, f32)
TWO_RESULTS(half, f16, f16)

// ldexp(x, k): k from the second argument's bits; fma(x, y, z).
kernel void f32_ldexp(KERNEL_ARGS) {
  out0[i] = bitsOf(ldexp(f32(argBits(p, in, i, 0, 2)), intArg(argBits(p, in, i, 1, 2))));
}
kernel void f16_ldexp(KERNEL_ARGS) {
  out0[i] = bitsOf(ldexp(f16(argBits(p, in, i, 0, 2)), intArg(argBits(p, in, i, 1, 2))));
}
kernel void f32_fma(KERNEL_ARGS) {
  out0[i] = bitsOf(fma(f32(argBits(p, in, i, 0, 3)), f32(argBits(p, in, i, 1, 3)),
                       f32(argBits(p, in, i, 2, 3))));
}
kernel void f16_fma(KERNEL_ARGS) {
  out0[i] = bitsOf(fma(f16(argBits(p, in, i, 0, 3)), f16(argBits(p, in, i, 1, 3)),
                       f16(argBits(p, in, i, 2, 3))));
}
