// The accurate kernels behind precise:: are called, one copy per function
// (not inlined per lane), and are built without fast-math flags even in a
// -ffast-math compile: nothing in this module may assume no NaN/infinity.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *f [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  f[i] = precise::exp(f[i]);
}
// CHECK-IR: define linkonce_odr dso_local noundef float @_ZN10__msl_libm3expEf(
// CHECK-IR: tail call noundef float @_ZN10__msl_libm3expEf(
// CHECK-IR-NOT: nnan
// CHECK-IR-NOT: afn
