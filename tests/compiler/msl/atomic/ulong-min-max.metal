// 64-bit atomic_ulong min/max (Metal 2.4) on device memory: umin/umax on i64.
// msl-options: -std=macos-metal2.4
#include <metal_stdlib>
using namespace metal;

struct S { metal::atomic_ulong a; };
kernel void k(device S *s [[buffer(0)]], device atomic_ulong *p [[buffer(1)]]) {
  metal::atomic_max_explicit(&s->a, 5ul, memory_order_relaxed);
  atomic_min_explicit(p, as_type<ulong>(uint2(1u, 2u)), memory_order_relaxed);
}
// CHECK-IR: atomicrmw umax
// CHECK-IR: i64 5 monotonic
// CHECK-IR: atomicrmw umin
// CHECK-IR: i64 8589934593 monotonic
