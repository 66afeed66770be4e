// longN / ulongN vectors with the usual constructors, and vec<T, N> naming
// the vector types (deducible in function templates).
#include <metal_stdlib>
using namespace metal;

static_assert(sizeof(ulong2) == 16 && sizeof(long3) == 32, "64-bit lanes");
static_assert(__is_same(vec<float, 4>, float4) && __is_same(metal::vec<ulong, 2>, ulong2), "vec");

template <typename T> T lane_sum(vec<T, 4> x) { return x.x + x.y + x.z + x.w; }

kernel void k(device ulong2 *a [[buffer(0)]], device long4 *b [[buffer(1)]],
              device float *f [[buffer(2)]]) {
  a[0] = ulong2(uint2(0xffffffffu, 1u)) + ulong2(1);
  b[0] = long4(long2(-1), 5000000000, int(3));
  f[0] = lane_sum(float4(1, 2, 3, 4));
}
// CHECK-IR: store <2 x i64> <i64 4294967296, i64 2>
// CHECK-IR: store <4 x i64> <i64 -1, i64 -1, i64 5000000000, i64 3>
// CHECK-IR: store float 1.000000e+01
