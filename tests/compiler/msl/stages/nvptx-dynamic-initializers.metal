// GPU code has no static constructors: a program-scope variable whose
// initializer runs code is an error on nvptx64 naming it, not a backend
// crash (LLVM aborts on a module with constructors).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

extern "C" float host_provided(float x);
constant float kFolded = 3.0f;
constant float kDynamic = host_provided(kFolded);

kernel void k(device float *out [[buffer(0)]]) { out[0] = kDynamic; }
// expected-error@0 {{program-scope variable(s) 'kDynamic' need an initializer that runs code}}
