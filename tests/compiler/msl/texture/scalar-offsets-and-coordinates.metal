// Apple's texture overloads convert scalars: an integer after the
// coordinate (and after an array texture's index) is a texel offset in
// every dimension (`sample(s, coord, 0)`), a scalar coordinate fills the
// coordinate vector; abs(bool) is an int; __METAL__ is defined.
#include <metal_stdlib>
using namespace metal;
#ifndef __METAL__
#error "__METAL__ is not defined"
#endif

kernel void k(texture2d<float, access::sample> in [[texture(0)]],
              texture2d_array<float, access::sample> layers [[texture(1)]],
              texture2d<float, access::write> out [[texture(2)]],
              uint3 gid [[thread_position_in_grid]]) {
  constexpr sampler s(coord::pixel, filter::nearest, address::clamp_to_zero);
  float4 a = in.sample(s, float2(gid.xy), 0);
  float4 b = layers.sample(s, gid.x, gid.y, gid.z); // coord (x, x), layer y, offset (z, z)
  float4 c = layers.sample(s, float2(gid.xy), gid.z, 1);
  out.write(a + b + c + float(abs(a.x <= 1e-6)), gid.xy);
}
// CHECK-IR: define
