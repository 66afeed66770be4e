// Fragment inputs beyond [[stage_in]]: the attachment's color for
// programmable blending ([[color(n)]]), SIMD-group built-ins (MSL 2.2),
// sample positions; kernels take threadgroup references without an index.
#include <metal_stdlib>
using namespace metal;

fragment float4 blend(float4 dst [[color(0)]], uint lane [[thread_index_in_simdgroup]],
                      uint sid [[sample_id]]) {
  return dst * 0.5 + float4(get_sample_position(sid), float(lane), 1);
}

kernel void k(threadgroup int &shared_value, device int *out [[buffer(0)]],
              uint tid [[thread_index_in_threadgroup]]) {
  if (tid == 0)
    shared_value = 3;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[tid] = shared_value;
}
// CHECK-REFLECTION: "builtin": "color:0"
// CHECK-REFLECTION: "builtin": "thread_index_in_simdgroup"
// CHECK-REFLECTION: "threadgroup_offset:shared_value"
// CHECK-IR: __msl_get_sample_position
