// blur.metal - a horizontal box blur of one row of floats per thread.
#include <metal_stdlib>
#include "blur_params.h"
using namespace metal;

kernel void blur_rows(device const float* src      [[buffer(0)]],
                      device float* dst            [[buffer(1)]],
                      constant BlurParams& params  [[buffer(2)]],
                      uint2 gid                    [[thread_position_in_grid]])
{
    if (gid.x >= params.width || gid.y >= params.height)
        return;
    float sum = 0.0f;
    int count = 0;
    for (int dx = -BLUR_RADIUS; dx <= BLUR_RADIUS; ++dx) {
        int x = int(gid.x) + dx;
        if (x < 0 || x >= int(params.width))
            continue;
        sum += src[gid.y * params.width + uint(x)];
        ++count;
    }
    dst[gid.y * params.width + gid.x] = sum / float(count);
}
