// __HAVE_SIMDGROUP_MATRIX__ is defined from Metal 2.3, where the types are.
// msl-options: -std=macos-metal2.3
#include <metal_stdlib>
#if !defined(__HAVE_SIMDGROUP_MATRIX__)
#error "simdgroup matrices exist in Metal 2.3"
#endif
using namespace metal;
kernel void k(device float *out [[buffer(0)]]) { out[0] = 1; }
