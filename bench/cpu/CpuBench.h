//===- CpuBench.h - Sizes and the C++ peers of msl-bench-cpu --------------===//
//
// The problem sizes and work-group shapes that kernels.metal, kernels.cl and
// NativeKernels.cpp share, and the plain C++ versions of the kernels
// (NativeKernels.cpp, built with -O3 -march=native, each run on `threads`
// std::threads).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>

namespace msl::bench::cpu {

constexpr uint32_t kSaxpyN = 1u << 24;
constexpr uint32_t kSaxpyGroup = 256;

constexpr uint32_t kGemmN = 1024;
constexpr uint32_t kGemmTile = 16;

constexpr uint32_t kReduceN = 1u << 26;
constexpr uint32_t kReduceGroup = 256;
constexpr uint32_t kReducePerThread = 16;
constexpr uint32_t kReduceChunk = kReduceGroup * kReducePerThread; // elements per partial
constexpr uint32_t kReducePartials = kReduceN / kReduceChunk;

constexpr uint32_t kHistN = 1u << 24;
constexpr uint32_t kHistGroup = 256;
constexpr uint32_t kHistPerThread = 64;
constexpr uint32_t kHistGroups = kHistN / (kHistGroup * kHistPerThread);

constexpr uint32_t kTransN = 4096;
constexpr uint32_t kTransTile = 32;
constexpr uint32_t kTransRows = 8;

constexpr uint32_t kSoftmaxRows = 4096;
constexpr uint32_t kSoftmaxCols = 1024;
constexpr uint32_t kSoftmaxLanes = 32; // one SIMD-group per row

/// y[i] = fma(a, x[i], y[i]) for i < n.
void nativeSaxpy(unsigned threads, const float *x, float *y, float a, size_t n);
/// C = A * B (N x N, row-major), cache-blocked, rows split over threads.
void nativeSgemm(unsigned threads, const float *A, const float *B, float *C, uint32_t N);
/// partial[g] = sum of in[g * kReduceChunk ...][kReduceChunk].
void nativeReduce(unsigned threads, const float *in, float *partial, size_t n);
/// bins[v] += count of v in data (a histogram per thread, merged atomically).
void nativeHistogram(unsigned threads, const uint8_t *data, uint32_t *bins, size_t n);
/// out = transpose(in), N x N, in 32x32 blocks.
void nativeTranspose(unsigned threads, const float *in, float *out, uint32_t N);
/// Each row of out = softmax of that row of in (rows x cols).
void nativeSoftmax(unsigned threads, const float *in, float *out, uint32_t rows, uint32_t cols);

} // namespace msl::bench::cpu
