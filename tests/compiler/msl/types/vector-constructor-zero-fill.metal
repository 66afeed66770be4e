// A vector constructor whose concatenated arguments fall short fills the
// remaining components with zero, as the braced form `uint4 v = {x, y2};`
// does (spirv-cross writes uint4(x, uint2(0)); Apple's compiler accepts it).
#include <metal_stdlib>
using namespace metal;

kernel void short_concatenation(device uint4 *u [[buffer(0)]], device float4 *f [[buffer(1)]]) {
  u[0] = uint4(7u, uint2(5u));
  f[0] = float4(1.5, 2.5);
}
// CHECK-IR: store <4 x i32> <i32 7, i32 5, i32 5, i32 0>
// CHECK-IR: store <4 x float> <float 1.500000e+00, float 2.500000e+00, float 0.000000e+00, float 0.000000e+00>
