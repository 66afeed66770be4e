// An argument with [[function_constant(name)]] exists only when that bool is
// true in the compile: the reflection says whether it is present, for a
// function constant and for a constant computed from one (an undefined
// constant is false).
// msl-constant: use_bias=false
#include <metal_stdlib>
using namespace metal;

constant bool use_bias [[function_constant(0)]];
constant bool use_scale [[function_constant(1)]];
constant bool no_bias = !use_bias;

kernel void k(device float *a [[buffer(0)]], device const float *bias [[buffer(1), function_constant(use_bias)]],
              device const float *scale [[buffer(2), function_constant(use_scale)]],
              device const float *other [[buffer(3), function_constant(no_bias)]],
              uint i [[thread_position_in_grid]]) {
  if (use_bias)
    a[i] += bias[i];
  if (use_scale)
    a[i] *= scale[i];
  if (no_bias)
    a[i] -= other[i];
}
// CHECK-REFLECTION: "function_constant": "use_bias",
// CHECK-REFLECTION: "function_constant": "use_scale",
// CHECK-REFLECTION: "function_constant": "no_bias",
// CHECK-REFLECTION: "present": false
// CHECK-REFLECTION: "present": true
