// reinterpret_cast of an array of `const device T*` held in constant memory
// to a reference to an array of pointers of another type (spirv-cross's
// overlapping argument-buffer bindings): Metal reinterprets the pointers;
// the cast drops the pointees' const, which C++ forbids, so it is compiled
// as the equivalent C-style cast.
// msl-options: -std=metal3.1
#include <metal_stdlib>
using namespace metal;

struct A { float x; };
struct B { float y; };
struct Set { const device A *a[4]; };

kernel void k(constant Set &set [[buffer(0)]], device float *out [[buffer(1)]]) {
  constant auto &b = reinterpret_cast<constant B *constant (&)[4]>(set.a);
  out[0] = b[1]->y + reinterpret_cast<constant B *constant (&)[4]>(set.a)[2]->y;
}
// Both reads happen (b[1] and, subscripting the cast's result, [2]).
// CHECK-IR: fadd fast float
