// Apple's mixed forms with the scalar first: the scalar converts to the
// other argument's type (fmax(0, half4) is a half4 max with 0), in metal::,
// fast:: and precise:: alike; the values fold.
// msl-options: -std=macos-metal1.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device half4 *h [[buffer(0)]], device float4 *f [[buffer(1)]], device float *s [[buffer(2)]]) {
  h[0] = fmax(0, half4(-1.0h, 2.0h, -3.0h, 4.0h));
  f[0] = fmin(1.5f, float4(1.0f, 2.0f, 3.0f, -4.0f)) + precise::fmax(2, float4(1.0f)) + fast::pow(2, float4(3.0f));
  s[0] = fmax(3, 2.5f) + copysign(1, -2.0f);
}
// (0, 2, 0, 4) in half, stored as one 64-bit word
// CHECK-IR: store double 0x4400000040000000
// CHECK-IR: store <4 x float> <float 1.100000e+01, float 1.150000e+01, float 1.150000e+01, float 6.000000e+00>
// CHECK-IR: store float 2.000000e+00
