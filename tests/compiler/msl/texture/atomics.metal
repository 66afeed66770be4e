// Texture atomics (Metal 3.1): op code, coordinate, array index and operand
// reach the hook; compare-exchange passes desired and expected.
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal;

uint add(texture2d<uint, access::read_write> t) { return t.atomic_fetch_add(uint2(1, 5), 1u).x; }
// CHECK-IR: @__msl_texture_atomic(i64 noundef %t.coerce, i32 noundef 4, <4 x i32> noundef <i32 1, i32 5, i32 0, i32 0>, i32 noundef 0, i32 noundef 1, i32 noundef 0)
int smax(texture2d_array<int, access::read_write> t) { return t.atomic_fetch_max(uint2(2), 3u, -4).x; }
// CHECK-IR: i32 noundef 12, <4 x i32> noundef <i32 2, i32 2, i32 0, i32 0>, i32 noundef 3, i32 noundef -4, i32 noundef 0)
bool cas(texture2d<uint, access::read_write> t) {
  uint4 e = uint4(10);
  return t.atomic_compare_exchange_weak(uint2(1, 5), &e, 2u);
}
// CHECK-IR: i32 noundef 3, <4 x i32> noundef <i32 1, i32 5, i32 0, i32 0>, i32 noundef 0, i32 noundef 2, i32 noundef 10)
