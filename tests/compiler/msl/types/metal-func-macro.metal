// METAL_FUNC (from <metal_stdlib>) declares an always-inline helper.
#include <metal_stdlib>
using namespace metal;

METAL_FUNC float twice(float x) { return 2 * x; }

kernel void k(device float *o [[buffer(0)]]) { o[0] = twice(4); }
// CHECK-IR: store float 8.000000e+00
// CHECK-IR-NOT: @_Z5twicef(
