// `uint4 size(a, b, c, d);`: a vector variable with direct initialization from
// several values is the constructor uint4(a, b, c, d) (ANGLE writes this), also
// with a template's vec<T, N> type.
#include <metal_stdlib>
using namespace metal;

template <typename T> vec<T, 4> four_of(T a, T b) {
  vec<T, 4> p(a, b, a, b);
  return p;
}

kernel void k(device uint4 *out [[buffer(0)]], device float4 *f [[buffer(1)]]) {
  uint4 size(3u, 4u, 5u, 6u);
  out[0] = size;
  f[0] = four_of(1.5f, 2.5f);
}
// CHECK-IR: store <4 x i32> <i32 3, i32 4, i32 5, i32 6>
// CHECK-IR: store <4 x float> <float 1.500000e+00, float 2.500000e+00, float 1.500000e+00, float 2.500000e+00>
