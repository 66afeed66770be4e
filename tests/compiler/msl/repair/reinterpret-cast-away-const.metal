// Casting away const with reinterpret_cast is still an error outside the
// argument-buffer form the repair handles (arrays of pointers).
#include <metal_stdlib>
using namespace metal;

kernel void k(const device int *p [[buffer(0)]]) {
  device float *q = reinterpret_cast<device float *>(p); // expected-error {{casts away qualifiers}}
  q[0] = 1.0;
}
