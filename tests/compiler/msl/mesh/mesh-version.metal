// [[mesh]] and [[object]] are Metal 3.0 attributes.
// msl-options: -std=macos-metal2.4
#include <metal_stdlib>
using namespace metal;

[[mesh]] void m() {} // expected-error {{attribute 'mesh' needs Metal 3.0 (-std=metal3.0 or later)}}
[[object]] void o() {} // expected-error {{attribute 'object' needs Metal 3.0 (-std=metal3.0 or later)}}
