// intersection_query (Metal 2.4): reset starts a traversal through
// __msl_rt_query_init, next/commit/abort and the get_* reads take its handle.
// An acceleration structure is 8 bytes, so it can sit in a device buffer
// (an argument buffer) that a kernel reads.
// msl-options: -std=macos-metal2.4
#include <metal_stdlib>
using namespace metal;
using namespace metal::raytracing;

static_assert(sizeof(instance_acceleration_structure) == 8, "a handle");

struct Scene {
  instance_acceleration_structure tlas;
};

kernel void k(const device Scene &scene [[buffer(0)]], device float4 *out [[buffer(1)]],
              uint tid [[thread_position_in_grid]]) {
  intersection_params params;
  params.set_opacity_cull_mode(opacity_cull_mode::non_opaque);
  params.set_triangle_front_facing_winding(winding::counterclockwise); // metal::winding
  intersection_query<instancing, triangle_data> q;
  q.reset(ray(float3(0), float3(0, 0, 1), 0.01, 100.0), scene.tlas, 0xffu, params);
  while (q.next()) {
    if (q.get_candidate_intersection_type() == intersection_type::triangle) {
      if (q.get_candidate_triangle_distance() < 1.0)
        q.commit_triangle_intersection();
    } else {
      q.commit_bounding_box_intersection(2.0);
      q.abort();
    }
  }
  if (q.get_committed_intersection_type() == intersection_type::none)
    return;
  float4x3 m = q.get_committed_world_to_object_transform();
  out[tid] = float4(q.get_committed_triangle_barycentric_coord(), q.get_committed_distance(),
                    m[3].x + float(q.get_committed_instance_id()));
}
// tags instancing | triangle_data = 3; state: opacity_cull_mode::non_opaque
// (2 << 5) and counterclockwise winding (1) over the defaults.
// CHECK-IR: @__msl_rt_query_init(i64 noundef
// CHECK-IR: i32 noundef 3, i32 noundef 83521, <3 x float> noundef nofpclass(nan inf) zeroinitializer, <3 x float> noundef nofpclass(nan inf) <float 0.000000e+00, float 0.000000e+00, float 1.000000e+00>, float noundef nofpclass(nan inf) 0x3F847AE140000000, float noundef nofpclass(nan inf) 1.000000e+02, i32 noundef 255)
// CHECK-IR: zeroext i1 @__msl_rt_query_next(i64 noundef %call
// CHECK-IR: @__msl_rt_query_commit(i64 noundef
// CHECK-IR: i32 noundef 1, float noundef nofpclass(nan inf) 0.000000e+00)
// CHECK-IR: i32 noundef 2, float noundef nofpclass(nan inf) 2.000000e+00)
// CHECK-IR: call void @__msl_rt_query_abort(
// world_to_object column 3 (what 11) and the committed instance id (what 3).
// CHECK-IR: i32 noundef 1, i32 noundef 11)
// CHECK-IR: i32 noundef 1, i32 noundef 3, i32 noundef 0)
