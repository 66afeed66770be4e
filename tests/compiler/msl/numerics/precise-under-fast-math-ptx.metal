// Under -ffast-math (the default), metal::precise:: stays precise on the GPU:
// precise::divide and precise::sqrt are correctly rounded (div.rn, sqrt.rn)
// and precise::sin is the accurate kernel, not the PTX approximation, while
// fast:: uses the approximate instructions.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void precise_k(device float *f [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  f[i] = precise::sin(f[i]) + precise::divide(f[i + 1], f[i + 2]) + precise::sqrt(f[i + 3]);
}
// CHECK-PTX: .entry precise_k(
// CHECK-PTX-NOT: sin.approx
// CHECK-PTX-NOT: div.approx
// CHECK-PTX-NOT: div.full
// CHECK-PTX-NOT: sqrt.approx
// CHECK-PTX: div.rn.f32
// CHECK-PTX: .func  (.param .b32 func_retval0) _ZN10__msl_libm3sinEf(
// CHECK-PTX: sqrt.rn.f32
