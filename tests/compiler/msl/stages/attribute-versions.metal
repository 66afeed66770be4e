// Attributes newer than the language version are errors that name the
// version (and the -std= value) that has them.
// msl-options: -std=macos-metal1.1
#include <metal_stdlib>
using namespace metal;

constant bool flag [[function_constant(0)]]; // expected-error {{attribute 'function_constant' needs Metal 1.2 (-std=macos-metal1.2 or later)}}

struct Out {
  float4 p [[position, invariant]]; // expected-error {{attribute 'invariant' needs Metal 2.1 (-std=macos-metal2.1 or later)}}
};

vertex Out v(uint base [[base_vertex]]) { return Out{float4(base)}; }

kernel void k(device uint *out [[buffer(0)]],
              uint lane [[thread_index_in_simdgroup]]) { // expected-error {{attribute 'thread_index_in_simdgroup' needs Metal 2.0 (-std=macos-metal2.0 or later)}}
  out[0] = lane;
}
