// sample(): the lod option becomes (mode, value) for the hook - 0 implicit,
// 1 bias, 2 level, 3 gradient - and the offset travels as an int4.
#include <metal_stdlib>
using namespace metal;

float4 plain(texture2d<float> t, sampler s, float2 uv) { return t.sample(s, uv); }
// CHECK-IR: <4 x i32> noundef zeroinitializer, i32 noundef 0, float noundef nofpclass(nan inf) 0.000000e+00
float4 lvl(texture2d<float> t, sampler s, float2 uv) { return t.sample(s, uv, level(2), int2(1, -1)); }
// CHECK-IR: <4 x i32> noundef <i32 1, i32 -1, i32 0, i32 0>, i32 noundef 2, float noundef nofpclass(nan inf) 2.000000e+00
float4 bia(texture2d<float> t, sampler s, float2 uv) { return t.sample(s, uv, bias(1.5)); }
// CHECK-IR: i32 noundef 1, float noundef nofpclass(nan inf) 1.500000e+00
float4 grad(texture3d<float> t, sampler s, float3 p) { return t.sample(s, p, gradient3d(float3(1), float3(2)), int3(1, 2, 3)); }
// CHECK-IR: <4 x i32> noundef <i32 1, i32 2, i32 3, i32 0>, i32 noundef 3, float noundef nofpclass(nan inf) 0.000000e+00, <4 x float> noundef nofpclass(nan inf) <float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 0.000000e+00>, <4 x float> noundef nofpclass(nan inf) <float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 0.000000e+00>
// An array texture passes its array index; half textures convert the texel.
half4 arr(texture2d_array<half> t, sampler s, float2 uv) { return t.sample(s, uv, 7u, level(0)); }
// CHECK-IR: i32 noundef 7, <4 x i32> noundef zeroinitializer, i32 noundef 2
// CHECK-IR: fptrunc <4 x float>
// Depth compare: the reference value and a scalar result.
float cmp(depth2d_array<float> t, sampler s, float2 uv) { return t.sample_compare(s, uv, 3u, 0.25); }
// CHECK-IR: i32 noundef 3, <4 x i32> noundef zeroinitializer, float noundef nofpclass(nan inf) 2.500000e-01, i32 noundef 0
// gather passes the component; integer textures use the uint4 hook.
int4 gat(texture2d<int> t, sampler s, float2 uv) { return t.gather(s, uv, int2(0), component::w); }
// CHECK-IR: @__msl_texture_gather_u(
// CHECK-IR: i32 noundef 0, <4 x i32> noundef zeroinitializer, i32 noundef 3)
