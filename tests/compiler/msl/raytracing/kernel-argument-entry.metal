// A kernel's acceleration structure argument ([[buffer(n)]], by value) is a
// 64-bit handle parameter of the PTX entry, passed on to the ray tracing hook.
// msl-options: -std=macos-metal2.4
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;
using namespace metal::raytracing;

kernel void k(instance_acceleration_structure scene [[buffer(0)]], device uint *out [[buffer(1)]],
              uint tid [[thread_position_in_grid]]) {
  intersector<instancing, triangle_data> i;
  out[tid] = i.intersect(ray(float3(0), float3(0, 1, 0)), scene).instance_id;
}
// CHECK-REFLECTION: "handle": true
// CHECK-REFLECTION: "buffer:0"
// CHECK-PTX: .entry k(
// CHECK-PTX: .param .u64 k_param_0,
// CHECK-PTX: ld.param.u64
// CHECK-PTX: __msl_rt_intersect
