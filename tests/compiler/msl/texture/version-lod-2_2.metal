// min_lod_clamp and calculate_*_lod are Metal 2.2.
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

float4 f(texture2d<float> t, sampler s) {
  float l = t.calculate_clamped_lod(s, float2(0));        // expected-error {{needs Metal 2.2 (-std=macos-metal2.2 or later)}}
  return t.sample(s, float2(0), min_lod_clamp(1.0)) + l;  // expected-error {{needs Metal 2.2 (-std=macos-metal2.2 or later)}}
}
