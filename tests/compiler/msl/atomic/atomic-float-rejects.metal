// atomic_float needs Metal 3.0 and has no bitwise or min/max operations.
// msl-options: -std=macos-metal2.4
#include <metal_stdlib>
using namespace metal;

kernel void k(device atomic_float *f [[buffer(0)]], device float *o [[buffer(1)]]) {
  o[0] = atomic_fetch_add_explicit(f, 1.0f, memory_order_relaxed); // expected-error {{needs Metal 3.0 (-std=metal3.0 or later)}}
  o[1] = atomic_fetch_or_explicit(f, 1.0f, memory_order_relaxed);  // expected-error {{no matching function for call to 'atomic_fetch_or_explicit'}}
}
