// C++17's standard attributes [[nodiscard]], [[maybe_unused]] and
// [[fallthrough]] are c++17-attribute-extensions in Metal 1.x-3.x: a
// subgroup of c++17-extensions that is off by default, as in Clang's C++14
// mode (cxx17-extensions-warn.metal: no warning), and on with
// -Wc++17-extensions. Their GNU and clang:: spellings never warn.
// msl-options: -std=metal3.2 -Wc++17-extensions
#include <metal_stdlib>
using namespace metal;

[[nodiscard]] int scaled(int x) { return x * 2; } // expected-warning {{use of the 'nodiscard' attribute is a C++17 extension}}
struct [[nodiscard]] Status { int code; }; // expected-warning {{use of the 'nodiscard' attribute is a C++17 extension}}
[[gnu::warn_unused_result]] int plain(int x) { return x + 1; }
__attribute__((unused)) static int helper(int x) { return x; }

int classify(int n) {
  [[maybe_unused]] int spare = n; // expected-warning {{use of the 'maybe_unused' attribute is a C++17 extension}}
  int r = 0;
  switch (n) {
  case 0:
    r += 1;
    [[fallthrough]]; // expected-warning {{use of the 'fallthrough' attribute is a C++17 extension}}
  case 1:
    r += 2;
    [[clang::fallthrough]];
  default:
    r += 4;
  }
  return r;
}

kernel void k(device int *out [[buffer(0)]]) {
  Status s{3};
  out[0] = scaled(classify(0)) + plain(s.code); // 14 + 4
}
// CHECK-IR: store i32 18
