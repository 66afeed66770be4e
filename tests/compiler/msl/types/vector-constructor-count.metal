// Vector constructor component counts: more components than the vector has
// is an error, and so is a single shorter vector; a concatenation that
// falls short is zero-filled like the braced form (uint4 v = {x, uint2(0)}),
// which spirv-cross relies on and Apple's compiler accepts.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *f [[buffer(0)]], device uint4 *u [[buffer(1)]]) {
  f[0] = float4(float3(1, 2, 3)); // expected-error {{a single vector argument needs at least as many components}}
  f[1] = float4(1, 2, 3, 4, 5);   // expected-error {{more components than the vector has}}
}
