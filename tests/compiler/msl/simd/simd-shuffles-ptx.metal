// SIMD-group broadcast/shuffles lower to PTX shfl.sync over the active mask
// of a 32-lane warp: idx for broadcast/shuffle, up/down/bfly for the
// relative forms (clamp 31, segment mask 0 = the whole warp).
// msl-target: nvptx64
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]], device float4 *f [[buffer(1)]]) {
  u[0] = simd_broadcast(u[10], 5);
  u[1] = simd_shuffle_up(u[11], 3);
  u[2] = simd_shuffle_down(u[12], 6);
  u[3] = simd_shuffle_xor(u[13], 9);
  f[0] = simd_shuffle(f[1], 7);
}
// CHECK-PTX: activemask.b32
// CHECK-PTX: shfl.sync.idx.b32
// CHECK-PTX: , 5, 31,
// CHECK-PTX: shfl.sync.up.b32
// CHECK-PTX: , 3, 0,
// CHECK-PTX: shfl.sync.down.b32
// CHECK-PTX: , 6, 31,
// CHECK-PTX: shfl.sync.bfly.b32
// CHECK-PTX: , 9, 31,
// CHECK-PTX: , 7, 31,
