// A vector constructor must get exactly as many components as the vector has.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *f [[buffer(0)]]) {
  f[0] = float4(float3(1, 2, 3)); // expected-error {{exactly as many components}}
  f[1] = float4(1, 2, 3, 4, 5);   // expected-error {{exactly as many components}}
}
