// Scalars convert to the vector type of a library call (MSL 2.0 2.12):
// dot(v, 1) sums the lanes; abs of an unsigned value is the value;
// declval works in unevaluated operands; Metal 3.2's `coherent` parses.
// msl-options: -std=metal3.2
#include <metal_stdlib>
using namespace metal;

struct Block { float4 v; };

kernel void k(coherent device Block *b [[buffer(0)]], device float *f [[buffer(1)]],
              device uint *u [[buffer(2)]]) {
  f[0] = dot(float4(1, 2, 3, 4), 1);
  u[0] = abs(uint(7));
  using Sum = decltype(declval<float4>() + declval<float4>());
  f[1] = float(sizeof(Sum));
  b->v = float4(1);
}
// CHECK-IR: store float 1.000000e+01
// CHECK-IR: store i32 7
// CHECK-IR: store float 1.600000e+01
