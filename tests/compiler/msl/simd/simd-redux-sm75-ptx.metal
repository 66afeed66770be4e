// Below sm_80 there is no redux.sync: the integer SIMD-group reductions are
// the shuffle butterfly (xor 16..1) over the active mask.
// msl-target: nvptx64 sm_75
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device int *i [[buffer(0)]], device uint *u [[buffer(1)]], uint t [[thread_position_in_grid]]) {
  i[t] = simd_sum(i[t]) + simd_min(i[t]) + simd_max(i[t]);
  u[t] = simd_and(u[t]) ^ simd_or(u[t]) ^ simd_xor(u[t]);
}
// CHECK-PTX: .target sm_75
// CHECK-PTX-NOT: redux
// CHECK-PTX: activemask.b32
// CHECK-PTX: shfl.sync.bfly.b32
// CHECK-PTX: , 16, 31,
