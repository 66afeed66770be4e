// Attribute arguments are checked when parsed, and each attribute only goes
// where the specification allows it.
#include <metal_stdlib>
using namespace metal;

struct A {
  float4 p [[position(1)]]; // expected-error {{attribute 'position' takes no arguments}}
  float4 c [[user]];        // expected-error {{attribute 'user' needs a name}}
  float4 d [[color(9)]];    // expected-error {{attribute 'color' needs an integer constant index from 0 to 7}}
  float4 e [[buffer(0)]];   // expected-error {{attribute 'buffer' applies only to function arguments}}
  float f [[attribute(0), attribute(1)]]; // expected-error {{attribute 'attribute' is given twice}}
};

[[patch(hexagon, 4)]] vertex float4 patchy(uint pid [[patch_id]]) { return float4(pid); } // expected-error {{needs quad or triangle}}

kernel void k(device float *out [[buffer(31)]]) { // expected-error {{from 0 to 30}}
  out[0] = 1;
}
