// When a file has a real error beside constructs that repair makes valid
// Metal (here `half4 * 255.0`, OpenCL's rank rule), only the real error is
// reported, where the source has it.
#include <metal_stdlib>
using namespace metal;

kernel void k(device half4 *h [[buffer(0)]]) {
  half4 x = h[0] * 255.0;
  h[1] = x + undeclared;  // expected-error {{undeclared identifier 'undeclared'}}
}
