// interpolant's functions need Metal 2.3.
// msl-options: -std=macos-metal2.2
#include <metal_stdlib>
using namespace metal;

struct In { interpolant<float4, interpolation::perspective> c [[user(locn0)]]; };
fragment float4 f(In in [[stage_in]]) {
  return in.c.interpolate_at_center(); // expected-error {{needs Metal 2.3}}
}
