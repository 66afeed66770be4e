// atomic_thread_fence with a thread_scope needs Metal 3.2.
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]]) {
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device); // expected-error {{needs Metal 3.2 (-std=metal3.2 or later)}}
}
