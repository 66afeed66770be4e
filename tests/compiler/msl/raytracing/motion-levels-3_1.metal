// Motion (Metal 2.4), multi-level instancing and curves (Metal 3.1): the
// time and the max_levels count reach the hooks, a result has one instance
// id per level below the top, and an instance structure can name its
// instances' structures.
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal;
using namespace metal::raytracing;

using Motion = acceleration_structure<instancing, primitive_motion, instance_motion>;
uint motion(Motion as, ray r) {
  intersector<instancing, primitive_motion, instance_motion> i;
  return i.intersect(r, as, 0x3u, 0.25).instance_id;
}
// tags 1 | 8 | 16 = 25; mask 3, time 0.25.
// CHECK-IR: i32 noundef 25, i32 noundef 83456,
// CHECK-IR: i32 noundef 3, float noundef nofpclass(nan inf) 2.500000e-01, i64 noundef 0, ptr noundef null, i32 noundef 0)

uint levels(instance_acceleration_structure as, ray r) {
  intersector<instancing, max_levels<3>, curve_data> i;
  i.assume_geometry_type(geometry_type::triangle | geometry_type::curve);
  i.assume_curve_basis(curve_basis::bezier);
  intersection_result<instancing, max_levels<3>, curve_data> h = i.intersect(r, as);
  static_assert(sizeof(h.instance_id) == 2 * sizeof(uint), "max_levels<3>: two instance ids below the top");
  return h.instance_count + h.instance_id[1] + h.user_instance_id[0] + uint(h.curve_parameter);
}
// tags instancing | curve_data (65) | max_levels 3 << 8 = 833; state:
// geometry_type 5 << 9, curve_basis::bezier 3 << 12, curve_type::all 2 << 15.
// CHECK-IR: i32 noundef 833, i32 noundef 80384,
// CHECK-IR: i32 noundef 1, i32 noundef 3, i32 noundef 1)

uint query(instance_acceleration_structure as, ray r) {
  intersection_query<instancing, triangle_data, max_levels<2>> q(r, as);
  q.next();
  return q.get_candidate_instance_count() + q.get_committed_user_instance_id(1) + as.get_instance_count();
}
// CHECK-IR: @__msl_rt_instance_count(i64 noundef %as.coerce)

acceleration_structure<> child(instance_acceleration_structure as) {
  return as.get_acceleration_structure<>(4);
}
// CHECK-IR: @__msl_rt_instance_acceleration_structure(i64 noundef %as.coerce, i32 noundef 4)
