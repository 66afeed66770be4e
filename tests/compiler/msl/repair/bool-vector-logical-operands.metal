// A boolN beside a vector comparison in || or && (spirv-cross's unordered
// comparisons: `isunordered(a, b) || a < b`): both are boolN in Metal, and
// the lanes are combined logically.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float2 *v [[buffer(0)]], device bool2 *out [[buffer(1)]]) {
  bool2 unordered_or_less = (isunordered(v[0], v[1]) || v[0] < v[1]);
  bool2 ordered_and_equal = v[0] == v[1] && isordered(v[0], v[1]);
  bool2 parenthesized = isunordered(v[0], v[1]) || (v[0]) > (v[1]);
  out[0] = unordered_or_less;
  out[2] = parenthesized;
  out[1] = ordered_and_equal;
}
// CHECK-IR: fcmp fast olt <2 x float>
// CHECK-IR: fcmp fast oeq <2 x float>
// CHECK-IR: fcmp fast ogt <2 x float>
