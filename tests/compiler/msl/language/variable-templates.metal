// Variable templates (C++14): in the constant address space at program
// scope, specialized, partially specialized, used in constant expressions and
// read by a kernel, as well as the metal:: trait _v forms they make possible.
#include <metal_stdlib>
using namespace metal;

template <class T> constexpr constant T pi_v = T(3.14159265358979323846);
template <> constexpr constant int pi_v<int> = 3;
template <class T> constexpr constant int lanes = 1;
template <class T> constexpr constant int lanes<vec<T, 2>> = 2;
template <class T> constexpr constant int lanes<vec<T, 4>> = 4;
template <int N> constexpr constant int pow2 = 2 * pow2<N - 1>;
template <> constexpr constant int pow2<0> = 1;
// Without an address space: a constexpr variable at program scope is constant.
template <class T> constexpr T quarter = T(1) / T(4);

static_assert(pi_v<int> == 3 && pi_v<float> > 3.14f && pi_v<float> < 3.15f, "specialized");
static_assert(lanes<float> == 1 && lanes<half2> == 2 && lanes<uint4> == 4, "partial specializations");
static_assert(pow2<10> == 1024, "recursive");
static_assert(quarter<float> == 0.25f && quarter<int> == 0, "no address space");
static_assert(is_same_v<decltype(pi_v<half>), const constant half>, "the variable's type");

// Not constexpr: a constant-space table, read with a runtime index.
template <class T> constant T table[4] = {T(1), T(2), T(4), T(8)};

kernel void k(device float *f [[buffer(0)]], device int *n [[buffer(1)]], device half *h [[buffer(2)]],
              uint i [[thread_position_in_grid]]) {
  f[0] = pi_v<float>;
  h[0] = pi_v<half>;
  n[0] = pow2<5> + lanes<int4> + pi_v<int>;   // 39
  f[1] = quarter<float> * 6.0f;
  f[i + 2] = table<float>[i & 3];
  n[i + 1] = table<int>[i & 3];
}
// CHECK-IR: store float 0x400921FB60000000
// CHECK-IR: store half 0xH4248
// CHECK-IR: store i32 39
// CHECK-IR: store float 1.500000e+00
