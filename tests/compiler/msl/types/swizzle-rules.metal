// Component access (MSL 2.0 2.2.1): swizzles read any components, but a
// swizzle written to may not repeat a component, and .xyzw and .rgba may not
// be mixed in one swizzle.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *out [[buffer(0)]]) {
  float4 v = out[0];
  v.xx = float2(1, 2); // expected-error {{duplicate components}}
  float2 m = v.xg;     // expected-error {{illegal vector component name}}
  out[1] = v.wzyx + float4(m, 0, 0);
}
