// Function constants take the compile's values (by index or by name); one
// without a value is undefined and is_function_constant_defined says so.
// msl-constant: 0=true
// msl-constant: scale=0.5
#include <metal_stdlib>
using namespace metal;

constant bool use_bias [[function_constant(0)]];
constant float scale [[function_constant(1)]];
constant int unset [[function_constant(2)]];
constant float s = is_function_constant_defined(scale) ? scale : 2.0;
constant int fallback = is_function_constant_defined(unset) ? unset : 7;

kernel void k(device float *a [[buffer(0)]], device float *bias [[buffer(1), function_constant(use_bias)]],
              device int *b [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  a[i] = a[i] * s + (use_bias ? bias[i] : 0.0);
  b[0] = fallback;
}
// The value given by name scales, the one by index enables the bias load,
// and the undefined constant falls back to 7.
// CHECK-IR: , 5.000000e-01
// CHECK-IR-NOT: , 2.000000e+00
// CHECK-IR: fadd fast float
// CHECK-IR: store i32 7
// CHECK-REFLECTION: "function_constant": "use_bias"
// CHECK-REFLECTION: "present": true
