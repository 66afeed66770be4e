// Multi-level instancing (Metal 3.1) reads instance ids by depth; the forms
// without one, and max_levels counts out of range, are errors.
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal::raytracing;

uint depth(intersection_query<instancing, max_levels<4>> &q) {
  return q.get_committed_instance_id(); // expected-error {{get_committed_instance_id(): a query with max_levels<N> takes the instance depth}}
}
uint count(intersection_query<instancing> &q) {
  return q.get_candidate_instance_count(); // expected-error {{get_candidate_instance_count() needs a query with instancing and max_levels<N>}}
}
void range() {
  intersection_query<instancing, max_levels<17>> q; // expected-error {{intersection_query: max_levels<N> needs instancing, and N from 2 to 16}}
  intersector<max_levels<2>> i;                      // expected-error {{intersector: max_levels<N> needs instancing, and N from 2 to 32}}
}
uint primitive_count(primitive_acceleration_structure as) {
  return as.get_instance_count(); // expected-error {{get_instance_count() needs an instance acceleration structure}}
}
