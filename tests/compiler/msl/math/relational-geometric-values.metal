// Relational/geometric additions: signbit sees -0.0; isnormal rejects
// subnormals; reflect, faceforward (n when dot(nref, i) < 0), refract (0 on
// total internal reflection) and distance_squared values.
// msl-options: -fno-fast-math
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]], device float3 *g [[buffer(1)]], device float *f [[buffer(2)]]) {
  u[0] = signbit(-0.0f) + isnormal(1e-40f) * 2 + isnormal(1.0f) * 4 + isunordered(1.0f, 2.0f) * 8 + isordered(1.0f, 2.0f) * 16;
  g[0] = reflect(float3(1, -1, 0), float3(0, 1, 0));
  g[1] = faceforward(float3(0, 1, 0), float3(0, -1, 0), float3(0, 1, 0));
  g[2] = refract(float3(1, 0, 0), float3(0, 1, 0), 2.0f);
  f[0] = distance_squared(float3(1, 2, 3), float3(1, 0, 0));
}
// CHECK-IR: store i32 21
// CHECK-IR: <float 1.000000e+00, float 1.000000e+00, float 0.000000e+00, float undef>
// CHECK-IR: <float 0.000000e+00, float 1.000000e+00, float 0.000000e+00, float undef>
// CHECK-IR: <float 0.000000e+00, float 0.000000e+00, float 0.000000e+00, float undef>
// CHECK-IR: store float 1.300000e+01
