// simdgroup_multiply(_accumulate) with operands of different element types
// (a float tile times a bfloat or half one, gpt-oss's matmul): each product
// is formed in the destination's type.
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device const float *a [[buffer(0)]], device const bfloat *b [[buffer(1)]],
              device const half *h [[buffer(2)]], device float *out [[buffer(3)]]) {
  simdgroup_float8x8 A, D = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
  simdgroup_bfloat8x8 B;
  simdgroup_half8x8 H;
  simdgroup_load(A, a, 8);
  simdgroup_load(B, b, 8, ulong2(0, 0), true);
  simdgroup_load(H, h, 8);
  simdgroup_multiply_accumulate(D, A, B, D);
  simdgroup_multiply(A, A, H);
  simdgroup_multiply_accumulate(D, A, H, D);
  simdgroup_store(D, out, 8);
}
// CHECK-IR: fpext bfloat
// CHECK-IR: fpext half
