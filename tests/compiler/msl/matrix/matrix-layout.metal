// Matrices are arrays of column vectors: Metal's sizes and alignments
// (MSL 2.0 table 5), trivially copyable, and `columns` is the member name.
#include <metal_stdlib>
using namespace metal;

#define LAYOUT(T, S, A) static_assert(sizeof(T) == S && alignof(T) == A, #T);
LAYOUT(half2x2, 8, 4)   LAYOUT(half2x3, 16, 8)  LAYOUT(half2x4, 16, 8)
LAYOUT(half3x2, 12, 4)  LAYOUT(half3x3, 24, 8)  LAYOUT(half3x4, 24, 8)
LAYOUT(half4x2, 16, 4)  LAYOUT(half4x3, 32, 8)  LAYOUT(half4x4, 32, 8)
LAYOUT(float2x2, 16, 8) LAYOUT(float2x3, 32, 16) LAYOUT(float2x4, 32, 16)
LAYOUT(float3x2, 24, 8) LAYOUT(float3x3, 48, 16) LAYOUT(float3x4, 48, 16)
LAYOUT(float4x2, 32, 8) LAYOUT(float4x3, 64, 16) LAYOUT(float4x4, 64, 16)
static_assert(__is_trivially_copyable(float4x4), "trivially copyable");
static_assert(__is_same(float3x2, matrix<float, 3, 2>), "columns first");
static_assert(__is_same(float3x2::column_type, float2), "column type");
static_assert(__is_same(metal::half4x3, matrix<half, 4, 3>), "in namespace metal");

struct Uniforms { float3x3 n; float4 after; };
static_assert(__builtin_offsetof(Uniforms, after) == 48, "float3x3 occupies 48 bytes");

kernel void k(device float4 *o [[buffer(0)]]) {
  float2x4 m = float2x4(float4(1, 2, 3, 4), float4(5, 6, 7, 8));
  o[0] = m.columns[1];
}
// CHECK-IR: store <4 x float> <float 5.000000e+00, float 6.000000e+00, float 7.000000e+00, float 8.000000e+00>
