// kernels.cl - the kernels of msl-bench-cpu in OpenCL C 1.2, line for line
// the algorithms of kernels.metal (same work-group sizes, same tiles).

__kernel void saxpy(__global const float* x, __global float* y, float a, uint n)
{
    uint gid = get_global_id(0);
    if (gid < n)
        y[gid] = fma(a, x[gid], y[gid]);
}

#define GEMM_TILE 16
__kernel void sgemm(__global const float* A, __global const float* B, __global float* C, uint N)
{
    __local float As[GEMM_TILE][GEMM_TILE];
    __local float Bs[GEMM_TILE][GEMM_TILE];
    const uint lx = get_local_id(0), ly = get_local_id(1);
    const uint row = get_global_id(1), col = get_global_id(0);
    float acc = 0.0f;
    for (uint t = 0; t < N; t += GEMM_TILE) {
        As[ly][lx] = A[row * N + t + lx];
        Bs[ly][lx] = B[(t + ly) * N + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < GEMM_TILE; ++k)
            acc += As[ly][k] * Bs[k][lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * N + col] = acc;
}

#define REDUCE_GROUP 256
#define REDUCE_PER_THREAD 16
__kernel void reduce(__global const float* in, __global float* partial)
{
    __local float tile[REDUCE_GROUP];
    const uint lid = get_local_id(0), group = get_group_id(0);
    const uint base = group * REDUCE_GROUP * REDUCE_PER_THREAD + lid;
    float s = 0.0f;
    for (uint i = 0; i < REDUCE_PER_THREAD; ++i)
        s += in[base + i * REDUCE_GROUP];
    tile[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint stride = REDUCE_GROUP / 2; stride > 0; stride /= 2) {
        if (lid < stride)
            tile[lid] += tile[lid + stride];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[group] = tile[0];
}

#define HIST_GROUP 256
#define HIST_PER_THREAD 64
__kernel void histogram(__global const uchar* data, __global uint* bins)
{
    __local uint local_bins[256];
    const uint lid = get_local_id(0), group = get_group_id(0);
    local_bins[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint base = group * HIST_GROUP * HIST_PER_THREAD + lid;
    for (uint i = 0; i < HIST_PER_THREAD; ++i)
        atomic_inc(&local_bins[data[base + i * HIST_GROUP]]);
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint c = local_bins[lid];
    if (c != 0)
        atomic_add(&bins[lid], c);
}

#define TRANS_TILE 32
#define TRANS_ROWS 8
__kernel void transpose(__global const float* in, __global float* out, uint N)
{
    __local float tile[TRANS_TILE][TRANS_TILE + 1];
    const uint lx = get_local_id(0), ly = get_local_id(1);
    const uint x = get_group_id(0) * TRANS_TILE + lx;
    const uint y0 = get_group_id(1) * TRANS_TILE;
    for (uint j = ly; j < TRANS_TILE; j += TRANS_ROWS)
        tile[j][lx] = in[(y0 + j) * N + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint ox = get_group_id(1) * TRANS_TILE + lx;
    const uint oy0 = get_group_id(0) * TRANS_TILE;
    for (uint j = ly; j < TRANS_TILE; j += TRANS_ROWS)
        out[(oy0 + j) * N + ox] = tile[lx][j];
}

// Row softmax, one work-group of 32 per row; OpenCL 1.2 has no sub-group
// functions, so the lanes combine through local memory (a 5-step tree).
#define SOFTMAX_LANES 32
__kernel void softmax(__global const float* in, __global float* out, uint cols)
{
    __local float red[SOFTMAX_LANES];
    const uint lane = get_local_id(0);
    __global const float* x = in + get_group_id(0) * cols;
    __global float* y = out + get_group_id(0) * cols;
    float m = -INFINITY;
    for (uint i = lane; i < cols; i += SOFTMAX_LANES)
        m = fmax(m, x[i]);
    red[lane] = m;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = SOFTMAX_LANES / 2; s > 0; s >>= 1) {
        if (lane < s)
            red[lane] = fmax(red[lane], red[lane + s]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    m = red[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    float sum = 0.0f;
    for (uint i = lane; i < cols; i += SOFTMAX_LANES)
        sum += exp(x[i] - m);
    red[lane] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = SOFTMAX_LANES / 2; s > 0; s >>= 1) {
        if (lane < s)
            red[lane] += red[lane + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float inv = 1.0f / red[0];
    for (uint i = lane; i < cols; i += SOFTMAX_LANES)
        y[i] = exp(x[i] - m) * inv;
}
