// When a file also has a real error, the repairable ones are reported as
// they are (the first compile's diagnostics), with their lines.
#include <metal_stdlib>
using namespace metal;

kernel void k(device half4 *h [[buffer(0)]]) {
  half4 x = h[0] * 255.0; // expected-error {{greater rank}}
  h[1] = x + undeclared;  // expected-error {{undeclared identifier 'undeclared'}}
}
