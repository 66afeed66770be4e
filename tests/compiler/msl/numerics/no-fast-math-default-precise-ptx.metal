// With -fno-fast-math the unqualified math functions are the precise
// variants (spec 6.2: the option selects the high-precision functions): no
// approximate transcendental, division or square root instruction remains.
// msl-options: -fno-fast-math
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  f[i] = sin(f[i]) + cos(f[i + 1]) + exp(f[i + 2]) + log(f[i + 3]) + pow(f[i + 4], f[i + 5]) +
         sqrt(f[i + 6]) + f[i + 7] / f[i + 8] + tan(f[i + 9]) + atan2(f[i + 10], f[i + 11]);
}
// CHECK-PTX: .entry k(
// CHECK-PTX-NOT: .approx
// CHECK-PTX: div.rn.f32
// CHECK-PTX: sqrt.rn.f32
