// reduce.metal - sum reduction: each threadgroup sums its slice of `in` in
// threadgroup memory and writes one partial sum per threadgroup.
// Dispatch with a power-of-two threadgroup size of at most 256.
#include <metal_stdlib>
using namespace metal;

kernel void reduce_sum(device const float* in     [[buffer(0)]],
                       device float* partial      [[buffer(1)]],
                       constant uint& n           [[buffer(2)]],
                       uint gid                   [[thread_position_in_grid]],
                       uint lid                   [[thread_position_in_threadgroup]],
                       uint group                 [[threadgroup_position_in_grid]],
                       uint group_size            [[threads_per_threadgroup]])
{
    threadgroup float tile[256];

    tile[lid] = gid < n ? in[gid] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);

    // Tree reduction: halve the number of active threads each step.
    for (uint stride = group_size / 2; stride > 0; stride /= 2) {
        if (lid < stride)
            tile[lid] += tile[lid + stride];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    if (lid == 0)
        partial[group] = tile[0];
}

// The same reduction with the scratch memory supplied by the host
// (setThreadgroupMemoryLength:atIndex:0), so any group size works.
kernel void reduce_sum_dynamic(device const float* in     [[buffer(0)]],
                               device float* partial      [[buffer(1)]],
                               constant uint& n           [[buffer(2)]],
                               threadgroup float* scratch [[threadgroup(0)]],
                               uint gid                   [[thread_position_in_grid]],
                               uint lid                   [[thread_position_in_threadgroup]],
                               uint group                 [[threadgroup_position_in_grid]],
                               uint group_size            [[threads_per_threadgroup]])
{
    scratch[lid] = gid < n ? in[gid] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);

    for (uint stride = group_size / 2; stride > 0; stride /= 2) {
        if (lid < stride)
            scratch[lid] += scratch[lid + stride];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }

    if (lid == 0)
        partial[group] = scratch[0];
}
