// Function attributes are kept in the reflection; an argument-buffer struct
// with [[id(n)]] members is a plain buffer argument.
#include <metal_stdlib>
using namespace metal;

struct Arguments {
  device float *data [[id(0)]];
  constant float4 *params [[id(1)]];
};

[[max_total_threads_per_threadgroup(64)]]
kernel void k(constant Arguments &args [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  args.data[gid] *= args.params[0].x;
}

[[patch(quad, 4)]] vertex float4 post_tess(uint pid [[patch_id]], float2 uv [[position_in_patch]]) {
  return float4(uv, float(pid), 1);
}
// CHECK-REFLECTION: "max_total_threads_per_threadgroup:64"
// CHECK-REFLECTION: "patch:quad,4"
// CHECK-REFLECTION: "builtin": "position_in_patch"
// CHECK-REFLECTION: "params": [
