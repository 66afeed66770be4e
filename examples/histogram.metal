// histogram.metal - counts byte values into 256 bins with device atomics.
// `bins` must be zeroed before the dispatch.
#include <metal_stdlib>
using namespace metal;

kernel void histogram(device const uchar* data [[buffer(0)]],
                      device atomic_uint* bins [[buffer(1)]],
                      constant uint& n         [[buffer(2)]],
                      uint gid                 [[thread_position_in_grid]])
{
    if (gid >= n)
        return;
    // Relaxed is the only order every Metal version supports, and all a
    // counter needs: the host reads the bins after the dispatch completes.
    atomic_fetch_add_explicit(&bins[data[gid]], 1u, memory_order_relaxed);
}
