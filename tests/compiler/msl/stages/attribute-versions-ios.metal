// The version hint follows the platform being compiled for; Metal 3 has one
// spelling.
// msl-options: -std=ios-metal2.0
#include <metal_stdlib>
using namespace metal;

struct Out {
  float4 p [[position]];
  uint prim [[primitive_id]]; // expected-error {{needs Metal 2.2 (-std=ios-metal2.2 or later)}}
  bool culled [[primitive_culled]]; // expected-error {{needs Metal 3.0 (-std=metal3.0 or later)}}
};
fragment float4 f(Out in [[stage_in]]) { return in.p; }
