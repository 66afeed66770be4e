// Lambdas (C++11) and generic lambdas (C++14) in a kernel: capturing by value
// and by reference, mutable, immediately invoked, passed to a template,
// generic over scalar and vector arguments, and constexpr (C++17).
#include <metal_stdlib>
using namespace metal;

template <class F, class T> constexpr T apply_twice(F f, T x) { return f(f(x)); }

constexpr auto square = [](auto x) { return x * x; };
static_assert(square(7) == 49, "a generic lambda is constexpr");
static_assert(apply_twice([](int x) { return x + 3; }, 1) == 7, "a lambda as an argument");

kernel void k(device int *out [[buffer(0)]], device float4 *v [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  int base = 10;
  auto add_base = [base](int x) { return x + base; };      // by value
  int total = 0;
  auto accumulate = [&total](int x) { total += x; };       // by reference
  accumulate(add_base(1));                                 // 11
  accumulate(add_base(2));                                 // 23
  int calls = 0;
  auto counter = [calls]() mutable { return ++calls; };
  counter();
  out[0] = total + counter() * 100;                        // 223; calls stays 0
  out[1] = calls + [&] { return base * 2; }();             // 20
  auto scale = [=](auto x) { return x * base; };           // generic, both types
  out[2] = scale(4);                                       // 40
  v[0] = scale(float4(1.0f, 2.0f, 3.0f, 4.0f));            // 10, 20, 30, 40
  out[3] = apply_twice(square, 3);                         // 81
  // Captures the thread's index: a lambda over non-constant values.
  auto at = [v, i](int lane) { return v[i][lane]; };
  v[i + 1] = float4(at(3), at(2), at(1), at(0));
}
// CHECK-IR: store i32 223
// CHECK-IR: store i32 20
// CHECK-IR: store i32 40
// CHECK-IR: store <4 x float> <float 1.000000e+01, float 2.000000e+01, float 3.000000e+01, float 4.000000e+01>
// CHECK-IR: store i32 81
