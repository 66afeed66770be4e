// Range-for over a braced list (`for (auto x : {1, 2, 3})`) and `auto l =
// {...}`: Clang deduces std::initializer_list<int>, whose layout it checks
// (a `const E *` first member); in OpenCL mode a spelled `const E *` would
// point into __generic, so the stdlib's initializer_list holds a pointer
// to `const E` as Clang's check wants. The loops' values are checked.
#include <metal_stdlib>
using namespace metal;

template <typename T> T sum3(T a, T b, T c) {
  T s = T(0);
  for (auto x : {a, b, c})
    s += x;
  return s;
}

int total(initializer_list<int> l) {
  int t = 0;
  for (int x : l)
    t += x;
  return t;
}

kernel void k(device int *o [[buffer(0)]], device float *f [[buffer(1)]], device float4 *v [[buffer(2)]]) {
  int digits = 0;
  for (auto x : {1, 2, 3})
    digits = digits * 10 + x;
  o[0] = digits;
  int more = 0;
  for (int x : {4, 5, 6, 7})
    more = more * 10 + x;
  o[1] = more;
  float acc = 0;
  for (auto x : {0.5f, 0.25f, 2.0f})
    acc += x;
  f[0] = acc;
  auto l = {10, 20, 30, 40};
  o[2] = int(l.size()) * 1000 + *l.begin() + l.end()[-1];
  o[3] = sum3(100, 20, 3);
  v[0] = sum3(float4(1), float4(2, 3, 4, 5), float4(0.5));
  o[4] = total({7, 8, 9});
  int product = 1;
  for (auto x : {o[5], o[6], o[7]})
    product *= x;
  o[8] = product;
}
// CHECK-IR: store i32 123,
// CHECK-IR: store i32 4567,
// CHECK-IR: store float 2.750000e+00,
// 4 * 1000 + 10 + 40
// CHECK-IR: store i32 4050,
// CHECK-IR: store i32 123,
// CHECK-IR: store <4 x float> <float 3.500000e+00, float 4.500000e+00, float 5.500000e+00, float 6.500000e+00>
// CHECK-IR: store i32 24,
// The runtime elements are multiplied.
// CHECK-IR: mul nsw i32
