// A vector comparison is a boolN whose true lanes are 1: converting it to a
// number vector gives 1.0 / 1, not OpenCL's mask -1.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *f [[buffer(0)]], device int4 *i [[buffer(1)]]) {
  float4 a = float4(1, 5, 3, 0), c = float4(2, 4, 3, 1);
  f[0] = float4(a < c);
  i[0] = int4(a < c);
  f[1] = (float4)(a < c);
  f[2] = select(a, c, a < c); // a condition keeps working
}
// CHECK-IR: <float 1.000000e+00, float 0.000000e+00, float 0.000000e+00, float 1.000000e+00>
// CHECK-IR: <i32 1, i32 0, i32 0, i32 1>
// CHECK-IR: <float 2.000000e+00, float 5.000000e+00, float 3.000000e+00, float 1.000000e+00>
// CHECK-IR-NOT: float -1.000000e+00
