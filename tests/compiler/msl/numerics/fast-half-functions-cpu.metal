// On the CPU the fast half functions stay what they were (LLVM's
// intrinsics / libm, computed in float): the NVPTX-only __msl_libm paths
// and the division rewrite do not apply.
#include <metal_stdlib>
using namespace metal;

kernel void k(device half *h [[buffer(0)]], device float *f [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  h[i] = sin(h[i]) + exp(h[i + 1]) + log(h[i + 2]) + atan2(h[i + 3], h[i + 4]) + h[i + 5] / h[i + 6];
  f[i] = log(f[i]) + log2(f[i + 1]) + log10(f[i + 2]);
}
// CHECK-IR-NOT: _ZN10__msl_libm3sinEf
// CHECK-IR-NOT: _ZN10__msl_libm5atan2Eff
// CHECK-IR-NOT: _ZN10__msl_libm3logEf
// CHECK-IR-NOT: _ZN10__msl_libm4log2Ef
// CHECK-IR-NOT: llvm.nvvm
