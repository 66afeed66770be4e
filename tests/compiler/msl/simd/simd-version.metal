// SIMD-group functions: shuffles since macOS Metal 2.0, votes/reductions
// since 2.1, simd_is_helper_thread since 2.3.
// msl-options: -std=macos-metal2.0
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]]) {
  u[0] = simd_shuffle(u[1], 2);
  u[1] = simd_sum(u[2]);        // expected-error {{needs Metal 2.1 (-std=macos-metal2.1 or later)}}
  u[2] = simd_all(u[3] > 1);    // expected-error {{needs Metal 2.1}}
  u[3] = quad_broadcast(u[4], 1); // expected-error {{needs Metal 2.1}}
  u[4] = simd_is_helper_thread(); // expected-error {{needs Metal 2.3}}
}
