// Matrix constructors are constant initializers with Metal's meaning:
// scalar on the diagonal, column vectors, column-major scalars, half<->float
// conversion, and value-initialisation to zero.
#include <metal_stdlib>
using namespace metal;

constant float3x3 kDiag = float3x3(2);
constant float2x3 kCols = float2x3(float3(1, 2, 3), float3(4, 5, 6));
constant float3x2 kScalars = float3x2(1, 2, 3, 4, 5, 6);
constant half2x2 kHalf = half2x2(float2x2(float2(1.5, 2), float2(3, 4)));
constant float2x2 kZero = float2x2();

kernel void k(device float3 *c [[buffer(0)]], device float2 *s [[buffer(1)]],
              device half2 *h [[buffer(2)]], device float *f [[buffer(3)]]) {
  c[0] = kDiag[1];
  c[1] = kCols[1];
  s[0] = kScalars[2];
  h[0] = kHalf[0];
  f[0] = kZero[1][1];
  float2x2 b = {float2(7, 8), float2(9, 10)};
  s[1] = b[1];
  f[1] = float4x4(1)[3][3];
}
// CHECK-IR: @kDiag = dso_local local_unnamed_addr constant %"struct.metal::matrix" { [3 x <3 x float>] [<3 x float> <float 2.000000e+00, float 0.000000e+00, float 0.000000e+00>, <3 x float> <float 0.000000e+00, float 2.000000e+00, float 0.000000e+00>
// CHECK-IR: [2 x <3 x float>] [<3 x float> <float 1.000000e+00, float 2.000000e+00, float 3.000000e+00>, <3 x float> <float 4.000000e+00, float 5.000000e+00, float 6.000000e+00>
// CHECK-IR: [3 x <2 x float>] [<2 x float> <float 1.000000e+00, float 2.000000e+00>, <2 x float> <float 3.000000e+00, float 4.000000e+00>, <2 x float> <float 5.000000e+00, float 6.000000e+00>
// CHECK-IR: <2 x half> <half 0xH3E00, half 0xH4000>
// CHECK-IR: store <2 x float> <float 9.000000e+00, float 1.000000e+01>
// CHECK-IR-NOT: global_ctors
