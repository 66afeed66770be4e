// saxpy.metal - y = a * x + y, one element per thread.
#include <metal_stdlib>
using namespace metal;

kernel void saxpy(constant float& a       [[buffer(0)]],
                  device const float* x   [[buffer(1)]],
                  device float* y         [[buffer(2)]],
                  constant uint& n        [[buffer(3)]],
                  uint gid                [[thread_position_in_grid]])
{
    // The grid may be rounded up to a whole number of threadgroups.
    if (gid >= n)
        return;
    y[gid] = fma(a, x[gid], y[gid]);
}
