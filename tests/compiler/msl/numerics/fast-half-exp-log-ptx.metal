// Half exp and log under -ffast-math on NVPTX: ex2.approx / lg2.approx in
// float with the constant multiplied in float, rounded to half once (as
// exp10 and log10; rounding x * log2(e) to half missed table 38's 1 ulp).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device half *h [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  h[i] = exp(h[i]) + log(h[i + 1]);
}
// CHECK-PTX: ex2.approx
// CHECK-PTX: lg2.approx
// CHECK-PTX: mul.f32
// CHECK-PTX-NOT: mul.f16
// CHECK-PTX-NOT: mul.rn.f16
// CHECK-PTX-NOT: _ZN10__msl_libm3expEf
// CHECK-PTX-NOT: _ZN10__msl_libm3logEf
