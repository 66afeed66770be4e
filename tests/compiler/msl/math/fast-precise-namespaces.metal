// metal::fast:: and metal::precise:: name every floating-point math, common
// and geometric function (as the corpus writes them).
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], device float3 *g [[buffer(1)]]) {
  f[0] = precise::sqrt(4.0f) + fast::min(2.0f, 3.0f) + fast::clamp(5.0f, 0.0, 1.0) + metal::precise::fma(2.0f, 3.0f, 1.0f);
  f[1] = precise::sin(f[2]) + fast::cosh(f[3]) + precise::tanh(f[4]) + precise::powr(f[5], 2.0f) + fast::max3(f[1], f[2], f[3]);
  g[0] = fast::normalize(g[1]) + precise::cross(g[2], g[3]);
}
// CHECK-IR: store float 1.200000e+01
