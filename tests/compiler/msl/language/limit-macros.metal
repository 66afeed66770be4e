// The C limit macros: integer ones (<metal_limits>) and the float and half
// ones (<metal_math>), all usable in #if (the integer ones) and in constant
// expressions, agreeing with numeric_limits.
#include <metal_stdlib>
using namespace metal;

#if INT_MAX != 2147483647 || UINT_MAX != 4294967295U || CHAR_BIT != 8 || SHRT_MAX != 32767
#error "integer limits in #if"
#endif

static_assert(CHAR_BIT == 8 && SCHAR_MIN == -128 && SCHAR_MAX == 127 && UCHAR_MAX == 255, "char");
static_assert(CHAR_MIN == SCHAR_MIN && CHAR_MAX == SCHAR_MAX, "char is signed");
static_assert(SHRT_MIN == numeric_limits<short>::min() && USHRT_MAX == numeric_limits<ushort>::max(), "short");
static_assert(INT_MIN == numeric_limits<int>::min() && INT_MAX == numeric_limits<int>::max(), "int");
static_assert(UINT_MAX == numeric_limits<uint>::max() && is_same_v<decltype(UINT_MAX), uint>, "uint");
static_assert(LONG_MIN == numeric_limits<long>::min() && ULONG_MAX == numeric_limits<ulong>::max(), "long");

static_assert(FLT_MAX == numeric_limits<float>::max() && FLT_MIN == numeric_limits<float>::min(), "float");
static_assert(FLT_EPSILON == numeric_limits<float>::epsilon() && MAXFLOAT == FLT_MAX, "float epsilon");
static_assert(FLT_DIG == 6 && FLT_MANT_DIG == 24 && FLT_RADIX == 2, "float digits");
static_assert(FLT_MAX_EXP == 128 && FLT_MIN_EXP == -125 && FLT_MAX_10_EXP == 38 && FLT_MIN_10_EXP == -37, "float exponents");
static_assert(HALF_MAX == numeric_limits<half>::max() && HALF_MIN == numeric_limits<half>::min(), "half");
static_assert(HALF_EPSILON == numeric_limits<half>::epsilon() && MAXHALF == HALF_MAX, "half epsilon");
static_assert(HALF_DIG == 3 && HALF_MANT_DIG == 11 && HALF_RADIX == 2, "half digits");
static_assert(HALF_MAX_EXP == 16 && HALF_MIN_EXP == -13 && HALF_MAX_10_EXP == 4 && HALF_MIN_10_EXP == -4, "half exponents");
static_assert(is_same_v<decltype(HALF_MAX), half> && is_same_v<decltype(FLT_MAX), float>, "types");

kernel void k(device int *n [[buffer(0)]], device float *f [[buffer(1)]], device half *h [[buffer(2)]]) {
  n[0] = INT_MIN;
  f[0] = -FLT_MAX;
  h[0] = HALF_EPSILON;
}
// CHECK-IR: store i32 -2147483648
// CHECK-IR: store float 0xC7EFFFFFE0000000
// CHECK-IR: store half 0xH1400
