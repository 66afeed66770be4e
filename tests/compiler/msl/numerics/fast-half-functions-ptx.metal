// MSL 2.0 7.4, table 38: the half bounds (<= 1 ulp) do not depend on fast
// math. On NVPTX under -ffast-math these half functions are the accurate
// float kernels (__msl_libm) rounded to half, not the PTX approximations.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device half *h [[buffer(0)]], device half2 *h2 [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  half a = h[i], b = h[i + 1], c;
  half s = sincos(a, c);
  h[i] = sin(a) + cos(a) + tan(a) + sinpi(a) + tanpi(a) + asinh(a) + atanh(a) + atan2(a, b) + s + c;
  h2[i] = sin(h2[i]) + atan2(h2[i], h2[i + 1]);
}
// CHECK-PTX: _ZN10__msl_libm3sinEf
// CHECK-PTX: _ZN10__msl_libm3cosEf
// CHECK-PTX: _ZN10__msl_libm3tanEf
// CHECK-PTX: _ZN10__msl_libm5sinpiEf
// CHECK-PTX: _ZN10__msl_libm5tanpiEf
// CHECK-PTX: _ZN10__msl_libm5asinhEf
// CHECK-PTX: _ZN10__msl_libm5atanhEf
// CHECK-PTX: _ZN10__msl_libm5atan2Eff
// CHECK-PTX-NOT: sin.approx
// CHECK-PTX-NOT: cos.approx
