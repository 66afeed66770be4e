// kernels.cu - the kernels of bench/cpu/kernels.metal written in CUDA, the
// peers of msld's PTX in msl-bench-gpu (GpuBenchMain.cpp). Same algorithms,
// same threadgroup (block) shapes, same tiles, same per-thread work; only
// the spelling differs (scalars by value instead of `constant T&` buffers,
// warp shuffles for simd_max/simd_sum). The MSL kernels are compiled with
// Metal's default fast math, so softmax uses __expf (ex2.approx), as msld's
// fast::exp does. Built on the GPU machine with
//   nvcc -O3 -arch=sm_90 -cubin -o kernels.cubin kernels.cu
// and loaded with the driver API, so both sides launch and time the same way.
// The MSL pointers carry no restrict, so neither do these; a second build
// with -DRESTRICT=__restrict__ (kernels-restrict.cubin) shows what the
// aliasing promise is worth to nvcc (ld.global.nc).
// A third build with -DSCALAR_PTR takes the scalars as msld's entries do,
// through a pointer to device memory (`constant T &` in MSL, noalias
// readonly: a const __restrict__ pointer here), and is launched with msld's
// parameters (the extra launch block is ignored): what reading a scalar
// from memory instead of the parameter bank costs nvcc.
#ifndef RESTRICT
#define RESTRICT
#endif
#ifdef SCALAR_PTR
#define SCALAR(T, name) const T *__restrict__ name##_p
#define LOAD(T, name) const T name = *name##_p;
#else
#define SCALAR(T, name) T name
#define LOAD(T, name)
#endif

#define GEMM_TILE 16
#define REDUCE_GROUP 256
#define REDUCE_PER_THREAD 16
#define HIST_GROUP 256
#define HIST_PER_THREAD 64
#define TRANS_TILE 32
#define TRANS_ROWS 8

extern "C" __global__ void saxpy(const float *RESTRICT x, float *RESTRICT y, SCALAR(float, a), SCALAR(unsigned, n)) {
  LOAD(float, a)
  LOAD(unsigned, n)
  unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid < n)
    y[gid] = fmaf(a, x[gid], y[gid]);
}

extern "C" __global__ void sgemm(const float *RESTRICT A, const float *RESTRICT B, float *RESTRICT C,
                                 SCALAR(unsigned, N)) {
  LOAD(unsigned, N)
  __shared__ float As[GEMM_TILE][GEMM_TILE];
  __shared__ float Bs[GEMM_TILE][GEMM_TILE];
  const unsigned lx = threadIdx.x, ly = threadIdx.y;
  const unsigned row = blockIdx.y * GEMM_TILE + ly, col = blockIdx.x * GEMM_TILE + lx;
  float acc = 0.0f;
  for (unsigned t = 0; t < N; t += GEMM_TILE) {
    As[ly][lx] = A[row * N + t + lx];
    Bs[ly][lx] = B[(t + ly) * N + col];
    __syncthreads();
    for (unsigned k = 0; k < GEMM_TILE; ++k)
      acc += As[ly][k] * Bs[k][lx];
    __syncthreads();
  }
  C[row * N + col] = acc;
}

extern "C" __global__ void reduce(const float *RESTRICT in, float *RESTRICT partial) {
  __shared__ float tile[REDUCE_GROUP];
  const unsigned lid = threadIdx.x, group = blockIdx.x;
  const unsigned base = group * REDUCE_GROUP * REDUCE_PER_THREAD + lid;
  float s = 0.0f;
  for (unsigned i = 0; i < REDUCE_PER_THREAD; ++i)
    s += in[base + i * REDUCE_GROUP];
  tile[lid] = s;
  __syncthreads();
  for (unsigned stride = REDUCE_GROUP / 2; stride > 0; stride /= 2) {
    if (lid < stride)
      tile[lid] += tile[lid + stride];
    __syncthreads();
  }
  if (lid == 0)
    partial[group] = tile[0];
}

extern "C" __global__ void histogram(const unsigned char *RESTRICT data, unsigned *RESTRICT bins) {
  __shared__ unsigned local[256];
  const unsigned lid = threadIdx.x, group = blockIdx.x;
  local[lid] = 0;
  __syncthreads();
  const unsigned base = group * HIST_GROUP * HIST_PER_THREAD + lid;
  for (unsigned i = 0; i < HIST_PER_THREAD; ++i)
    atomicAdd(&local[data[base + i * HIST_GROUP]], 1u);
  __syncthreads();
  const unsigned c = local[lid];
  if (c != 0)
    atomicAdd(&bins[lid], c);
}

extern "C" __global__ void transpose(const float *RESTRICT in, float *RESTRICT out, SCALAR(unsigned, N)) {
  LOAD(unsigned, N)
  __shared__ float tile[TRANS_TILE][TRANS_TILE + 1];
  const unsigned x = blockIdx.x * TRANS_TILE + threadIdx.x;
  const unsigned y0 = blockIdx.y * TRANS_TILE;
  for (unsigned j = threadIdx.y; j < TRANS_TILE; j += TRANS_ROWS)
    tile[j][threadIdx.x] = in[(y0 + j) * N + x];
  __syncthreads();
  const unsigned ox = blockIdx.y * TRANS_TILE + threadIdx.x;
  const unsigned oy0 = blockIdx.x * TRANS_TILE;
  for (unsigned j = threadIdx.y; j < TRANS_TILE; j += TRANS_ROWS)
    out[(oy0 + j) * N + ox] = tile[threadIdx.x][j];
}

extern "C" __global__ void softmax(const float *RESTRICT in, float *RESTRICT out, SCALAR(unsigned, cols)) {
  LOAD(unsigned, cols)
  const unsigned row = blockIdx.x, lane = threadIdx.x;
  const float *x = in + row * cols;
  float *y = out + row * cols;
  float m = -INFINITY;
  for (unsigned i = lane; i < cols; i += 32)
    m = fmaxf(m, x[i]);
  for (int o = 16; o > 0; o /= 2)
    m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.0f;
  for (unsigned i = lane; i < cols; i += 32)
    s += __expf(x[i] - m);
  for (int o = 16; o > 0; o /= 2)
    s += __shfl_xor_sync(0xffffffffu, s, o);
  const float inv = 1.0f / s;
  for (unsigned i = lane; i < cols; i += 32)
    y[i] = __expf(x[i] - m) * inv;
}

// The Execute-overhead peer of bench/gpu/copy.metal.
extern "C" __global__ void copy_buffer(const float *RESTRICT in, float *RESTRICT out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i];
}
