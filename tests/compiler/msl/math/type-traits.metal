// metal_type_traits: C++ scalar traits (vectors are neither integral nor
// floating point) plus Metal's vector traits, usable as spirv-cross uses them.
#include <metal_stdlib>
using namespace metal;

static_assert(is_integral<int>::value && is_integral_v<const uint> && is_integral_v<bool>, "");
static_assert(!is_integral_v<float> && !is_integral_v<int4>, "");
static_assert(is_floating_point_v<half> && is_floating_point_v<float> && !is_floating_point_v<float4>, "");
static_assert(is_signed_v<int> && !is_signed_v<uint> && is_signed_v<float> && !is_signed_v<float4>, "");
static_assert(is_unsigned_v<uchar> && !is_unsigned_v<short> && !is_unsigned_v<float>, "");
static_assert(is_vector_v<float3> && !is_vector_v<float> && vec_elements_v<ushort3> == 3, "");
static_assert(is_same_v<make_scalar_t<half4>, half> && is_same_v<make_scalar_t<int>, int>, "");
static_assert(is_same_v<make_unsigned_t<int2>, uint2> && is_same_v<make_signed_t<ushort>, short>, "");
static_assert(is_same_v<conditional_t<true, int, float>, int> && is_same_v<remove_cv_t<const volatile int>, int>, "");
static_assert(is_same_v<enable_if_t<true>, void> && is_scalar_v<float> && is_arithmetic_v<half>, "");
static_assert(true_type::value && !false_type() && integral_constant<int, 3>()() == 3, "");

// The spirv-cross pattern: SFINAE on is_integral selects the overload.
template <typename T, typename E = typename enable_if<is_integral<T>::value>::type>
inline int kind(T) { return 1; }
template <typename T, typename E = typename enable_if<is_floating_point<typename make_scalar<T>::type>::value>::type, typename = void>
inline int kind(T) { return 2; }

kernel void k(device int *out [[buffer(0)]]) {
  out[0] = kind(3u) * 10 + kind(float2(1.0));
}
// CHECK-IR: store i32 12

// numeric_limits (Apple's <metal_limits>) for integers, half and float.
static_assert(numeric_limits<int>::max() == 2147483647 && numeric_limits<int>::min() == -2147483647 - 1, "");
static_assert(numeric_limits<uchar>::max() == 255 && numeric_limits<ushort>::min() == 0, "");
static_assert(numeric_limits<short>::min() == -32768 && numeric_limits<ulong>::max() == ~0ul, "");
static_assert(numeric_limits<float>::max() == 0x1.fffffep127f && numeric_limits<float>::denorm_min() == 0x1p-149f, "");
static_assert(numeric_limits<half>::max() == (half)65504.0f && numeric_limits<float>::is_specialized, "");
static_assert(numeric_limits<float4>::is_specialized && numeric_limits<int2>::is_integer, "");

// A vector's limits are its element's in every lane.
kernel void lim(device float4 *f [[buffer(0)]], device int2 *i [[buffer(1)]]) {
  f[0] = numeric_limits<float4>::max();
  i[0] = numeric_limits<int2>::min();
}
// CHECK-IR: <float 0x47EFFFFFE0000000, float 0x47EFFFFFE0000000
// CHECK-IR: store double 0x8000000080000000
