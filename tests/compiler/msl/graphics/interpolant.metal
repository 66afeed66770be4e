// Pull-model interpolation (MSL 2.3): interpolant<T, P> fragment inputs are
// interpolated where the shader asks; the hook gets the mode and place.
// msl-options: -std=macos-metal2.3
#include <metal_stdlib>
using namespace metal;

struct In {
  interpolant<float4, interpolation::no_perspective> color [[user(locn0)]];
  interpolant<float2, interpolation::perspective> uv [[user(locn1)]];
};

fragment float4 f(In in [[stage_in]]) {
  return in.color.interpolate_at_centroid() + float4(in.uv.interpolate_at_offset(float2(0.25)), 0, 0) +
         in.uv.interpolate_at_sample(2).x;
}
// CHECK-IR: i1 noundef zeroext false, i32 noundef 1
// CHECK-REFLECTION: "user:locn1"
