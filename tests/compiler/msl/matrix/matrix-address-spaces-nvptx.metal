// On NVPTX, columns of a constant-memory matrix and device matrices load
// from global memory (constant memory is read-only device memory there; the
// generic `this` of the member functions is inferred away after inlining).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

struct Uniforms { float4x4 mvp; };

kernel void k(constant Uniforms &u [[buffer(0)]], device float4x4 *dm [[buffer(1)]],
              device float4 *o [[buffer(2)]]) {
  o[0] = u.mvp * o[1];
  (*dm)[2][3] = 1.0f;
}
// CHECK-PTX: ld.global.v4.f32
// CHECK-PTX-NOT: ld.const
// CHECK-PTX: st.global.u32 	[%rd2+44]
// CHECK-PTX-NOT: ld.f32
