// bfloat (Metal 3.1) on the GPU: bf16 values converted for arithmetic
// (sm_90), with bfloat4 constructors and max.
// msl-options: -std=metal3.1
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device bfloat *b [[buffer(0)]], device float4 *f [[buffer(1)]]) {
  bfloat x = b[0] * b[1] + bfloat(1.0f);
  bfloat4 v = bfloat4(x, b[2], 0.5f, 2);
  f[0] = float4(v) + float4(float(x));
  b[3] = max(x, b[4]);
}
// CHECK-PTX: cvt.f32.bf16
