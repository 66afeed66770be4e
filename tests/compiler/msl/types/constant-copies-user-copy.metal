// A class with a user-written copy constructor keeps C++ for OpenCL's rule:
// its copy constructor takes a generic reference, which constant memory does
// not bind to.
#include <metal_stdlib>
using namespace metal;

struct Counted { float x; Counted(const Counted &o) : x(o.x + 1) {} };

kernel void k(constant Counted &c [[buffer(0)]], device float *out [[buffer(1)]]) {
  Counted copy = c; // expected-error {{no matching constructor}}
  out[0] = copy.x;
}
