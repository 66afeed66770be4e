// redux.sync is integer-only: a float sum (and min), a 64-bit integer sum and
// an integer product stay the shuffle butterfly (xor 16..1), also on sm_90.
// msl-target: nvptx64
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], device long *l [[buffer(1)]], device int *p [[buffer(2)]],
              uint t [[thread_position_in_grid]]) {
  f[t] = simd_sum(f[t]) + simd_min(f[t]);
  l[t] = simd_sum(l[t]);
  p[t] = simd_product(p[t]);
}
// CHECK-PTX-NOT: redux
// CHECK-PTX: shfl.sync.bfly.b32
// CHECK-PTX: , 16, 31,
// CHECK-PTX: , 1, 31,
