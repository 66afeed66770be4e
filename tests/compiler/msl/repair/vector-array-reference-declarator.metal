// `float4 (&out)[2]`: a reference-to-array declarator whose vector type name
// is followed by `(` (spirv-cross returns arrays so). It declares a
// parameter of type reference to float4[2].
#include <metal_stdlib>
using namespace metal;

void fill(thread float4 (&out)[2], float x) {
  out[0] = float4(x);
  out[1] = float4(x + 1.0);
}

kernel void k(device float4 *result [[buffer(0)]]) {
  float4 values[2];
  fill(values, 2.0);
  result[0] = values[0] + values[1];
}
// The parameter is a reference to an array of two float4 (mangled RA2_...Dv4_f).
// CHECK-IR: @_Z4fillRA2_U9CLprivateDv4_ff(ptr
