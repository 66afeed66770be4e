// simdgroup_load/simdgroup_store index element (r, c) of a tile at origin
// (x: column, y: row, in memory) as memory[(y + r) * stride + x + c], or as
// memory[(y + c) * stride + x + r] when transposed. Loading the iota
// transposed from origin (1, 0) gives row 0 = 1, 9, ..., 57 and row 1 = 2, 10, ...
// (The source is a thread array only so that the values fold.)
// msl-options: -std=macos-metal2.3
#include <metal_stdlib>
using namespace metal;

typedef ulong __attribute__((ext_vector_type(2))) origin_t;

kernel void k(device float *out [[buffer(0)]], threadgroup float *tg [[threadgroup(0)]]) {
  float iota[80];
  _Pragma("unroll") for (int i = 0; i < 80; ++i) iota[i] = i;
  simdgroup_float8x8 m;
  simdgroup_load(m, (const thread float *)iota, 8, (origin_t)(1, 0), true);
  simdgroup_store(m, out, 8);
  simdgroup_store(m, tg, 8, (origin_t)(0), false);
  simdgroup_load(m, (const threadgroup float *)tg, 8);
}
// CHECK-IR: store float 1.000000e+00, ptr %2
// CHECK-IR: store float 9.000000e+00, ptr %arrayidx5.i20.1,
// CHECK-IR: store float 5.700000e+01, ptr %arrayidx5.i20.7,
// CHECK-IR: store float 2.000000e+00, ptr %arrayidx5.i20.1114,
