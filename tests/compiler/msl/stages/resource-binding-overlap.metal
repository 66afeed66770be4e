// An array of textures takes consecutive indices; another argument on one
// of them is an error naming both.
#include <metal_stdlib>
using namespace metal;

kernel void k(array<texture2d<float>, 4> layers [[texture(1)]],
              texture2d<float> other [[texture(3)]], // expected-error {{uses [[texture(3)]], already taken by 'layers'}}
              texture2d<float> unbound,              // takes texture 0, the lowest free
              device float *out [[buffer(0)]]) {
  out[0] = 1;
}
