// `threadgroup T x = v;` (Apple's compiler accepts it): every thread assigns
// v right after the declaration, and the kernel's barrier orders it before
// use.
#include <metal_stdlib>
using namespace metal;

kernel void k(device int *out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
  threadgroup int   last_group = 0;
  threadgroup float total = 1.5f;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (i == 0)
    last_group = int(total) + 41;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = last_group;
}
// CHECK-IR: define
