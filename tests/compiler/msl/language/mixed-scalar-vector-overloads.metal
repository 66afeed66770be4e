// Apple's mixed scalar/vector forms of the common, math and integer
// functions: a scalar argument (of any arithmetic type, an int literal too)
// converts to the vector argument's type and fills every lane, first or
// later: fmax(0, half4), min(float4, 1), clamp(v, 0, 1), mix(a, b, 0.25),
// step(0.5, v), smoothstep(0, 1, v), integer min/max/clamp; the result has
// the vector's type and the values fold.
#include <metal_stdlib>
using namespace metal;

static_assert(is_same_v<decltype(fmax(0, half4(1))), half4>, "fmax(0, half4)");
static_assert(is_same_v<decltype(min(float4(1), 1)), float4>, "min(float4, 1)");
static_assert(is_same_v<decltype(clamp(float3(1), 0, 1)), float3>, "clamp(v, 0, 1)");
static_assert(is_same_v<decltype(clamp(half2(1), 0.0f, 1.0f)), half2>, "clamp(half2, float, float)");
static_assert(is_same_v<decltype(max(int4(1), 0)), int4>, "max(int4, 0)");
static_assert(is_same_v<decltype(min(7u, uint2(1))), uint2>, "min(uint, uint2)");
static_assert(is_same_v<decltype(mix(float4(0), float4(1), 0.25f)), float4>, "mix(a, b, scalar)");
static_assert(is_same_v<decltype(step(0.5f, half4(1))), half4>, "step(scalar, v)");

kernel void k(device half4 *h [[buffer(0)]], device float4 *f [[buffer(1)]], device int4 *n [[buffer(2)]],
              device float3 *g [[buffer(3)]]) {
  const float4 v = float4(-0.5f, 0.25f, 1.5f, 0.75f);
  h[0] = fmax(0, half4(-1.0h, 2.0h, -3.0h, 4.0h)) + fmin(half4(1.0h), 3);             // 1, 3, 1, 5
  f[0] = min(v, 1) + clamp(v, 0, 1);                                                   // -0.5, 0.5, 2, 1.5
  f[1] = mix(float4(0.0f), float4(4.0f), 0.25f) + step(0.5f, v) + smoothstep(0, 1, v) * 0; // 1, 1, 2, 2
  f[2] = max(1, v) + fmin(v, 0.0f);                                                    // 0.5, 1, 1.5, 1
  n[0] = max(int4(-3, 5, -7, 9), 0) + min(int4(2), 1) + clamp(int4(-9, 0, 9, 4), -1, 3); // 0, 6, 4, 13
  g[0] = clamp(float3(-2.0f, 0.5f, 2.0f), 0.0h, 1.0h) + abs(float3(-1.0f)) * 2;        // 2, 2.5, 3
}
// CHECK-IR: store <4 x half> <half 0xH3C00, half 0xH4200, half 0xH3C00, half 0xH4500>
// CHECK-IR: store <4 x float> <float -5.000000e-01, float 5.000000e-01, float 2.000000e+00, float 1.500000e+00>
// CHECK-IR: store <4 x float> <float 1.000000e+00, float 1.000000e+00, float 2.000000e+00, float 2.000000e+00>
// CHECK-IR: store <4 x float> <float 5.000000e-01, float 1.000000e+00, float 1.500000e+00, float 1.000000e+00>
// CHECK-IR: store <4 x i32> <i32 0, i32 6, i32 4, i32 13>
// CHECK-IR: <float 2.000000e+00, float 2.500000e+00, float 3.000000e+00
