// Metal vector constructors: splat, concatenation and value conversion, as
// constant initializers with Metal's meaning (not OpenCL's bitcast).
#include <metal_stdlib>
using namespace metal;

constant float4 kCat = float4(float2(1, 2), 3, 4);
constant int4 kConv = int4(float4(1.5, -2.5, 3.0, 4.9));
constant float3 kSplat = float3(2);

kernel void k(device float4 *f [[buffer(0)]], device int4 *i [[buffer(1)]],
              device float3 *s [[buffer(2)]]) {
  f[0] = kCat;
  i[0] = kConv;
  s[0] = kSplat;
}
// CHECK-IR: <4 x float> <float 1.000000e+00, float 2.000000e+00, float 3.000000e+00, float 4.000000e+00>
// CHECK-IR: <4 x i32> <i32 1, i32 -2, i32 3, i32 4>
