// Implicit conversions (MSL 2.0 2.12): a scalar converts to a vector (splat);
// one vector type does not implicitly convert to another; as_type needs
// equal sizes.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *f [[buffer(0)]], device int4 *i [[buffer(1)]]) {
  float4 a = 2.0;            // scalar to vector: splat
  int4 b = a;                // expected-error {{cannot initialize}}
  float2 c = as_type<float2>(a); // expected-error {{sizes differ}}
  f[0] = a + float4(c, 0, 0);
  i[0] = b;
}
