// The math constants of MSL 2.0 5.5 (float and half forms, MAXFLOAT,
// MAXHALF, INFINITY) are constant expressions; INFINITY under fast math gives
// no warning (the corpus builds with -Werror).
// msl-options: -Werror
#include <metal_stdlib>
using namespace metal;

constant float kTwoPi = 2 * M_PI_F;

kernel void k(device float *f [[buffer(0)]], device half *h [[buffer(1)]]) {
  f[0] = kTwoPi;
  f[1] = MAXFLOAT;
  f[2] = INFINITY;
  h[0] = MAXHALF;
  h[1] = M_SQRT2_H;
}
// CHECK-IR: store float 0x401921FB60000000
// CHECK-IR: store float 0x47EFFFFFE0000000
// CHECK-IR: store float 0x7FF0000000000000
// CHECK-IR: store half 0xH7BFF
// CHECK-IR: store half 0xH3DA8
