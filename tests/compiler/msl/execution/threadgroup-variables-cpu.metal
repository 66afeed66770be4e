// On the CPU, each global holding a `threadgroup` variable is marked
// !msl.threadgroup (the execution runtime gives each threadgroup its own
// copy); other globals are not. The reflection gives the bytes of the
// threadgroup variables, and each buffer's type size and writability.
#include <metal_stdlib>
using namespace metal;

struct Params {
  float scale;
  uint count;
  float4 bias;
};

constant float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};

kernel void k(device float4 *out [[buffer(0)]], constant Params &p [[buffer(1)]],
              device const float *in [[buffer(2)]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[64];
  threadgroup int counter;
  if (lid == 0)
    counter = 0;
  tile[lid] = in[lid] * p.scale + table[lid & 3];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = float4(tile[63 - lid] + float(counter)) + p.bias;
}
// CHECK-IR: @_ZZ1kE4tile = internal global [64 x float] undef, align 16, !msl.threadgroup
// CHECK-IR: @_ZZ1kE7counter = internal global i32 undef, align 4, !msl.threadgroup
// CHECK-REFLECTION: "threadgroup_memory_bytes": 260
// CHECK-REFLECTION: "type_size": 16,
// CHECK-REFLECTION: "type_size": 32,
// CHECK-REFLECTION: "type_size": 4,
// CHECK-REFLECTION: "writable": true
// CHECK-REFLECTION: "writable": false
