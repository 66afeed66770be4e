// -Wc++20-extensions turns the C++20-extension warnings back on (Apple's
// compiler gives them by default in -std=metal3.x, where MLX silences them
// with -Wno-c++20-extensions); the code still compiles.
// msl-options: -std=metal3.1 -Wc++20-extensions
#include <metal_stdlib>
using namespace metal;

struct Options { int count; float scale; };
enum class Channel { red, green };

kernel void k(device int *n [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  Options o = {.count = 3, .scale = 0.5f}; // expected-warning {{designated initializers are a C++20 extension}}
  auto twice = []<class T>(T x) { return x + x; }; // expected-warning {{explicit template parameter list for lambdas is a C++20 extension}}
  int values[2] = {4, 5};
  for (int k = 10; int v : values) // expected-warning {{range-based for loop initialization statements are a C++20 extension}}
    o.count += v * k;
  if (i > 1000) [[unlikely]] // expected-warning {{use of the 'unlikely' attribute is a C++20 extension}}
    o.count = 0;
  using enum Channel; // expected-warning {{using enum declaration is a C++20 extension}}
  n[i] = twice(o.count) + int(green);
}
