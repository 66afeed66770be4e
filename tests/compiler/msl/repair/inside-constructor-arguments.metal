// Repairs also apply inside a vector constructor's arguments (the
// constructors are function-like macros, so those are macro arguments).
#include <metal_stdlib>
using namespace metal;

kernel void k(device half4 *h [[buffer(0)]], device float4 *f [[buffer(1)]], device int4 *i [[buffer(2)]]) {
  h[0] = half4(h[1].xy * 2.0, 0, 1);
  f[0] = metal::float4(static_cast<metal::float4>(metal::int4(i[0])).xyz, 2.0);
}
// CHECK-IR: sitofp <4 x i32>
