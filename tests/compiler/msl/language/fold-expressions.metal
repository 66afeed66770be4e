// Fold expressions (C++17): unary and binary, left and right, over values,
// over a comma (calls in order), over && of traits, and over vectors.
// In Metal 1-3 (C++14-based) each use warns as a C++17 extension, as in
// Apple's compiler (cxx17-extensions-warn.metal); silenced here as ML
// projects silence it.
// msl-options: -Wno-c++17-extensions
#include <metal_stdlib>
using namespace metal;

template <class... T> constexpr auto sum(T... v) { return (v + ...); }              // unary right
template <class... T> constexpr auto sum_from(int init, T... v) { return (init + ... + v); } // binary right
template <class... T> constexpr int subtract_left(T... v) { return (... - v); }     // unary left
template <class... T> constexpr bool all_integral() { return (is_integral_v<T> && ...); }
template <class... T> constexpr int count() { return (0 + ... + int(sizeof(T) > 0)); }
template <class... T> constexpr bool none() { return (false || ... || T::value); }

static_assert(sum(1, 2, 3, 4) == 10, "unary right fold");
static_assert(sum_from(100, 1, 2) == 103 && sum_from(5) == 5, "binary fold, empty pack");
static_assert(subtract_left(10, 3, 2) == 5, "left fold is ((10 - 3) - 2)");
static_assert(all_integral<int, uint, short>() && !all_integral<int, float>(), "&& over traits");
static_assert(all_integral<>() && count<>() == 0 && !none<>(), "empty && / + / ||");
static_assert(count<float, half, int2>() == 3, "binary fold over sizeof");

// A comma fold calls in order; each call writes the next slot.
template <class... T> void store_all(device int *out, T... v) {
  int i = 0;
  ((out[i++] = v * 10), ...);
}

kernel void k(device int *out [[buffer(0)]], device float4 *v [[buffer(1)]]) {
  store_all(out, 1, 2, 3);
  out[3] = sum(uint(4), 5u, ushort(6));                   // 15 as uint
  v[0] = sum(float4(1.0f), float4(2.0f, 3.0f, 4.0f, 5.0f), float4(0.5f));
}
// CHECK-IR: store i32 10
// CHECK-IR: store i32 20
// CHECK-IR: store i32 30
// CHECK-IR: store i32 15
// CHECK-IR: store <4 x float> <float 3.500000e+00, float 4.500000e+00, float 5.500000e+00, float 6.500000e+00>
