// Tag combinations the spec rules out, and members the tags do not provide.
// msl-options: -std=macos-metal2.4
#include <metal_stdlib>
using namespace metal;
using namespace metal::raytracing;

void tags() {
  intersection_query<instancing, world_space_data> q1; // expected-error {{intersection_query: world_space_data, primitive_motion, instance_motion and extended_limits are not query tags}}
  intersector<world_space_data> i1;                   // expected-error {{intersector: world_space_data needs instancing}}
  intersector<instancing, instancing> i2;             // expected-error {{intersector: a tag appears more than once}}
  intersector<instancing, float> i3;                  // expected-error {{intersector: a tag is not a ray tracing tag}}
  intersector<instancing, curve_data> i4;             // expected-error {{intersector: curve_data or max_levels<N> needs Metal 3.1 (-std=metal3.1 or later)}}
  acceleration_structure<triangle_data> a1;           // expected-error {{acceleration_structure: the valid forms are <>, <primitive_motion>, <instancing>}}
}

uint members(intersection_query<triangle_data> &q, primitive_acceleration_structure as, ray r) {
  q.reset(r, as, 0xffu); // expected-error {{reset(): an instance mask needs a query with the instancing tag}}
  uint id = q.get_committed_instance_id(); // expected-error {{get_committed_instance_id() needs a query with the instancing tag}}
  float4x3 m = q.get_candidate_object_to_world_transform(); // expected-error {{get_candidate_object_to_world_transform() needs a query with the instancing tag}}
  return id + q.get_committed_primitive_id();
}
float bary(intersection_query<instancing> &q) {
  return q.get_candidate_triangle_barycentric_coord().x; // expected-error {{get_candidate_triangle_barycentric_coord() needs a query with the triangle_data tag}}
}

// An intersector traverses the acceleration structure its tags name: an
// instance structure needs instancing.
float wrong_structure(intersector<triangle_data> &i, instance_acceleration_structure as, ray r) {
  return i.intersect(r, as).distance; // expected-error {{no matching member function for call to 'intersect'}}
}
void copy(intersection_query<instancing> &q) {
  intersection_query<instancing> c = q; // expected-error {{call to deleted constructor}}
}
