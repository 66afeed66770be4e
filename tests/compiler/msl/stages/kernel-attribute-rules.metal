// A [[kernel]] function returns void, as a `kernel` one does.
#include <metal_stdlib>
using namespace metal;

[[kernel]] int bad(device float *a [[buffer(0)]]) { return 0; } // expected-error {{a [[kernel]] function must return void}}
