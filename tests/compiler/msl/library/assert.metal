// assert(condition) from <metal_stdlib>: type-checked, not evaluated (a
// shader has no host to report to), so a failing condition costs nothing.
#include <metal_stdlib>
using namespace metal;

kernel void k(device int *p [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  assert(p[i] >= 0);
  p[i] = 1;
  assert(no_such_name > 0); // expected-error {{use of undeclared identifier 'no_such_name'}}
}
