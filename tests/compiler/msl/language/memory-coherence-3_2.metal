// Metal 3.2's memory coherence: `coherent device` buffers, textures with
// memory_coherence_device, and atomic_thread_fence over each thread_scope
// (thread, simdgroup, threadgroup, device) with mem_flags combinations. On
// the CPU a thread-scope fence is a single-thread fence, the wider scopes a
// full fence, and a relaxed or mem_none fence nothing at all.
// msl-options: -std=metal3.2
#include <metal_stdlib>
using namespace metal;

static_assert(thread_scope_thread != thread_scope_simdgroup && thread_scope_simdgroup != thread_scope_threadgroup &&
              thread_scope_threadgroup != thread_scope_device, "four distinct scopes");

struct Cell { uint value; uint ready; };

// A producer: the data, then a device-scope fence, then the flag.
void publish(coherent device Cell *c, device atomic_uint *flag, uint v) {
  c->value = v;
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);
  atomic_store_explicit(flag, 1u, memory_order_relaxed);
}
// CHECK-IR: fence seq_cst

void local_order(device uint *u) {
  u[0] = 1;
  atomic_thread_fence(mem_flags::mem_device | mem_flags::mem_threadgroup, memory_order_seq_cst, thread_scope_thread);
  u[1] = 2;
}
// CHECK-IR: fence syncscope("singlethread") seq_cst

void nothing_to_order(device uint *u) {
  u[0] = 3;
  atomic_thread_fence(mem_flags::mem_none, memory_order_seq_cst, thread_scope_device);
  atomic_thread_fence(mem_flags::mem_device, memory_order_relaxed, thread_scope_device);
  u[0] = 4; // the first store is dead: no fence between them
}
// CHECK-IR-NOT: store i32 3,

kernel void k(coherent device Cell *cells [[buffer(0)]], device atomic_uint *flag [[buffer(1)]],
              device uint *out [[buffer(2)]],
              texture2d<float, access::read_write, memory_coherence_device> shared_tex [[texture(0)]],
              threadgroup uint *scratch [[threadgroup(0)]],
              uint i [[thread_position_in_grid]], uint l [[thread_index_in_threadgroup]]) {
  publish(cells, flag, i);
  scratch[l] = i;
  atomic_thread_fence(mem_flags::mem_threadgroup, memory_order_seq_cst, thread_scope_threadgroup);
  atomic_thread_fence(mem_flags::mem_threadgroup, memory_order_seq_cst, thread_scope_simdgroup);
  atomic_thread_fence(mem_flags::mem_texture, memory_order_seq_cst); // device scope by default
  shared_tex.write(float4(1.0f), uint2(i, 0));
  local_order(out);
  nothing_to_order(out + 2);
  out[4] = cells[0].value + scratch[0];
}
// CHECK-REFLECTION: "name": "shared_tex"

// The spec's spelling, with the scope.
void publish_scoped(coherent(device) device Cell *c, uint v) { c->value = v; }
// CHECK-IR: define
