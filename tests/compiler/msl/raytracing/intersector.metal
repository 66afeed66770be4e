// intersector<...>::intersect (Metal 2.3): the ray, the handle, the tag bits
// and the packed traversal state reach __msl_rt_intersect, and the result
// fields are read from the traversal it returns.
// msl-options: -std=macos-metal2.3
#include <metal_stdlib>
using namespace metal;
using namespace metal::raytracing;

struct Hit {
  float distance;
  uint instance;
  float2 bary;
  float4x3 o2w;
};

Hit trace(instance_acceleration_structure scene, constant ray &r) {
  intersector<instancing, triangle_data, world_space_data> i;
  i.assume_geometry_type(geometry_type::triangle);
  i.set_triangle_cull_mode(triangle_cull_mode::back);
  i.accept_any_intersection(true);
  intersection_result<instancing, triangle_data, world_space_data> h = i.intersect(r, scene, 0x0f);
  Hit out;
  out.distance = h.type == intersection_type::none ? INFINITY : h.distance;
  out.instance = h.user_instance_id;
  out.bary = h.triangle_barycentric_coord;
  out.o2w = h.object_to_world_transform;
  return out;
}
// tags: instancing | triangle_data | world_space_data = 7; state: back-face
// culling (2 << 1), geometry_type::triangle (1 << 9), curve_basis::all
// (4 << 12), curve_type::all (2 << 15), accept_any_intersection (1 << 20).
// CHECK-IR: @__msl_rt_intersect(i64 noundef %scene.coerce, i32 noundef 7, i32 noundef 1131012,
// CHECK-IR: i32 noundef 15, float noundef nofpclass(nan inf) 0.000000e+00, i64 noundef 0, ptr noundef null, i32 noundef 0)
// The committed (1) user instance id (4) and the object-to-world columns (4-7).
// CHECK-IR: @__msl_rt_get_uint(i64 noundef %call.i, i32 noundef 1, i32 noundef 4, i32 noundef 0)
// CHECK-IR: @__msl_rt_get_float4(i64 noundef %call.i, i32 noundef 1, i32 noundef 7)

// A primitive structure with a function table and a payload, which the hook
// gets by address with its size.
struct Payload {
  uint hits;
  float t;
};
float procedural(primitive_acceleration_structure scene, intersection_function_table<> table, ray r) {
  intersector<> i;
  i.assume_geometry_type(geometry_type::bounding_box);
  Payload p = {0, 0};
  intersection_result<> h = i.intersect(r, scene, table, p);
  return h.distance + p.t;
}
// CHECK-IR: @__msl_rt_intersect(i64 noundef %scene.coerce, i32 noundef 0, i32 noundef 82944,
// CHECK-IR: i64 noundef %table.coerce, ptr noundef nonnull %p, i32 noundef 8)

bool unbound(instance_acceleration_structure a) { return is_null_instance_acceleration_structure(a); }
// CHECK-IR: icmp eq i64 %a.coerce, 0
