// A scalar colour converts to the texture's vector (MSL 2.0 2.12), like any
// call argument.
#include <metal_stdlib>
using namespace metal;
kernel void k(texture2d<float, access::write> t [[texture(0)]], uint2 gid [[thread_position_in_grid]]) { t.write(0.5, gid); }
// CHECK-IR: <4 x float> noundef nofpclass(nan inf) <float 5.000000e-01, float 5.000000e-01, float 5.000000e-01, float 5.000000e-01>
