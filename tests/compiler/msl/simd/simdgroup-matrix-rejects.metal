// simdgroup matrices need Metal 2.3 and a half or float element type.
// msl-options: -std=macos-metal2.2
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]]) {
  simdgroup_float8x8 m = make_filled_simdgroup_matrix<float, 8, 8>(1.0f); // expected-error {{needs Metal 2.3 (-std=macos-metal2.3 or later)}}
  simdgroup_store(m, f); // expected-error {{needs Metal 2.3}}
  simdgroup_matrix<int, 8, 8> bad; // expected-error {{element type must be half, bfloat or float}}
}
