// Two entry points may not share a name: a [[host_name]] equal to another
// kernel's name, or two equal host names, are errors.
#include <metal_stdlib>
using namespace metal;

kernel void b(device float *p [[buffer(0)]]) { p[0] = 1.0; }
[[host_name("b")]] kernel void a(device float *p [[buffer(0)]]) { p[0] = 2.0; } // expected-error {{kernel function 'a' would have the entry name 'b', which kernel function 'b' already has}}
[[host_name("c")]] kernel void c1(device float *p [[buffer(0)]]) { p[0] = 3.0; }
[[host_name("c")]] kernel void c2(device float *p [[buffer(0)]]) { p[0] = 4.0; } // expected-error {{kernel function 'c2' would have the entry name 'c', which kernel function 'c1' already has}}
