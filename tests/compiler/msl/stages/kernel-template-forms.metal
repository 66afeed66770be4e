// Kernel template forms (with threadgroup memory in the body): [[kernel]] on the template, instantiations with
// parameter types only, `decltype(f<T>) f<T>;`, and a macro whose uses end
// in `;`. Each instance is an entry point under its host name.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

template <typename T, int N>
[[kernel]] void scale_by(device T *data [[buffer(0)]], constant T &factor [[buffer(1)]],
                         uint i [[thread_position_in_grid]]) {
  threadgroup T staged[32]; // (kernel bodies may declare threadgroup memory)
  staged[i % 32] = data[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  data[i] = staged[i % 32] * factor * T(N);
}

template [[host_name("scale_by_float_2")]] [[kernel]]
void scale_by<float, 2>(device float *, constant float &,
                        uint);

template [[host_name("scale_by_half_3")]] [[kernel]] decltype(scale_by<half, 3>) scale_by<half, 3>;

#define INSTANTIATE(T, N)                                                 \
  template [[host_name("scale_by_" #T "_" #N)]] kernel void scale_by<T, N>( \
      device T *data [[buffer(0)]], constant T &factor [[buffer(1)]],     \
      uint i [[thread_position_in_grid]])
INSTANTIATE(int, 4);
INSTANTIATE(uint, 5);

#define INSTANTIATE_DECLTYPE(T, N) \
  template [[host_name("scale_by_" #T "_" #N)]] [[kernel]] decltype(scale_by<T, N>) scale_by<T, N>
INSTANTIATE_DECLTYPE(short, 6);

// CHECK-REFLECTION: "name": "scale_by_float_2"
// CHECK-REFLECTION: "name": "scale_by_half_3"
// CHECK-REFLECTION: "name": "scale_by_int_4"
// CHECK-REFLECTION: "name": "scale_by_uint_5"
// CHECK-REFLECTION: "name": "scale_by_short_6"
// CHECK-PTX: .entry scale_by_float_2(
// CHECK-PTX: .entry scale_by_half_3(
// CHECK-PTX: .entry scale_by_short_6(

// Parameters given by type only keep the template's names and types.
// CHECK-REFLECTION: "name": "factor"
// CHECK-REFLECTION: "type": "half"
