// On the CPU each SIMD-group function is one exchange (the work-group
// function gives it its meaning): the value published as up to four 64-bit
// words (a float2 as one word, a half zero-extended, a bool as a byte), the
// mask of the lanes that took part, and the lane id.
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device float2 *f [[buffer(0)]], device half *h [[buffer(1)]], device uint *u [[buffer(2)]]) {
  f[0] = simd_broadcast(f[1], 3);
  h[0] = quad_shuffle(h[1], 1);
  u[0] = simd_all(u[1] > 2) ? 1u : 0u;
}
// CHECK-IR: call ptr @__msl_simd_exchange(i32 noundef 1, i64 noundef
// CHECK-IR: call i64 @__msl_simd_exchange_mask()
// CHECK-IR: call noundef i32 @__msl_simd_lane_id()
// CHECK-IR: zext i16
