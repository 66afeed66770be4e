// Quad-group functions are the SIMD-group ones on clusters of 4 lanes: the
// PTX shfl segment mask (32-4)<<8 | clamp gives c = 7199 (idx/down/bfly) and
// 7168 (up). quad_sum is a 2-step butterfly (xor 2, 1).
// msl-target: nvptx64
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]], device half2 *h [[buffer(1)]]) {
  u[0] = quad_broadcast(u[10], 2);
  u[1] = quad_shuffle_up(u[11], 1);
  h[0] = quad_shuffle_xor(h[1], 3);
  u[2] = quad_sum(u[12]);
}
// CHECK-PTX: shfl.sync.idx.b32
// CHECK-PTX: , 2, 7199,
// CHECK-PTX: shfl.sync.up.b32
// CHECK-PTX: , 1, 7168,
// CHECK-PTX: , 3, 7199,
// CHECK-PTX: shfl.sync.bfly.b32
// CHECK-PTX-NOT: , 16, 31,
