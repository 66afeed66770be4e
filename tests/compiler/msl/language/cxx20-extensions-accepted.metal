// C++20 features that Clang's C++17-based mode takes as extensions compile
// in Metal 3.x with Apple's -Wno-c++17-extensions -Wno-c++20-extensions and
// no warning (msld also passes -Wno-c++20-extensions itself; see
// cxx20-extensions-warn.metal for the warnings): designated initializers,
// template parameter lists on lambdas, [[likely]]/[[unlikely]], init
// statements in range-for, `using enum`; and C++17 features beside them.
// msl-options: -std=metal3.1 -Wno-c++17-extensions -Wno-c++20-extensions
#include <metal_stdlib>
using namespace metal;

struct Options { int count; float scale; bool clamp_output; };
enum class Channel { red, green, blue };

namespace msl_test::nested { constexpr int offset = 2; } // C++17 nested namespace

constexpr auto doubled = []<class T>(T x) { return x + x; };
static_assert(doubled(21) == 42 && doubled(1.5f) == 3.0f, "template lambda");

constexpr int channel_index(Channel c) {
  using enum Channel;
  switch (c) {
  case red: return 0;
  case green: return 1;
  case blue: return 2;
  }
  return -1;
}
static_assert(channel_index(Channel::blue) == 2, "using enum");

kernel void k(device float *f [[buffer(0)]], device int *n [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  Options o = {.count = 3, .scale = 0.5f, .clamp_output = true};
  Options partial = {.count = 1}; // the rest value-initialized
  int sum = 0;
  int values[3] = {4, 5, 6};
  for (int k = 10; int v : values)
    sum += v * k;                                     // 150
  if (i > 1000) [[unlikely]]
    f[i] = 0.0f;
  n[0] = sum + o.count + partial.count + int(partial.clamp_output) + msl_test::nested::offset; // 156
  f[0] = o.scale * doubled(2.0f);                     // 2
}
// CHECK-IR: store i32 156
// CHECK-IR: store float 2.000000e+00
