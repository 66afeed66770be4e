// Unsuffixed literals are float in Metal; inside templates Clang types them
// double, and the library still accepts them (metalpetal's colour helpers).
#include <metal_stdlib>
using namespace metal;

template <typename T> T to_linear(T c) { return c < 0.081 ? 0.222 * c : powr(0.91 * c + 0.09, 2.222); }

kernel void k(device float *f [[buffer(0)]], device half *h [[buffer(1)]]) {
  f[0] = to_linear(f[1]);
  h[0] = to_linear(h[1]);
}
