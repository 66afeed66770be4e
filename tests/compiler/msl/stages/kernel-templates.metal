// Kernel templates with explicit instantiations named by [[host_name]] (as
// PyTorch and MLX write them, also from a macro): each instantiation is an
// entry point under its host name, and the template's body may declare
// threadgroup memory; the template's attributes apply to each instance.
// msl-options: -std=metal3.1
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

template <typename T>
[[max_total_threads_per_threadgroup(4)]] kernel void reverse4(device T *data [[buffer(0)]], constant float &scale [[buffer(1)]],
                     uint i [[thread_position_in_threadgroup]]) {
  threadgroup T shared[4];
  shared[i] = data[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  data[i] = shared[3 - i] * T(scale);
}

template [[host_name("reverse4_float")]] kernel void reverse4<float>(
    device float *data [[buffer(0)]], constant float &scale [[buffer(1)]],
    uint i [[thread_position_in_threadgroup]]);

#define INSTANTIATE(T)                                                       \
  template [[host_name("reverse4_" #T)]] kernel void reverse4<T>(           \
      device T *data [[buffer(0)]], constant float &scale [[buffer(1)]],     \
      uint i [[thread_position_in_threadgroup]]);
INSTANTIATE(half)
INSTANTIATE(int)

// CHECK-REFLECTION: "name": "reverse4_float"
// CHECK-REFLECTION: "name": "reverse4_half"
// CHECK-REFLECTION: "name": "reverse4_int"
// CHECK-PTX: .entry reverse4_float(
// CHECK-PTX: .entry reverse4_half(
// CHECK-PTX: .entry reverse4_int(
// The template's attribute reaches each kernel.
// CHECK-REFLECTION: "max_total_threads_per_threadgroup:4"
// CHECK-PTX: .maxntid 4
// CHECK-PTX: .shared
// CHECK-PTX: bar.sync
