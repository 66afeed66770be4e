// metal::numeric_limits from <metal_limits> alone, as constant expressions:
// max/min/lowest/epsilon/infinity/digits for int, uint, short, ushort, char,
// uchar, long, half, float and bfloat (Metal 3.1), is_signed/is_integer, and
// vectors (every lane the element's limit). infinity() and quiet_NaN() stay
// infinity and NaN under fast math (the default), as INFINITY and NAN do,
// also when returned through a template.
// msl-options: -std=metal3.1
#include <metal_limits>
using namespace metal;

static_assert(numeric_limits<int>::max() == 2147483647 && numeric_limits<int>::min() == -2147483647 - 1, "int");
static_assert(numeric_limits<int>::lowest() == numeric_limits<int>::min() && numeric_limits<int>::digits == 31, "int");
static_assert(numeric_limits<uint>::max() == 0xFFFFFFFFu && numeric_limits<uint>::min() == 0u && numeric_limits<uint>::digits == 32, "uint");
static_assert(numeric_limits<short>::min() == -32768 && numeric_limits<ushort>::max() == 65535, "16-bit");
static_assert(numeric_limits<char>::max() == 127 && numeric_limits<uchar>::max() == 255, "8-bit");
static_assert(numeric_limits<long>::max() == 0x7FFFFFFFFFFFFFFFL && numeric_limits<ulong>::max() == ~0UL, "64-bit");
static_assert(numeric_limits<int>::is_signed && !numeric_limits<uint>::is_signed && numeric_limits<uint>::is_integer, "traits");
static_assert(numeric_limits<bool>::max() == true && numeric_limits<bool>::digits == 1, "bool");

static_assert(numeric_limits<float>::max() == 0x1.fffffep127f && numeric_limits<float>::lowest() == -0x1.fffffep127f, "float max");
static_assert(numeric_limits<float>::min() == 0x1p-126f && numeric_limits<float>::denorm_min() == 0x1p-149f, "float min");
static_assert(numeric_limits<float>::epsilon() == 0x1p-23f && numeric_limits<float>::digits == 24, "float epsilon");
static_assert(numeric_limits<float>::infinity() > numeric_limits<float>::max() && numeric_limits<float>::has_infinity, "float inf");
static_assert(!numeric_limits<float>::is_integer && numeric_limits<float>::is_signed, "float traits");

static_assert(numeric_limits<half>::max() == half(65504.0f) && numeric_limits<half>::lowest() == -half(65504.0f), "half max");
static_assert(numeric_limits<half>::min() == half(0x1p-14f) && numeric_limits<half>::epsilon() == half(0x1p-10f), "half min, epsilon");
static_assert(float(numeric_limits<half>::infinity()) > 65504.0f && numeric_limits<half>::digits == 11, "half inf");

static_assert(float(numeric_limits<bfloat>::max()) == 0x1.fep127f && float(numeric_limits<bfloat>::lowest()) == -0x1.fep127f, "bfloat max");
static_assert(float(numeric_limits<bfloat>::min()) == 0x1p-126f && float(numeric_limits<bfloat>::epsilon()) == 0x1p-7f, "bfloat min, epsilon");
static_assert(float(numeric_limits<bfloat>::infinity()) > 0x1.fep127f && numeric_limits<bfloat>::digits == 8, "bfloat inf");

// A quiet NaN compares unequal to itself.
static_assert(numeric_limits<float>::quiet_NaN() != numeric_limits<float>::quiet_NaN(), "NaN");

static_assert(is_same_v<decltype(numeric_limits<half>::infinity()), half>, "infinity() is a half");

template <class T> T first_or_infinity(device T *p, bool ok) { return ok ? p[0] : numeric_limits<T>::infinity(); }

kernel void k(device float4 *f [[buffer(0)]], device int *n [[buffer(1)]], device half *h [[buffer(2)]],
              device bfloat *b [[buffer(3)]], device float *inf [[buffer(4)]], device half *hinf [[buffer(5)]],
              device float4 *vinf [[buffer(6)]], device float *nan [[buffer(7)]], device bfloat *binf [[buffer(8)]]) {
  f[0] = numeric_limits<float4>::lowest();   // the identity of a max reduction
  n[0] = numeric_limits<int2>::max().y;
  h[0] = numeric_limits<half>::max();
  b[0] = numeric_limits<bfloat>::epsilon();
  inf[0] = -numeric_limits<float>::infinity();
  inf[1] = first_or_infinity(inf + 2, false);
  hinf[0] = numeric_limits<half>::infinity();
  vinf[0] = numeric_limits<float4>::infinity();
  nan[0] = numeric_limits<float>::quiet_NaN();
  binf[0] = numeric_limits<bfloat>::infinity();
}
// CHECK-IR: store <4 x float> <float 0xC7EFFFFFE0000000, float 0xC7EFFFFFE0000000, float 0xC7EFFFFFE0000000, float 0xC7EFFFFFE0000000>
// CHECK-IR: store i32 2147483647
// CHECK-IR: store half 0xH7BFF
// CHECK-IR: store bfloat 0xR3C00
// CHECK-IR: store float 0xFFF0000000000000
// CHECK-IR: store float 0x7FF0000000000000
// CHECK-IR: store half 0xH7C00
// CHECK-IR: store <4 x float> <float 0x7FF0000000000000, float 0x7FF0000000000000, float 0x7FF0000000000000, float 0x7FF0000000000000>
// CHECK-IR: store float 0x7FF8000000000000
// CHECK-IR: store bfloat 0xR7F80
