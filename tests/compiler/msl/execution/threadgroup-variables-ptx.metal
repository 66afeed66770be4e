// The NVPTX path keeps threadgroup variables in shared memory, unmarked.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *out [[buffer(0)]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float tile[64];
  tile[lid] = float(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[lid] = tile[63 - lid];
}
// CHECK-IR: addrspace(3) global [64 x float]
// CHECK-IR-NOT: msl.threadgroup
// CHECK-PTX: .shared
