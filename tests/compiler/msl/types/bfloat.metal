// bfloat and bfloat2-4 (Metal 3.1): arithmetic, conversions and vector
// constructors (x86-64 here; tests/compiler/msl/types/bfloat-ptx.metal for
// the GPU).
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device bfloat *b [[buffer(0)]], device float4 *f [[buffer(1)]]) {
  bfloat x = b[0] * b[1] + bfloat(1.0f);
  bfloat4 v = bfloat4(x, b[2], 0.5f, 2);
  f[0] = float4(v) + float4(float(x));
  b[3] = max(x, b[4]);
}
// bf16 values are widened for arithmetic and narrowed back.
// CHECK-IR: fpext bfloat
// CHECK-IR: fptrunc float %add.i to bfloat
