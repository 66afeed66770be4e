// Matrix arithmetic (MSL 2.0 section 2.3.2): m*v is the combination of the
// columns, v*m takes dot products with the columns, m*m composes, scalars
// scale every element, + and - are element-wise.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float3 *w [[buffer(1)]], device float4 *q [[buffer(2)]]) {
  float2x2 a = float2x2(float2(1, 2), float2(3, 4)); // columns (1,2) and (3,4)
  float2x2 b = float2x2(float2(5, 6), float2(7, 8));
  q[3] = float4(a * float2(1, 10),        // (31, 42)
                float2(1, 10) * a);       // (21, 43)
  float2x2 ab = a * b;                    // columns (23, 34) and (31, 46)
  q[0] = float4(ab[0], ab[1]);
  float2x2 s = 2 * a + a * 0.5f - (-b);   // columns (7.5, 11) and (14.5, 18)
  q[1] = float4(s[0], s[1]);
  float3x2 r = float3x2(float2(1, 0), float2(0, 1), float2(1, 1));
  w[0] = float2(2, 3) * r;                // non-square: (2, 3, 5)
  q[4] = float4(r * float3(1, 2, 3), 0, 0); // (4, 5)
  float2x2 c = a;
  c += b; c -= a; c *= 3; c *= a;         // 3b * a: columns (57, 66) and (129, 150)
  q[2] = float4(c[0], c[1]);
}
// CHECK-IR: store <4 x float> <float 3.100000e+01, float 4.200000e+01, float 2.100000e+01, float 4.300000e+01>
// CHECK-IR: store <4 x float> <float 2.300000e+01, float 3.400000e+01, float 3.100000e+01, float 4.600000e+01>
// CHECK-IR: store <4 x float> <float 7.500000e+00, float 1.100000e+01, float 1.450000e+01, float 1.800000e+01>
// CHECK-IR: <float 2.000000e+00, float 3.000000e+00, float 5.000000e+00
// CHECK-IR: store <4 x float> <float 4.000000e+00, float 5.000000e+00, float 0.000000e+00, float 0.000000e+00>
// CHECK-IR: store <4 x float> <float 5.700000e+01, float 6.600000e+01, float 1.290000e+02, float 1.500000e+02>
