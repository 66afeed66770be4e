// constexpr functions with loops, locals and branches (C++14), constexpr
// constructors and member functions, constexpr vector arithmetic, and
// static_assert with and without a message (C++17) at program, class,
// function and block scope (static-assert-failure.metal: a failing one).
// Without a message it warns as a C++17 extension in Metal 1-3.
#include <metal_stdlib>
using namespace metal;

constexpr uint gcd(uint a, uint b) {
  while (b != 0) {
    uint t = a % b;
    a = b;
    b = t;
  }
  return a;
}
constexpr int popcount_loop(uint x) {
  int n = 0;
  for (; x; x &= x - 1)
    ++n;
  return n;
}
static_assert(gcd(84, 36) == 12, "loop");
static_assert(popcount_loop(0xF0F0u) == 8);  // expected-warning {{'static_assert' with no message is a C++17 extension}}

struct Fixed {
  int raw;
  constexpr Fixed(float f) : raw(int(f * 256.0f)) {}
  constexpr float value() const { return float(raw) / 256.0f; }
  constexpr Fixed operator+(Fixed o) const { return Fixed((raw + o.raw) / 256.0f); }
  static_assert(sizeof(int) == 4, "class scope");
};
static_assert((Fixed(1.5f) + Fixed(2.25f)).value() == 3.75f, "constexpr members");

// A constexpr vector (its lanes are not usable in a static_assert: Clang 19
// does not constant-evaluate swizzles; the kernel's use folds).
constexpr float4 weights = float4(1.0f, 2.0f, 3.0f, 4.0f) * 0.5f;

template <class T> T checked_scale(T x) {
  static_assert(sizeof(T) <= 8, "function scope, per instantiation");
  return x * T(2);
}

kernel void k(device uint *u [[buffer(0)]], device float *f [[buffer(1)]]) {
  constexpr uint g = gcd(1071, 462);
  static_assert(g == 21, "block scope");
  u[0] = g + popcount_loop(255);                         // 29
  f[0] = (Fixed(0.5f) + Fixed(0.25f)).value() + weights.x; // 1.25
  f[1] = checked_scale(1.5f) + weights.w;               // 5
}
// CHECK-IR: store i32 29
// CHECK-IR: store float 1.250000e+00
// CHECK-IR: store float 5.000000e+00
