// -Wno-c++17-extensions, as ML projects pass it, silences every C++17
// extension warning of Metal 1.x-3.x (cxx17-extensions-warn.metal, the same
// code) and the code compiles alike.
// msl-options: -std=metal3.1 -Wno-c++17-extensions
#include <metal_stdlib>
using namespace metal;

struct Pair { int a; float b; };
struct Limits { static inline constexpr int count = 3; };
inline constexpr constant int kBias = 4;
namespace msl_test::detail { constexpr constant int kStep = 2; }

template <class... T> constexpr int total(T... v) { return (v + ... + 0); }

template <class T> constexpr int kind() {
  if constexpr (is_floating_point_v<T>)
    return 1;
  else
    return 2;
}
static_assert(kind<float>() == 1 && kind<half>() == 1 && kind<int>() == 2);

struct Counter {
  int n;
  int get() const { return [*this] { return n; }(); }
};

[[nodiscard]] int scaled(int x) { return x * 2; }

template <class T> int lanes(T v) {
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wc++17-extensions"
  if constexpr (is_vector_v<T>)
    return vec_elements<T>::value;
#pragma clang diagnostic pop
  return 1;
}

kernel void k(device int *out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  auto [a, b] = Pair{5, 0.5f};
  auto twice = [](int x) constexpr { return 2 * x; };
  if (int j = int(i); j > 100)
    out[1] = j;
  switch (int s = a; s) {
  default:
    break;
  }
  Counter c{6};
  out[0] = total(1, 2, 3) + a + int(b * 2.0f) + Limits::count + kBias + msl_test::detail::kStep +
           twice(kind<int>()) + c.get() + scaled(1) + lanes(float4(0.0f)) + lanes(1.0f); // 38
}
// CHECK-IR: store i32 38
