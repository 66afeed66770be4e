// simdgroup matrices (Metal 2.3): make_filled fills every element, the
// scalar constructor builds a diagonal (identity for 1), and
// multiply_accumulate computes a * b + c: fill(2) * I + fill(8) = 10 (half
// 0xH4900) in every element; fill(0.5) * fill(1) = 8 * 0.5 = 4.0 for float.
// msl-options: -std=macos-metal2.3
#include <metal_stdlib>
using namespace metal;

simdgroup_half8x8 mad() {
  simdgroup_half8x8 v = make_filled_simdgroup_matrix<half, 8, 8>(0.0h);
  simdgroup_multiply_accumulate(v, make_filled_simdgroup_matrix<half, 8, 8>(2.0h), simdgroup_half8x8(1.0h),
                                make_filled_simdgroup_matrix<half, 8, 8>(8.0h));
  return v;
}

kernel void k(device half *o [[buffer(0)]], device float *f [[buffer(1)]]) {
  simdgroup_store(mad(), o, 8);
  simdgroup_float8x8 d;
  simdgroup_multiply(d, make_filled_simdgroup_matrix<float, 8, 8>(0.5f), make_filled_simdgroup_matrix<float, 8, 8>(1.0f));
  simdgroup_store(d, f);
}
// CHECK-IR: half 0xH4900
// CHECK-IR-NOT: half 0xH4800
// CHECK-IR: float 4.000000e+00
