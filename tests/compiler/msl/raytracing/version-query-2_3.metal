// Metal 2.3 has the intersector; intersection queries and their parameters,
// and the motion tags, are Metal 2.4; curves are Metal 3.1.
// msl-options: -std=macos-metal2.3
#include <metal_raytracing>
using namespace metal::raytracing;

float ok(primitive_acceleration_structure as, ray r) { return intersector<>().intersect(r, as).distance; }

void query(intersection_query<instancing> &q) {} // expected-error {{needs Metal 2.4 (-std=macos-metal2.4 or later)}}
void params(intersection_params p) {} // expected-error {{needs Metal 2.4 (-std=macos-metal2.4 or later)}}
void motion() { intersector<instancing, primitive_motion> i; } // expected-error {{intersector: primitive_motion, instance_motion or extended_limits needs Metal 2.4 (-std=macos-metal2.4 or later)}}
void curve(intersector<> &i) { i.assume_curve_basis(curve_basis::bezier); } // expected-error {{needs Metal 3.1 (-std=metal3.1 or later)}}
