// `if constexpr` (C++17, which Metal 3.x and 4 accept): the branch not taken
// is discarded, so it may hold code that would not compile for T, and the
// choice is a constant expression.
// In Metal 1-3 (C++14-based) each use warns as a C++17 extension, as in
// Apple's compiler (cxx17-extensions-warn.metal); silenced here as ML
// projects silence it.
// msl-options: -Wno-c++17-extensions
#include <metal_stdlib>
using namespace metal;

template <class T> constexpr int category() {
  if constexpr (is_floating_point_v<T>)
    return 1;
  else if constexpr (is_integral_v<T>)
    return is_signed_v<T> ? 2 : 3;
  else
    return 4;
}
static_assert(category<float>() == 1 && category<half>() == 1, "floating point");
static_assert(category<int>() == 2 && category<ushort>() == 3, "integers");
static_assert(category<float4>() == 4, "vectors take the last branch");

// The discarded branch uses .x, which a scalar does not have.
template <class T> T first_lane(T v) {
  if constexpr (is_vector_v<T>)
    return T(v.x);
  else
    return v;
}

// A discarded branch with an init statement and a static_assert that would fail.
template <int N> constexpr int checked() {
  if constexpr (constexpr int twice = N * 2; twice > 10)
    return twice;
  else if constexpr (N < 0)
    static_assert(N >= 0, "never instantiated for N >= 0");
  else
    return -N;
}
static_assert(checked<6>() == 12 && checked<3>() == -3, "init statement");

kernel void k(device float4 *v [[buffer(0)]], device int *n [[buffer(1)]]) {
  v[0] = first_lane(float4(7.0f, 1.0f, 2.0f, 3.0f));
  n[0] = first_lane(41) + category<uint>() - 2;
  n[1] = checked<9>();
}
// CHECK-IR: store <4 x float> <float 7.000000e+00, float 7.000000e+00, float 7.000000e+00, float 7.000000e+00>
// CHECK-IR: store i32 42
// CHECK-IR: store i32 18
