// NativeKernels.cpp - the algorithms of kernels.metal as plain C++ loops,
// the "what a C++ programmer gets" column of msl-bench-cpu. This file alone
// is compiled with -O3 -march=native (bench/cpu/CMakeLists.txt); the loops
// are written so that GCC vectorizes them without -ffast-math. Work is split
// over `threads` std::threads, one contiguous range each.
#include "CpuBench.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <vector>

namespace msl::bench::cpu {
namespace {

// Runs fn(begin, end) over [0, n) split into `threads` contiguous ranges.
template <typename Fn> void parallelRanges(unsigned threads, size_t n, Fn fn) {
  threads = std::max(1u, threads);
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  const size_t step = (n + threads - 1) / threads;
  for (unsigned t = 1; t < threads; ++t) {
    size_t b = std::min(n, t * step), e = std::min(n, b + step);
    pool.emplace_back([=] { fn(b, e); });
  }
  fn(0, std::min(n, step));
  for (auto &th : pool)
    th.join();
}

} // namespace

void nativeSaxpy(unsigned threads, const float *x, float *y, float a, size_t n) {
  parallelRanges(threads, n, [=](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i)
      y[i] = std::fma(a, x[i], y[i]);
  });
}

void nativeSgemm(unsigned threads, const float *A, const float *B, float *C, uint32_t N) {
  // i-k-j order (the j loop vectorizes), blocked so that a 128x256 block of
  // B (128 KiB) stays in L2 while a thread's rows stream past it.
  constexpr uint32_t KB = 128, JB = 256;
  parallelRanges(threads, N, [=](size_t r0, size_t r1) {
    for (size_t i = r0; i < r1; ++i)
      std::memset(C + i * N, 0, N * sizeof(float));
    for (uint32_t jj = 0; jj < N; jj += JB) {
      const uint32_t je = std::min(N, jj + JB);
      for (uint32_t kk = 0; kk < N; kk += KB) {
        const uint32_t ke = std::min(N, kk + KB);
        for (size_t i = r0; i < r1; ++i) {
          float *__restrict c = C + i * N;
          const float *a = A + i * N;
          for (uint32_t k = kk; k < ke; ++k) {
            const float aik = a[k];
            const float *__restrict b = B + size_t(k) * N;
            for (uint32_t j = jj; j < je; ++j)
              c[j] += aik * b[j];
          }
        }
      }
    }
  });
}

void nativeReduce(unsigned threads, const float *in, float *partial, size_t n) {
  const size_t chunks = n / kReduceChunk;
  parallelRanges(threads, chunks, [=](size_t g0, size_t g1) {
    for (size_t g = g0; g < g1; ++g) {
      // 16 lanes of partial sums (vectorizes without reassociating), then
      // a tree over the lanes.
      constexpr int L = 16;
      float acc[L] = {};
      const float *p = in + g * kReduceChunk;
      for (uint32_t i = 0; i < kReduceChunk; i += L)
        for (int l = 0; l < L; ++l)
          acc[l] += p[i + l];
      for (int w = L / 2; w > 0; w /= 2)
        for (int l = 0; l < w; ++l)
          acc[l] += acc[l + w];
      partial[g] = acc[0];
    }
  });
}

void nativeHistogram(unsigned threads, const uint8_t *data, uint32_t *bins, size_t n) {
  parallelRanges(threads, n, [=](size_t b, size_t e) {
    // Four private histograms break the store-to-load dependency on runs of
    // equal bytes; merged into `bins` with one atomic add per bin.
    uint32_t h[4][256] = {};
    size_t i = b;
    for (; i + 4 <= e; i += 4) {
      ++h[0][data[i]];
      ++h[1][data[i + 1]];
      ++h[2][data[i + 2]];
      ++h[3][data[i + 3]];
    }
    for (; i < e; ++i)
      ++h[0][data[i]];
    for (int v = 0; v < 256; ++v) {
      uint32_t c = h[0][v] + h[1][v] + h[2][v] + h[3][v];
      if (c)
        std::atomic_ref<uint32_t>(bins[v]).fetch_add(c, std::memory_order_relaxed);
    }
  });
}

void nativeTranspose(unsigned threads, const float *in, float *out, uint32_t N) {
  constexpr uint32_t T = kTransTile;
  const uint32_t blockRows = N / T;
  parallelRanges(threads, blockRows, [=](size_t by0, size_t by1) {
    for (size_t by = by0; by < by1; ++by)
      for (uint32_t bx = 0; bx < N; bx += T)
        for (uint32_t y = uint32_t(by * T); y < by * T + T; ++y)
          for (uint32_t x = bx; x < bx + T; ++x)
            out[size_t(x) * N + y] = in[size_t(y) * N + x];
  });
}

void nativeSoftmax(unsigned threads, const float *in, float *out, uint32_t rows, uint32_t cols) {
  parallelRanges(threads, rows, [=](size_t r0, size_t r1) {
    for (size_t r = r0; r < r1; ++r) {
      const float *x = in + r * cols;
      float *y = out + r * cols;
      float m = -INFINITY;
      for (uint32_t i = 0; i < cols; ++i)
        m = std::max(m, x[i]);
      float s = 0;
      for (uint32_t i = 0; i < cols; ++i)
        s += y[i] = std::exp(x[i] - m);
      const float inv = 1.0f / s;
      for (uint32_t i = 0; i < cols; ++i)
        y[i] *= inv;
    }
  });
}

} // namespace msl::bench::cpu
