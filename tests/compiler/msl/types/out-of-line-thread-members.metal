// Members declared in the class and defined outside it with `thread`
// qualifiers keep matching their definitions (the widening of `thread`
// constructors and parameters for temporaries applies only to members
// defined in the class).
#include <metal_stdlib>
using namespace metal;

struct Light {
  float k;
  Light(float x) thread;
  float3 shade(const thread float3 &n) const thread;
};
Light::Light(float x) thread { k = x; }
float3 Light::shade(const thread float3 &n) const thread { return n * k; }

kernel void t(device float3 *o [[buffer(0)]]) {
  Light l(2.0);
  float3 n = o[1];
  o[0] = l.shade(n);
}
// CHECK-IR: fmul fast <3 x float>
