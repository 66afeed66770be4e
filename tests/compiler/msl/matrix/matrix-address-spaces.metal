// m[i] reads and writes columns of matrices in device, constant and
// threadgroup memory; whole matrices copy from constant memory and are
// passed by value to the matrix functions.
#include <metal_stdlib>
using namespace metal;

struct Uniforms { float4x4 mvp; float3x3 normal; };

kernel void k(constant Uniforms &u [[buffer(0)]], device float4x4 *dm [[buffer(1)]],
              device float4 *o [[buffer(2)]], uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float2x2 tm;
  if (tid == 0) tm = float2x2(float2(1, 2), float2(3, 4));
  threadgroup_barrier(mem_flags::mem_threadgroup);
  o[0] = u.mvp[2];
  o[1] = float4(u.normal[1], u.normal[2][0]);
  (*dm)[3] = o[2];
  (*dm)[1][2] = 5.0f;
  float4x4 copy = u.mvp;
  *dm = u.mvp * copy;
  o[3] = float4(transpose(u.normal)[0], determinant(u.normal));
  o[4] = float4(tm[1], tm[0]);
  tm[0][1] = 9.0f;
}
// CHECK-IR: store float 5.000000e+00
