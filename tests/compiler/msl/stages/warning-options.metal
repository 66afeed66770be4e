// Any -W / -Wno- flag is accepted: Apple's -Wno-c++17-extensions and
// -Wno-c++20-extensions, and an unknown one gets clang's warning, not an
// error; -O2 and -g are accepted too.
// msl-options: -Wno-c++17-extensions -Wno-c++20-extensions -Wno-such-warning-anywhere -O2 -g
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *o [[buffer(0)]]) { o[0] = 1.0f; }
// expected-warning@0 {{unknown warning option '-Wno-such-warning-anywhere'}}
