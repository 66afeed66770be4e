// pack/unpack fold to the spec's values: rint(clamp(x) * max), component 0
// in the low bits; snorm unpack clamps -128/127 to -1.
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *o [[buffer(0)]], device float4 *f [[buffer(1)]]) {
  o[0] = pack_float_to_unorm4x8(float4(0.0, 1.0, 0.5, 2.0));    // 0xFF80FF00
  o[1] = pack_float_to_snorm4x8(float4(-1.0, 1.0, 0.5, -2.0));  // 0x81407F81
  o[2] = pack_float_to_unorm2x16(float2(1.0, 0.25));            // 0x4000FFFF
  o[3] = pack_float_to_snorm2x16(float2(-0.5, 1.0));            // 0x7FFFC000
  f[0] = unpack_unorm4x8_to_float(0x80FF0033u);
  f[1] = unpack_snorm4x8_to_float(0x8081007Fu);
  f[2] = float4(unpack_unorm2x16_to_float(0xFFFF0000u), unpack_snorm2x16_to_float(0x80017FFFu));
  f[3] = unpack_unorm4x8_srgb_to_float(0xFF8000FFu);
}
// CHECK-IR: store i32 -8323328
// CHECK-IR: store i32 -2126479487
// CHECK-IR: store i32 1073807359
// CHECK-IR: store i32 2147467264
// CHECK-IR: <float 0x3FC99999C0000000, float 0.000000e+00, float 1.000000e+00, float 0x3FE0101020000000>
// CHECK-IR: <float 1.000000e+00, float 0.000000e+00, float -1.000000e+00, float -1.000000e+00>
// CHECK-IR: <float 0.000000e+00, float 1.000000e+00, float 1.000000e+00, float -1.000000e+00>
// CHECK-IR: <float 1.000000e+00, float 0.000000e+00, float 0x3FCBA15160000000, float 1.000000e+00>
