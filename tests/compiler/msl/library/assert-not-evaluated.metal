// assert's condition is not evaluated: the kernel only stores.
#include <metal_stdlib>
using namespace metal;

kernel void k(device int *p [[buffer(0)]], device int *q [[buffer(1)]]) {
  assert(q[0]++ > 0);
  p[0] = 1;
}
// CHECK-IR: store i32 1
// CHECK-IR-NOT: load i32
