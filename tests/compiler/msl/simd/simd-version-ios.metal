// On iOS the SIMD-group functions need Metal 2.2; quad-group shuffles 2.0.
// msl-options: -std=ios-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]]) {
  u[0] = quad_shuffle(u[1], 2);
  u[1] = simd_shuffle(u[2], 3); // expected-error {{needs Metal 2.2 (-std=ios-metal2.2 or later)}}
}
