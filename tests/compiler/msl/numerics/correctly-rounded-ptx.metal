// MSL 2.0 7.4, table 36: x + y, x - y, x * y and 1.0 / x are correctly
// rounded when fast math is off. On NVPTX that is the .rn forms, 1.0 / x
// as the IEEE reciprocal rcp.rn (never rcp.approx, div.approx or div.full),
// and no contraction into fma.
// msl-options: -fno-fast-math
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *v [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float4 a = v[i];
  v[i] = float4(a.x + a.y, a.x - a.z, a.y * a.w, 1.0f / a.x);
}
// CHECK-PTX: add.rn.f32
// CHECK-PTX: sub.rn.f32
// CHECK-PTX: mul.rn.f32
// CHECK-PTX: rcp.rn.f32
// CHECK-PTX-NOT: rcp.approx
// CHECK-PTX-NOT: div.approx
// CHECK-PTX-NOT: div.full
// CHECK-PTX-NOT: fma.rn.f32
