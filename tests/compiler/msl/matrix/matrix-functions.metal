// determinant and transpose (MSL 2.0 section 5.7).
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], device float3 *c [[buffer(1)]],
              device half *h [[buffer(2)]]) {
  f[0] = determinant(float2x2(1, 2, 3, 4));                                  // -2
  f[1] = determinant(float3x3(float3(2, 0, 1), float3(1, 3, 2), float3(1, 1, 2))); // 6
  f[2] = determinant(float4x4(float4(1, 0, 2, -1), float4(3, 0, 0, 5),
                              float4(2, 1, 4, -3), float4(1, 0, 5, 0)));      // 30
  float2x3 m = float2x3(float3(1, 2, 3), float3(4, 5, 6));
  float3x2 t = transpose(m);                                                  // columns (1,4) (2,5) (3,6)
  c[0] = float3(t[0], 0);
  c[1] = float3(t[2], 0);
  h[0] = determinant(half2x2(half2(2, 1), half2(1, 3)));                     // 5
}
// CHECK-IR: store float -2.000000e+00
// CHECK-IR: store float 6.000000e+00
// CHECK-IR: store float 3.000000e+01
// CHECK-IR: <float 1.000000e+00, float 4.000000e+00, float 0.000000e+00
// CHECK-IR: <float 3.000000e+00, float 6.000000e+00, float 0.000000e+00
// CHECK-IR: store half 0xH4500
