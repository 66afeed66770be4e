// `[[kernel]]`, the attribute spelling of the kernel qualifier (as MLX
// writes kernels), also on kernel templates and their instantiations.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

[[kernel]] void add_one(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  a[i] += 1.0;
}

template <typename T>
[[kernel]] void scale(device T *a [[buffer(0)]], uint i [[thread_position_in_threadgroup]]) {
  threadgroup T t[4];
  t[i] = a[i];
  a[i] = t[3 - i] * T(2);
}
template [[host_name("scale_float")]] [[kernel]] void scale<float>(
    device float *a [[buffer(0)]], uint i [[thread_position_in_threadgroup]]);

// CHECK-REFLECTION: "name": "add_one"
// CHECK-REFLECTION: "name": "scale_float"
// CHECK-PTX: .entry add_one(
// CHECK-PTX: .entry scale_float(
