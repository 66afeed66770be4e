// `template <class T> void f(T out[4], T t)` called with a thread array and a
// T (PyTorch's upsampling coefficients): C++ for OpenCL deduces T twice
// (`__private float` from the generic pointer, float from the value) and
// finds no match; in Metal the unqualified pointer is a thread pointer, so
// T is float.
#include <metal_stdlib>
using namespace metal;

template <typename accscalar_t>
void coefficients(accscalar_t coeffs[4], accscalar_t t) {
  for (int i = 0; i < 4; ++i)
    coeffs[i] = t * accscalar_t(i);
}
template <typename T> T sum2(const T *v, T bias) { return v[0] + v[1] + bias; }

kernel void k(device float *o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float c[4];
  coefficients(c, o[i]);
  o[i] = c[0] + c[1] + c[2] + c[3] + sum2(c, 1.0f);
}
// CHECK-IR: define
