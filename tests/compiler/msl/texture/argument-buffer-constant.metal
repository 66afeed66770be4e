// Textures and samplers in a `constant` argument buffer: the member functions
// work on a __constant object, the objects copy out of it, and they stay
// trivially copyable 8-byte handles.
#include <metal_stdlib>
using namespace metal;

struct Material {
  texture2d<float> albedo;
  sampler smp;
  depth2d<float> shadow;
};
static_assert(sizeof(texture2d<float>) == 8 && sizeof(sampler) == 8, "one 64-bit handle");
static_assert(__is_trivially_copyable(texture2d<float>) && __is_trivially_copyable(sampler), "trivial");

float4 shade(texture2d<float> t, sampler s, float2 uv) { return t.sample(s, uv); }

kernel void k(constant Material &m [[buffer(0)]], device float4 *out [[buffer(1)]]) {
  out[0] = m.albedo.sample(m.smp, float2(0.5)) + shade(m.albedo, m.smp, float2(0.25));
  out[1] = float4(m.shadow.sample_compare(m.smp, float2(0.5), 0.5) + float(m.shadow.get_width()));
}
// CHECK-IR: @__msl_texture_sample_f(
// CHECK-IR: @__msl_texture_sample_compare(
// CHECK-IR: @__msl_texture_query(
