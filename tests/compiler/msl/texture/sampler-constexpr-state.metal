// A constexpr sampler folds to its packed 64-bit state (layout in
// metal_texture): any order and subset of the enums, the spec's defaults for
// the rest (clamp_to_edge, nearest, compare_func::never, max_anisotropy 1,
// lod_clamp(0, FLT_MAX) -> half +inf).
#include <metal_stdlib>
using namespace metal;

constexpr sampler kRepeat(coord::normalized, address::repeat, filter::linear);

ulong repeat_linear() { return kRepeat.__state; }
// CHECK-IR: ret i64 8935141660704247076
ulong defaults() { constexpr sampler s; return s.__state; }
// CHECK-IR: ret i64 8935141660704243858
ulong mixed() {
  constexpr sampler s(lod_clamp(1.0, 2.0), max_anisotropy(16), coord::pixel, compare_func::less,
                      s_address::clamp_to_zero, mip_filter::linear, filter::linear);
  return s.__state;
}
// CHECK-IR: ret i64 4611751989141859473
// A constexpr sampler used for sampling passes the same constant to the hook.
float4 use(texture2d<float> t, float2 uv) { return t.sample(kRepeat, uv); }
// CHECK-IR: @__msl_texture_sample_f(i64 noundef %t.coerce, i64 noundef 8935141660704247076
