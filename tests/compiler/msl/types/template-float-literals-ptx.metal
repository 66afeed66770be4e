// An unsuffixed floating literal is float in Metal, also inside templates
// (MetalPetal's `if (t < 1.0/6.0)` in a template over half and float): the
// GPU code does no double arithmetic.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

template <typename T> T hue(T p, T q, T t) {
  if (t < 1.0 / 6.0)
    return p + (q - p) * 6.0 * t;
  return q * 0.5;
}

kernel void k(device half *h [[buffer(0)]], device float *f [[buffer(1)]]) {
  h[0] = hue(h[1], h[2], h[3]);
  f[0] = hue(f[1], f[2], f[3]);
}
// CHECK-PTX: .entry k(
// CHECK-PTX-NOT: .f64
