// -ffast-math (the default) lets 1.0 / x use the reciprocal approximation
// and contract multiply-add; the same kernel as correctly-rounded-ptx.metal.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *v [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float4 a = v[i];
  v[i] = float4(a.x + a.y, a.x - a.z, a.y * a.w, 1.0f / a.x);
}
// CHECK-PTX-NOT: rcp.rn.f32
// CHECK-PTX: rcp.approx
