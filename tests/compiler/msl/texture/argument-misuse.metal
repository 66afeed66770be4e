// Wrong argument lists are rejected with a message naming the problem.
#include <metal_stdlib>
using namespace metal;

void f(texture2d<float> t, texture2d_array<float> a, texturecube<float> c, sampler s,
       texture2d<float, access::write> w) {
  t.sample(s, float2(0), gradient3d(float3(0), float3(0))); // expected-error {{not an option of this call}}
  c.sample(s, float3(0), int3(1));  // expected-error {{not an option of this call}}
  a.sample(s, float2(0));           // expected-error {{array texture takes one array index}}
  t.sample(s, float2(0), 1u, 2u);   // expected-error {{array texture takes one array index}}
  t.read(int2(0));                  // expected-error {{the coordinate must be uint or ushort}}
  t.read(uint2(0), 1, 2);           // expected-error {{wrong arguments after the coordinate}}
  w.write(int4(0), uint2(0));       // expected-error {{the colour must be a 4-component vector}}
}
