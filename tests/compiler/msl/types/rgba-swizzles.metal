// .rgba component names are Metal syntax: no OpenCL-version warning, even
// under -Werror.
// msl-options: -Werror
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *o [[buffer(0)]]) {
  float4 c = float4(1, 2, 3, 4);
  o[0] = c.abgr;
  o[1] = float4(c.rg, c.b, c.a);
}
// CHECK-IR: store <4 x float> <float 4.000000e+00, float 3.000000e+00, float 2.000000e+00, float 1.000000e+00>
