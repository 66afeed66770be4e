// A kernel template's threadgroup variables live in the template's instance,
// which the kernel source repair writes calls to: on the CPU they are marked
// !msl.threadgroup too (else parallel threadgroups shared one copy: PyTorch's
// layer norm computed wrong means now and then), and the reflection counts
// their bytes.
#include <metal_stdlib>
using namespace metal;

template <typename T>
kernel void row_sum(device const T *in [[buffer(0)]], device T *out [[buffer(1)]],
                    uint tg [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]]) {
  threadgroup T partial[32];
  partial[lid] = in[tg * 32 + lid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0) {
    T s = 0;
    for (int i = 0; i < 32; ++i)
      s += partial[i];
    out[tg] = s;
  }
}
template [[host_name("row_sum_float")]] kernel void row_sum<float>(
    device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
    uint tg [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]]);
// CHECK-IR: !msl.threadgroup
// CHECK-REFLECTION: "threadgroup_memory_bytes": 128
