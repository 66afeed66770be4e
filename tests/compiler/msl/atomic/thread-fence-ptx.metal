// atomic_thread_fence (Metal 3.2) with thread_scope: membar.cta for a
// threadgroup or SIMD-group, membar.gl for the device on NVPTX.
// msl-target: nvptx64
// msl-options: -std=metal3.2
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]]) {
  u[0] = 1;
  atomic_thread_fence(mem_flags::mem_threadgroup, memory_order_seq_cst, thread_scope_threadgroup);
  u[1] = 2;
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);
  u[2] = 3;
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_simdgroup);
}
// CHECK-PTX: membar.cta
// CHECK-PTX: membar.gl
