// A thread-scope atomic_thread_fence only keeps the compiler from reordering:
// a single-thread fence, which LLVM 19 cannot emit for NVPTX and which
// orders nothing a GPU thread can see: dropped after optimization.
// msl-target: nvptx64
// msl-options: -std=metal3.2
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]]) {
  u[0] = 1;
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_thread);
  u[1] = 2;
}
// CHECK-IR-NOT: fence
// CHECK-IR-NOT: asm sideeffect
// CHECK-PTX-NOT: inline asm
// CHECK-PTX-NOT: membar
