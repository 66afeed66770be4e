// <simd/simd.h> names the shader's vector and matrix types.
#include <simd/simd.h>

static_assert(__is_same(matrix_float4x4, metal::float4x4) && __is_same(simd_float3x3, metal::float3x3), "");
static_assert(__is_same(simd_half2x4, metal::half2x4) && __is_same(vector_float4, float4), "");
static_assert(__is_same(simd_ulong2, ulong2) && __is_same(simd_float1, float), "");

struct Uniforms { matrix_float4x4 mvp; vector_float4 color; };

kernel void k(constant Uniforms &u [[buffer(0)]], device float4 *o [[buffer(1)]]) {
  o[0] = u.mvp * u.color;
}
