// Float log, log2, log10 under -ffast-math on NVPTX: lg2.approx where its
// error meets the fast bounds, the accurate kernel (__msl_libm) for x in
// [0.25, 0.5) and [2, 4), where it does not (metal_math,
// lg2_approx_in_bounds).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], device float2 *f2 [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  f[i] = log(f[i]) + log2(f[i + 1]) + log10(f[i + 2]);
  f2[i] = log(f2[i]);
}
// CHECK-PTX: lg2.approx
// CHECK-PTX: _ZN10__msl_libm3logEf
// CHECK-PTX: _ZN10__msl_libm4log2Ef
// CHECK-PTX: _ZN10__msl_libm5log10Ef
