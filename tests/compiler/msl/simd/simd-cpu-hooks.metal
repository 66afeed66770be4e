// On the CPU the SIMD-group functions call the frontend's hooks: a 32-bit
// word shuffle from a source lane, the ballot, the lane id and the width.
// A 64-bit-wide value (float2) moves as two words; half as one widened word.
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device float2 *f [[buffer(0)]], device half *h [[buffer(1)]], device uint *u [[buffer(2)]]) {
  f[0] = simd_broadcast(f[1], 3);
  h[0] = quad_shuffle(h[1], 1);
  u[0] = simd_all(u[1] > 2) ? 1u : 0u;
}
// CHECK-IR: call noundef i32 @__msl_simd_shuffle(
// CHECK-IR: call noundef i32 @__msl_simd_lane_id()
// CHECK-IR: call noundef i32 @__msl_simd_width()
// CHECK-IR: call noundef i64 @__msl_simd_ballot(i1
// CHECK-IR: zext i16
