// Ray tracing is Metal 2.3: below it, <metal_stdlib> declares only stand-ins
// whose use names the version.
// msl-options: -std=macos-metal2.2
#include <metal_stdlib>
using namespace metal;

float f(raytracing::instance_acceleration_structure as) { return 0; } // expected-error {{needs Metal 2.3 (-std=macos-metal2.3 or later)}}
bool g(raytracing::intersection_type t) { return false; } // expected-error {{needs Metal 2.3 (-std=macos-metal2.3 or later)}}
