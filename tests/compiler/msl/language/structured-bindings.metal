// Structured bindings (C++17): of a struct (by value and by reference), of a
// C array, of a vector (Clang decomposes vectors lane by lane), and inside a
// constexpr function. metal::array is an aggregate of one C array, so it
// decomposes into that one member (`auto [a, b] = arr;` is rejected).
// In Metal 1-3 (C++14-based) each use warns as a C++17 extension, as in
// Apple's compiler (cxx17-extensions-warn.metal); silenced here as ML
// projects silence it.
// msl-options: -Wno-c++17-extensions
#include <metal_stdlib>
using namespace metal;

struct Range { int lo; float hi; };

constexpr int span(Range r) {
  auto [lo, hi] = r;
  return int(hi) - lo;
}
static_assert(span(Range{2, 9.5f}) == 7, "bindings in a constexpr function");

kernel void k(device int *n [[buffer(0)]], device float *f [[buffer(1)]]) {
  Range r = {3, 2.5f};
  auto [lo, hi] = r;               // copies
  auto &[rlo, rhi] = r;            // references into r
  rlo = 10;
  rhi *= 2.0f;
  n[0] = lo + r.lo;                // 3 + 10
  f[0] = hi + r.hi;                // 2.5 + 5

  int pair[2] = {20, 22};
  auto [p0, p1] = pair;
  n[1] = p0 + p1;                  // 42

  float3 v = float3(1.0f, 2.0f, 4.0f);
  auto [x, y, z] = v;
  f[1] = x * 100.0f + y * 10.0f + z; // 124

  array<int, 3> arr = {{1, 2, 3}};
  auto &[elems] = arr;
  elems[1] = 40;
  n[2] = arr[0] + arr[1] + arr[2] + span(Range{0, 0.0f}); // 44
  static_assert(is_same_v<decltype(lo + 0), int> && is_same_v<decltype(x + y), float>, "binding types");
}
// CHECK-IR: store i32 13
// CHECK-IR: store float 7.500000e+00
// CHECK-IR: store i32 42
// CHECK-IR: store float 1.240000e+02
// CHECK-IR: store i32 44
