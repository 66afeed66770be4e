// Float tanh under -ffast-math on NVPTX: for |x| < 0.55 the polynomial fit
// of __msl_libm::tanh (its leading coefficient -0x1.fa3d1cp-11 is
// 0fBA7D1E8E), not the truncated Taylor series (17/315 = 0f3D5D0DD1) that
// was 1.3e3 ulp off near 0.5; above, 1 - 2 / (exp(2x) + 1) on ex2.approx.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  f[i] = tanh(f[i]);
}
// CHECK-PTX: 0fBA7D1E8E
// CHECK-PTX: ex2.approx
// CHECK-PTX-NOT: 0f3D5D0DD1
// CHECK-PTX-NOT: _ZN10__msl_libm4tanhEf
