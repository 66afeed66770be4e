// Metal 1.x-3.x are C++14-based: Apple's compiler accepts C++17 features
// there with Clang's C++14-mode warning in group c++17-extensions, and so
// does msld, at the same places (cxx17-extensions-silenced.metal:
// -Wno-c++17-extensions; cxx17-extensions-metal4.metal: none in Metal 4;
// cxx17-extensions-werror.metal: errors with -Werror). A template warns
// once, not per instantiation; `#pragma clang diagnostic` applies.
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal;

struct Pair { int a; float b; };
struct Limits { static inline constexpr int count = 3; }; // expected-warning {{inline variables are a C++17 extension}}
inline constexpr constant int kBias = 4; // expected-warning {{inline variables are a C++17 extension}}
namespace msl_test::detail { constexpr constant int kStep = 2; } // expected-warning {{nested namespace definition is a C++17 extension; define each namespace separately}}

template <class... T> constexpr int total(T... v) { return (v + ... + 0); } // expected-warning {{pack fold expression is a C++17 extension}}

template <class T> constexpr int kind() {
  if constexpr (is_floating_point_v<T>) // expected-warning {{constexpr if is a C++17 extension}}
    return 1;
  else
    return 2;
}
static_assert(kind<float>() == 1 && kind<half>() == 1 && kind<int>() == 2); // expected-warning {{'static_assert' with no message is a C++17 extension}}

struct Counter {
  int n;
  int get() const { return [*this] { return n; }(); } // expected-warning {{capture of '*this' by copy is a C++17 extension}}
};

// [[nodiscard]] is c++17-attribute-extensions, off unless asked for
// (cxx17-attribute-extensions.metal).
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
  auto [a, b] = Pair{5, 0.5f}; // expected-warning {{decomposition declarations are a C++17 extension}}
  auto twice = [](int x) constexpr { return 2 * x; }; // expected-warning {{'constexpr' on lambda expressions is a C++17 extension}}
  if (int j = int(i); j > 100) // expected-warning {{'if' initialization statements are a C++17 extension}}
    out[1] = j;
  switch (int s = a; s) { // expected-warning {{'switch' initialization statements are a C++17 extension}}
  default:
    break;
  }
  Counter c{6};
  out[0] = total(1, 2, 3) + a + int(b * 2.0f) + Limits::count + kBias + msl_test::detail::kStep +
           twice(kind<int>()) + c.get() + scaled(1) + lanes(float4(0.0f)) + lanes(1.0f); // 38
}
// CHECK-IR: store i32 38
