// Integer-only functions reject floating-point arguments; min3 needs 2.1.
// msl-options: -std=macos-metal2.0
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], device uint *u [[buffer(1)]]) {
  f[0] = extract_bits(f[1], 0, 4); // expected-error {{no matching function for call to 'extract_bits'}}
  f[1] = mulhi(f[2], f[3]);        // expected-error {{no matching function for call to 'mulhi'}}
  u[0] = min3(u[1], u[2], u[3]);   // expected-error {{needs Metal 2.1 (-std=macos-metal2.1 or later)}}
}
