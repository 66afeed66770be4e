// A real error on the same line as a repaired construct: the repaired
// compile's error there could be the repair's own doing, so the original
// diagnostics are reported, both of them.
#include <metal_stdlib>
using namespace metal;

kernel void k(device half4 *h [[buffer(0)]]) {
  h[1] = h[0] * 255.0 + undeclared; // expected-error {{greater rank}} expected-error {{undeclared identifier 'undeclared'}}
}
