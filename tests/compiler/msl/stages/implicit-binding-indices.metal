// Arguments without [[buffer(n)]], [[texture(n)]], [[sampler(n)]] or
// [[threadgroup(n)]] get indices in argument order, each the lowest of its
// kind that no argument names explicitly (or took before it), as Apple's
// compiler assigns them; reflection shows them.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *a [[buffer(0)]],
              constant uint &n,                  // buffer 1
              device float *b [[buffer(2)]],
              device const float *c,             // buffer 3
              texture2d<float> t,                // texture 0
              array<texture2d<float>, 2> pair,   // textures 2 and 3 (1 is taken)
              texture2d<float> fixed [[texture(1)]],
              sampler s,                         // sampler 0
              threadgroup float *scratch,        // threadgroup 0
              uint i [[thread_position_in_grid]]) {
  scratch[0] = 0;
  b[i] = a[i] + c[i] + float(n) + t.sample(s, float2(0)).x + pair[1].read(uint2(0)).x + fixed.read(uint2(0)).x;
}
// CHECK-REFLECTION: "name": "n"
// CHECK-REFLECTION: "index": 1,
// CHECK-REFLECTION: "name": "c"
// CHECK-REFLECTION: "index": 3,
// CHECK-REFLECTION: "name": "pair"
// CHECK-REFLECTION: "index": 2,
