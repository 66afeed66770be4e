// static_cast between vector types converts lane by lane (Metal), not a
// bitcast.
#include <metal_stdlib>
using namespace metal;

kernel void k(device int4 *i [[buffer(0)]], device float4 *f [[buffer(1)]]) {
  f[0] = static_cast<float4>(i[0]);
  f[1] = static_cast<float4>(int4(1, -2, 3, -4));
}
// CHECK-IR: sitofp <4 x i32>
// CHECK-IR: <float 1.000000e+00, float -2.000000e+00, float 3.000000e+00, float -4.000000e+00>
