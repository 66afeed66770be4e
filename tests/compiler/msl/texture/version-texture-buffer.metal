// texture_buffer is Metal 2.1.
// msl-options: -std=macos-metal2.0
#include <metal_stdlib>
using namespace metal;

float4 f(texture_buffer<float> t) { return t.read(uint(0)); } // expected-error {{needs Metal 2.1 (-std=macos-metal2.1 or later)}}
