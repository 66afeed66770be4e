// Texture atomics are Metal 3.1.
// msl-options: -std=macos-metal2.3
#include <metal_stdlib>
using namespace metal;

uint f(texture2d<uint, access::read_write> t) {
  return t.atomic_fetch_add(uint2(0), 1u).x; // expected-error {{needs Metal 3.1 (-std=metal3.1 or later)}}
}
