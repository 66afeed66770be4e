// bfloat is a Metal 3.1 type.
// msl-options: -std=metal3.0
#include <metal_stdlib>
using namespace metal;

kernel void k(device bfloat *b [[buffer(0)]]) {} // expected-error {{needs Metal 3.1 (-std=metal3.1 or later)}}
