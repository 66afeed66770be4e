// The ray tracing hooks stay calls to external functions in PTX.
// msl-options: -std=macos-metal2.4
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;
using namespace metal::raytracing;

kernel void k(const device instance_acceleration_structure *as [[buffer(0)]], device uint *out [[buffer(1)]],
              uint tid [[thread_position_in_grid]]) {
  intersection_query<instancing, triangle_data> q(ray(float3(0), float3(1, 0, 0)), as[tid], 0xffu);
  while (q.next())
    q.commit_triangle_intersection();
  intersector<instancing> i;
  out[tid] = uint(q.get_committed_intersection_type()) + i.intersect(ray(float3(0), float3(0, 1, 0)), as[0]).instance_id;
}
// CHECK-PTX: .extern .func  (.param .b64 func_retval0) __msl_rt_query_init
// CHECK-PTX: __msl_rt_query_next
// CHECK-PTX: __msl_rt_query_commit
// CHECK-PTX: __msl_rt_intersect
// CHECK-PTX: .entry k(
