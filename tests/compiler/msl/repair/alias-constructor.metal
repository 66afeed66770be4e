// A vector constructor called through the vec alias template
// (`vec<T, 4>(a, b, c, d)`, spirv-cross's helpers) builds the vector.
#include <metal_stdlib>
using namespace metal;

template <typename T> vec<T, 4> widen(T x, T y) { return vec<T, 4>(x, y, x + y, 0); }

kernel void k(device float4 *f [[buffer(0)]], device int4 *i [[buffer(1)]]) {
  f[0] = widen(1.5f, 2.0f);
  i[0] = vec<int, 4>(7, 8, 9, 10);
}
// CHECK-IR: <float 1.500000e+00, float 2.000000e+00, float 3.500000e+00, float 0.000000e+00>
// CHECK-IR: <i32 7, i32 8, i32 9, i32 10>
