// Vector function constants given by index (`// msl-constant: 0=2,3` is
// lane by lane): ushort2, half4, int3 (negative lanes), float (one value for
// every lane of a float4), boolN as 0/1 lanes; one left undefined, which
// is_function_constant_defined sees, in a program-scope initializer.
// msl-constant: 0=2,3
// msl-constant: 1=0.5,1,2,4
// msl-constant: 2=1,-2,3
// msl-constant: 3=true,false
// msl-constant: 5=0.25
#include <metal_stdlib>
using namespace metal;

constant ushort2 stride [[function_constant(0)]];
constant half4 tint [[function_constant(1)]];
constant int3 offsets [[function_constant(2)]];
constant bool2 flags [[function_constant(3)]];
constant float2 unset [[function_constant(4)]];
constant float4 splat [[function_constant(5)]];
constant float2 fallback = is_function_constant_defined(unset) ? unset : float2(9.0f, 8.0f);

kernel void k(device ushort *out [[buffer(0)]], device half4 *h [[buffer(1)]], device int *n [[buffer(2)]],
              device float2 *f [[buffer(3)]], device float4 *s [[buffer(4)]]) {
  out[0] = stride.x * 10 + stride.y;                                    // 23
  h[0] = tint;
  n[0] = offsets.x + offsets.y * 10 + offsets.z * 100 + (flags.x ? 1000 : 0) + (flags.y ? 10000 : 0); // 1281
  f[0] = fallback;
  s[0] = splat * 4.0f;
}
// CHECK-IR: store i16 23
// CHECK-IR: store <4 x half> <half 0xH3800, half 0xH3C00, half 0xH4000, half 0xH4400>
// CHECK-IR: store i32 1281
// CHECK-IR: store <2 x float> <float 9.000000e+00, float 8.000000e+00>
// CHECK-IR: store <4 x float> <float 1.000000e+00, float 1.000000e+00, float 1.000000e+00, float 1.000000e+00>
