// msl-target: nvptx64
// Range-for over braced lists for NVPTX, where std::initializer_list<int>
// (deduced) and metal::initializer_list<int> (spelled) must be one type:
// __generic and no address space mangle alike there.
#include <metal_stdlib>
using namespace metal;

int total(initializer_list<int> l) {
  int t = 0;
  for (int x : l)
    t += x;
  return t;
}

kernel void k(device int *o [[buffer(0)]]) {
  int digits = 0;
  for (auto x : {1, 2, 3})
    digits = digits * 10 + x;
  o[0] = digits + total({7, 8, 9}) * 1000;
}
// 123 + 24 * 1000
// CHECK-PTX: 24123
