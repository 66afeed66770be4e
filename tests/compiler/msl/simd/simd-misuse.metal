// Bitwise reductions take integers only; a vote converts to its mask only
// explicitly.
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], device ulong *u [[buffer(1)]]) {
  f[0] = simd_and(f[1]); // expected-error {{no matching function for call to 'simd_and'}}
  u[0] = simd_ballot(true); // expected-error {{incompatible type 'simd_vote'}}
}
