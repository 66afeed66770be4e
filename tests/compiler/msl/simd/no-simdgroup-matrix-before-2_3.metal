// Below Metal 2.3 __HAVE_SIMDGROUP_MATRIX__ is not defined.
// msl-options: -std=macos-metal2.2
#include <metal_stdlib>
#if defined(__HAVE_SIMDGROUP_MATRIX__)
#error "no simdgroup matrices before Metal 2.3"
#endif
using namespace metal;
kernel void k(device float *out [[buffer(0)]]) { out[0] = 1; }
