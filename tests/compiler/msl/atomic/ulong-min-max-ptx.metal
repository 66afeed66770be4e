// 64-bit atomic_ulong min/max on NVPTX: the 64-bit atomic extensions are on.
// msl-options: -std=macos-metal2.4
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

struct S { metal::atomic_ulong a; };
kernel void k(device S *s [[buffer(0)]], device atomic_ulong *p [[buffer(1)]]) {
  metal::atomic_max_explicit(&s->a, 5ul, memory_order_relaxed);
  atomic_min_explicit(p, as_type<ulong>(uint2(1u, 2u)), memory_order_relaxed);
}
// CHECK-PTX: atom.global.max.u64
// CHECK-PTX: atom.global.min.u64
// CHECK-IR: atomicrmw umin
// CHECK-IR: i64 8589934593 monotonic
