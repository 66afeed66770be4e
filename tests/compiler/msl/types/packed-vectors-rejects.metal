// A packed vector converts only from the vector with its own component type
// and count, and has no swizzles.
#include <metal_stdlib>
using namespace metal;

kernel void k(device packed_float3 *p [[buffer(0)]], device float4 *o [[buffer(1)]]) {
  p[0] = o[0];             // expected-error {{no viable overloaded '='}}
  packed_float3 q = int3(1); // expected-error {{no viable conversion}}
  o[1] = float4(p[0].xy, 0, 1); // expected-error {{no member named 'xy'}}
}
