// `auto` (C++14) and `decltype(auto)` return types: deduced from the return
// statements, with decltype(auto) keeping a reference (and its address
// space), so an assignment through it reaches the original.
#include <metal_stdlib>
using namespace metal;

auto widen(half x) { return float(x) * 2.0f; }
static_assert(is_same_v<decltype(widen(half(1))), float>, "auto deduces float");

template <class T> auto lane_sum(T v) { return v.x + v.y; }
static_assert(is_same_v<decltype(lane_sum(int2(1, 2))), int>, "auto from a vector's lanes");
static_assert(is_same_v<decltype(lane_sum(half2(1, 2))), half>, "auto keeps half");

// Several returns of the same type, and recursion after the first return.
constexpr auto factorial(uint n) {
  if (n <= 1)
    return 1u;
  return n * factorial(n - 1);
}
static_assert(factorial(5) == 120u && is_same_v<decltype(factorial(3)), uint>, "recursive auto");

struct Pair {
  int first, second;
  decltype(auto) pick(bool b) { return b ? (first) : (second); } // int &
  auto copy(bool b) { return b ? first : second; }              // int
};
static_assert(is_reference_v<decltype(declval<thread Pair &>().pick(true))>, "decltype(auto) keeps the reference");
static_assert(is_same_v<decltype(declval<thread Pair &>().copy(true)), int>, "auto drops it");

template <class T> decltype(auto) element(device T *p, uint i) { return (p[i]); } // device T &
static_assert(is_same_v<decltype(element((device float *)nullptr, 0)), device float &>, "device reference");

// A trailing return type computed from the arguments.
template <class A, class B> auto mul(A a, B b) -> decltype(a * b) { return a * b; }
static_assert(is_same_v<decltype(mul(float4(1), 2.0f)), float4>, "trailing decltype");

kernel void k(device float *f [[buffer(0)]], device int *n [[buffer(1)]]) {
  Pair p = {3, 4};
  p.pick(false) = 40;          // writes p.second
  n[0] = p.first + p.second + p.copy(false) - 40; // 43
  element(f, 1) = widen(half(1.5h));
  n[1] = lane_sum(int2(20, 22));
}
// CHECK-IR: store i32 43
// CHECK-IR: store float 3.000000e+00
// CHECK-IR: store i32 42
