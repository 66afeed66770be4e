// What Metal 3.x code uses of C++14, and class template argument deduction
// (C++17, which msld takes in every language version, though Clang's C++14
// mode has no such extension), compiles without a warning in Metal 3.1
// (cxx17-extensions-warn.metal: what warns): generic lambdas, variable
// templates, relaxed constexpr functions, deduced return types, binary
// literals and digit separators, [[deprecated]]; CTAD with constructors,
// deduction guides and metal::array. The stdlib is C++17 inside (inline
// variables, if constexpr, fold expressions): none of that warns either.
// (A macro before the include: the stdlib is parsed with this file, not
// taken precompiled.)
// msl-options: -std=metal3.1
#define MSL_TEST_SCALE 3
#include <metal_stdlib>
using namespace metal;

template <class T> constexpr T kScale = T(MSL_TEST_SCALE);
template <class T> constexpr bool kIsWide = sizeof(T) >= 4;
static_assert(kScale<int> == 3 && kScale<float> == 3.0f && kIsWide<float> && !kIsWide<half>, "variable templates");

template <class T> struct Box {
  T value;
  constexpr Box(T v) : value(v) {}
};
template <class A, class B> struct Pair {
  A first;
  B second;
};
template <class A, class B> Pair(A, B) -> Pair<A, B>;
static_assert(is_same_v<decltype(Box(2.5f)), Box<float>> && is_same_v<decltype(Pair{1, 2.0h}), Pair<int, half>>,
              "CTAD");
static_assert(is_same_v<decltype(array{1u, 2u, 3u}), array<uint, 3>>, "metal::array");

constexpr int bits(uint x) { // C++14: loops and locals in constexpr
  int n = 0;
  for (; x; x &= x - 1)
    ++n;
  return n;
}
static_assert(bits(0b1011'0001u) == 4, "binary literal, digit separators");

auto half_of(float x) { return x * 0.5f; } // deduced return type
[[deprecated("use half_of")]] float old_half(float x) { return x / 2.0f; }

kernel void k(device float *f [[buffer(0)]], device int *n [[buffer(1)]]) {
  auto add = [](auto a, auto b) { return a + b; }; // generic lambda
  auto mul = [k = 2](auto x) { return x * k; };    // init capture
  Box b(1.5f);
  Pair p{4, 0.25f};
  array lanes{uint2(1, 2), uint2(3, 4)};
  f[0] = add(b.value, p.second) + half_of(2.0f) + float(kScale<half>) + select(0.0f, 1.0f, true); // 1.75 + 1 + 3 + 1
  n[0] = add(p.first, mul(3)) + int(lanes[1].y) + bits(0xFFu) + max(int2(1, 9), int2(5, 2)).y;    // 10 + 4 + 8 + 9
}
// CHECK-IR: store float 6.750000e+00
// CHECK-IR: store i32 31
