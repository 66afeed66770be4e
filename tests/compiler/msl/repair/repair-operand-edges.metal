// Repairs find their operands: after `return`, and a vec<T, 4>(...)
// constructor in the second arm of ?: (not a declaration).
#include <metal_stdlib>
using namespace metal;

bool2 unordered_or_equal(float2 a, float2 b) {
  return a == b || isunordered(a, b);
}

template <typename T> vec<T, 4> pick(bool c, vec<T, 4> a) {
  return c ? a : vec<T, 4>(T(1), T(2), T(3), T(4));
}

kernel void k(device float2 *v [[buffer(0)]], device bool2 *o [[buffer(1)]],
              device float4 *f [[buffer(2)]]) {
  o[0] = unordered_or_equal(v[0], v[1]);
  f[0] = pick<float>(false, f[1]);
}
// CHECK-IR: fcmp fast oeq <2 x float>
// CHECK-IR: <float 1.000000e+00, float 2.000000e+00, float 3.000000e+00, float 4.000000e+00>
