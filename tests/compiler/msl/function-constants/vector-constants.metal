// Vector function constants (Forge's `constant ushort2 stride`): the value
// gives each lane ("2,3") or one for all ("5").
// msl-constant: stride=2,3
// msl-constant: 1=5
#include <metal_stdlib>
using namespace metal;

constant ushort2 stride [[function_constant(0)]];
constant float3 fill [[function_constant(1)]];

kernel void k(device ushort *out [[buffer(0)]], device float *f [[buffer(1)]]) {
  out[0] = stride.x * 10 + stride.y;
  f[0] = fill.x + fill.y * 10.0f + fill.z * 100.0f;
}
// CHECK-IR: store i16 23
// CHECK-IR: store float 5.550000e+02
