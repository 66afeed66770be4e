// A vector built from one longer vector takes its first components,
// converted (float3(float4), int2(float4)).
#include <metal_stdlib>
using namespace metal;

constant float4 kWide = float4(1.5, 2.5, 3.5, 4.5);

kernel void k(device float3 *f [[buffer(0)]], device int2 *i [[buffer(1)]]) {
  f[0] = float3(kWide);
  i[0] = int2(kWide);
}
// CHECK-IR: <float 1.500000e+00, float 2.500000e+00, float 3.500000e+00
// CHECK-IR: 0x200000001
