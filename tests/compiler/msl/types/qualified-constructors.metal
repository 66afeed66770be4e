// Vector and matrix constructors may be namespace-qualified, as generated
// code (naga, tint) writes them, also without `using namespace metal`.
#include <metal_stdlib>

constant metal::float4 kV = metal::float4(metal::float2(1, 2), 3, 4);
constant metal::float2x2 kM = metal::float2x2(metal::float2(1.0, 2.0), metal::float2(3.0, 4.0));

kernel void k(device metal::float4 *o [[buffer(0)]], device metal::uint4 *u [[buffer(1)]]) {
  o[0] = kV + ::float4(1);
  o[1] = metal::float4(kM[0], kM[1]);
  u[0] = metal::uint4(metal::float4(7.9, 2.2, 0, 1));
}
// CHECK-IR: <4 x float> <float 1.000000e+00, float 2.000000e+00, float 3.000000e+00, float 4.000000e+00>
// CHECK-IR: store <4 x float> <float 2.000000e+00, float 3.000000e+00, float 4.000000e+00, float 5.000000e+00>
// CHECK-IR: store <4 x i32> <i32 7, i32 2, i32 0, i32 1>
