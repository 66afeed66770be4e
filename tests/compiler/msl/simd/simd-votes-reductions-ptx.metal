// Votes use vote.sync; simd_sum is a 5-step butterfly (xor 16..1) over the
// warp; the prefix scan shifts up by 1, 2, 4, 8, 16 lanes.
// msl-target: nvptx64
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]], device float *f [[buffer(1)]]) {
  u[0] = simd_all(u[1] > 2) ? 1u : 0u;
  u[2] = simd_any(u[3] > 2) ? 1u : 0u;
  u[4] = (uint)(simd_vote::vote_t)simd_ballot(u[5] != 0);
  f[0] = simd_sum(f[1]);
  u[6] = simd_prefix_exclusive_sum(u[7]);
}
// CHECK-PTX: vote.sync.all.pred
// CHECK-PTX: vote.sync.any.pred
// CHECK-PTX: vote.sync.ballot.b32
// CHECK-PTX: shfl.sync.bfly.b32
// CHECK-PTX: , 16, 31,
// CHECK-PTX: , 8, 31,
// CHECK-PTX: , 1, 31,
// CHECK-PTX: shfl.sync.up.b32
// CHECK-PTX: , 16, 0,
