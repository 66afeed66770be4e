// modf/frexp/ldexp/ilogb/fdim/fmedian3/nextafter fold to the C values;
// ldexp reaches subnormal results.
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], device int *o [[buffer(1)]], device float2 *v [[buffer(2)]]) {
  float i;
  f[0] = modf(-2.75f, i);
  f[1] = i;
  int e;
  f[2] = frexp(48.0f, e);
  o[0] = e;
  f[3] = ldexp(0.75f, 4);
  f[4] = ldexp(1.0f, -140);
  f[5] = fmedian3(5.0f, 1.0f, 3.0f) + fdim(1.0f, 4.0f);
  f[6] = nextafter(1.0f, 2.0f);
  o[1] = ilogb(48.0f);
  float2 ip;
  v[0] = modf(float2(1.5f, -0.25f), ip) + ip * 10.0f;
}
// CHECK-IR: store float -7.500000e-01
// CHECK-IR: store float -2.000000e+00
// CHECK-IR: store float 7.500000e-01
// CHECK-IR: store i32 6
// CHECK-IR: store float 1.200000e+01
// CHECK-IR: store float 0x3730000000000000
// CHECK-IR: store float 3.000000e+00
// CHECK-IR: store float 0x3FF0000020000000
// CHECK-IR: store i32 5
// CHECK-IR: <float 1.050000e+01, float -2.500000e-01>
