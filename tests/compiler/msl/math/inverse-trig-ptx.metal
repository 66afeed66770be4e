// On NVPTX the inverse trigonometric functions are polynomial kernels that
// fold for constants: asin(1) = acos(0) = pi/2, atan(1) = pi/4,
// atan2(1, -1) = 3pi/4, cosh(0) = 1 (as float).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]]) {
  f[0] = asin(1.0f);
  f[1] = acos(0.0f);
  f[2] = atan(1.0f);
  f[3] = atan2(1.0f, -1.0f);
  f[4] = tanh(0.25f) - 0.2449187f;
  f[5] = sinh(0.0f);
  f[6] = asin(-0.25f) + 0.25268026f;
}
// CHECK-IR: store float 0x3FF921FB60000000
// CHECK-IR: store float 0x3FE921FB60000000
// CHECK-IR: store float 0x4002D97C80000000
// CHECK-IR: store float 0.000000e+00
// CHECK-IR-NOT: call float @asinf
