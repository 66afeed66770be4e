// A float scalar with a half vector converts the scalar to half (Metal's
// implicit conversion); OpenCL's rank rule would reject it.
#include <metal_stdlib>
using namespace metal;

typedef half4 ftype4;

kernel void k(device half4 *h [[buffer(0)]]) {
  half4 x = h[0] * 255.0;
  ftype4 y = h[1];
  y *= 0.5;
  h[2] = x + y;
  h[3] = h[0] * 2.0 + 1.0; // the second operator is checked once the first is repaired
}
// CHECK-IR: fmul fast <4 x half>
// CHECK-IR: 0xH5BF8
// CHECK-IR-NOT: fpext
