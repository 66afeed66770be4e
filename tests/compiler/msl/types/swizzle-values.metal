// Swizzle reads and writes move the right components.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *out [[buffer(0)]]) {
  float4 v = float4(1, 2, 3, 4);
  v.xz = v.wy;           // v = (4, 2, 2, 4)
  out[0] = v.bgra;       // (2, 2, 4, 4)
  out[1] = float4(v.xxx, v.a);
}
// CHECK-IR: <float 2.000000e+00, float 2.000000e+00, float 4.000000e+00, float 4.000000e+00>
// CHECK-IR: <float 4.000000e+00, float 4.000000e+00, float 4.000000e+00, float 4.000000e+00>
