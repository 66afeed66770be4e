// kernels.metal - the kernels of msl-bench-cpu, as Metal compute kernels.
// kernels.cl holds the same kernels in OpenCL C (run on PoCL) and
// NativeKernels.cpp the same algorithms as plain C++; CpuBench.h has the
// sizes all three share.
#include <metal_stdlib>
using namespace metal;

// y = a * x + y over n floats, one element per thread (dispatchThreads).
kernel void saxpy(device const float* x [[buffer(0)]],
                  device float* y       [[buffer(1)]],
                  constant float& a     [[buffer(2)]],
                  constant uint& n      [[buffer(3)]],
                  uint gid              [[thread_position_in_grid]])
{
    if (gid < n)
        y[gid] = fma(a, x[gid], y[gid]);
}

// C = A * B, N x N row-major, N a multiple of 16; 16x16 threadgroups, each
// thread one element of C, A and B staged through threadgroup tiles.
constant constexpr uint kGemmTile = 16;

kernel void sgemm(device const float* A [[buffer(0)]],
                  device const float* B [[buffer(1)]],
                  device float* C       [[buffer(2)]],
                  constant uint& N      [[buffer(3)]],
                  uint2 lid             [[thread_position_in_threadgroup]],
                  uint2 gid             [[thread_position_in_grid]])
{
    threadgroup float As[kGemmTile][kGemmTile];
    threadgroup float Bs[kGemmTile][kGemmTile];
    const uint row = gid.y, col = gid.x;
    float acc = 0.0f;
    for (uint t = 0; t < N; t += kGemmTile) {
        As[lid.y][lid.x] = A[row * N + t + lid.x];
        Bs[lid.y][lid.x] = B[(t + lid.y) * N + col];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < kGemmTile; ++k)
            acc += As[lid.y][k] * Bs[k][lid.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    C[row * N + col] = acc;
}

// One partial sum per threadgroup of 256 threads: each thread adds 16
// elements strided by 256 (coalesced), then a tree in threadgroup memory.
constant constexpr uint kReduceGroup = 256;
constant constexpr uint kReducePerThread = 16;

kernel void reduce(device const float* in [[buffer(0)]],
                   device float* partial  [[buffer(1)]],
                   uint lid               [[thread_position_in_threadgroup]],
                   uint group             [[threadgroup_position_in_grid]])
{
    threadgroup float tile[kReduceGroup];
    const uint base = group * kReduceGroup * kReducePerThread + lid;
    float s = 0.0f;
    for (uint i = 0; i < kReducePerThread; ++i)
        s += in[base + i * kReduceGroup];
    tile[lid] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = kReduceGroup / 2; stride > 0; stride /= 2) {
        if (lid < stride)
            tile[lid] += tile[lid + stride];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0)
        partial[group] = tile[0];
}

// 256-bin histogram of bytes: a threadgroup histogram with threadgroup
// atomics (each of 256 threads counts 64 values strided by 256), then one
// device atomic add per non-empty bin. Adds to `bins`.
constant constexpr uint kHistGroup = 256;
constant constexpr uint kHistPerThread = 64;

kernel void histogram(device const uchar* data [[buffer(0)]],
                      device atomic_uint* bins [[buffer(1)]],
                      uint lid                 [[thread_position_in_threadgroup]],
                      uint group               [[threadgroup_position_in_grid]])
{
    threadgroup atomic_uint local[256];
    atomic_store_explicit(&local[lid], 0u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint base = group * kHistGroup * kHistPerThread + lid;
    for (uint i = 0; i < kHistPerThread; ++i)
        atomic_fetch_add_explicit(&local[data[base + i * kHistGroup]], 1u, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint c = atomic_load_explicit(&local[lid], memory_order_relaxed);
    if (c != 0)
        atomic_fetch_add_explicit(&bins[lid], c, memory_order_relaxed);
}

// out = transpose(in), N x N, N a multiple of 32: 32x32 tiles through
// threadgroup memory (padded against bank conflicts), 32x8 threads, each
// thread 4 elements.
constant constexpr uint kTransTile = 32;
constant constexpr uint kTransRows = 8;

kernel void transpose(device const float* in [[buffer(0)]],
                      device float* out      [[buffer(1)]],
                      constant uint& N       [[buffer(2)]],
                      uint2 lid              [[thread_position_in_threadgroup]],
                      uint2 group            [[threadgroup_position_in_grid]])
{
    threadgroup float tile[kTransTile][kTransTile + 1];
    const uint x = group.x * kTransTile + lid.x;
    const uint y0 = group.y * kTransTile;
    for (uint j = lid.y; j < kTransTile; j += kTransRows)
        tile[j][lid.x] = in[(y0 + j) * N + x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    const uint ox = group.y * kTransTile + lid.x;
    const uint oy0 = group.x * kTransTile;
    for (uint j = lid.y; j < kTransTile; j += kTransRows)
        out[(oy0 + j) * N + ox] = tile[lid.x][j];
}

// Row softmax, one SIMD-group (32 threads) per row: each thread strides over
// the row, simd_max and simd_sum combine the lanes.
kernel void softmax(device const float* in [[buffer(0)]],
                    device float* out      [[buffer(1)]],
                    constant uint& cols    [[buffer(2)]],
                    uint row               [[threadgroup_position_in_grid]],
                    ushort lane            [[thread_index_in_simdgroup]])
{
    device const float* x = in + row * cols;
    device float* y = out + row * cols;
    float m = -INFINITY;
    for (uint i = lane; i < cols; i += 32)
        m = max(m, x[i]);
    m = simd_max(m);
    float s = 0.0f;
    for (uint i = lane; i < cols; i += 32)
        s += exp(x[i] - m);
    const float inv = 1.0f / simd_sum(s);
    for (uint i = lane; i < cols; i += 32)
        y[i] = exp(x[i] - m) * inv;
}
