// tint.metal - multiplies RGBA pixels by a colour.
#include <metal_stdlib>
using namespace metal;

kernel void tint(device float4* pixels   [[buffer(0)]],
                 constant float4& colour [[buffer(1)]],
                 uint gid                [[thread_position_in_grid]])
{
    pixels[gid] *= colour;
}
