// Kernels with known answers through the real msld's Execute RPC: each
// kernel is written here, run on the device of $MSLD_TEST_DEVICE (the cpu
// when unset; cuda:0 on a GPU machine, DeviceRunner.h), and checked against
// a reference computed here in C++ from random inputs with fixed seeds. The
// comparison is exact where the kernel is deterministic and every value is
// exactly representable (small integers, multiples of powers of two); the
// one tolerance (the random-float matrix multiply) is documented there.
#include "DaemonFixture.h"
#include "KernelRequest.h"
#include "ExecuteResults.h"
#include "DeviceRunner.h"
#include "msl/client/Client.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <set>

namespace msl::test {
namespace {

using msl::v1::ExecuteRequest;
using msl::v1::ExecuteResponse;

using Kernel = KernelRequest;





/// Equal bit patterns, or both NaN (payloads are not compared).
bool sameHalf(uint16_t got, uint16_t want) {
  auto isNan = [](uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff); };
  return got == want || (isNan(got) && isNan(want));
}
bool sameBfloat(uint16_t got, uint16_t want) {
  return got == want || (std::isnan(bfloatToFloat(got)) && std::isnan(bfloatToFloat(want)));
}
bool sameFloat(float got, float want) {
  return bitsOf(got) == bitsOf(want) || (std::isnan(got) && std::isnan(want));
}

// ---- the kernels -----------------------------------------------------------

const char *kMatmul = R"(#include <metal_stdlib>
using namespace metal;
struct MatmulParams { uint M, N, K; };
constant constexpr uint TILE = 16;
// C (M x N) = A (M x K) * B (K x N), row-major; one 16x16 tile of C per
// threadgroup, A and B staged through threadgroup tiles, zero-padded.
kernel void matmul_tiled(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]], constant MatmulParams& p [[buffer(3)]],
                         uint2 tg [[threadgroup_position_in_grid]],
                         uint2 lid [[thread_position_in_threadgroup]]) {
  threadgroup float As[TILE][TILE];
  threadgroup float Bs[TILE][TILE];
  uint row = tg.y * TILE + lid.y, col = tg.x * TILE + lid.x;
  float acc = 0.0f;
  for (uint k0 = 0; k0 < p.K; k0 += TILE) {
    uint ka = k0 + lid.x, kb = k0 + lid.y;
    As[lid.y][lid.x] = (row < p.M && ka < p.K) ? A[row * p.K + ka] : 0.0f;
    Bs[lid.y][lid.x] = (kb < p.K && col < p.N) ? B[kb * p.N + col] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < TILE; ++k)
      acc += As[lid.y][k] * Bs[k][lid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (row < p.M && col < p.N)
    C[row * p.N + col] = acc;
}
)";

const char *kScan = R"(#include <metal_stdlib>
using namespace metal;
// Inclusive Hillis-Steele scan over one threadgroup, uint (mod 2^32) and
// float side by side. The loop bound is the threadgroup's actual size, so a
// partial threadgroup (dispatchThreads below its width) scans what it has.
kernel void scan_inclusive(device const uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                           device const float* fin [[buffer(2)]], device float* fout [[buffer(3)]],
                           uint lid [[thread_position_in_threadgroup]],
                           uint n [[threads_per_threadgroup]]) {
  threadgroup uint a[1024];
  threadgroup float f[1024];
  a[lid] = in[lid];
  f[lid] = fin[lid];
  for (uint offset = 1; offset < n; offset <<= 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint x = a[lid];
    float y = f[lid];
    if (lid >= offset) {
      x += a[lid - offset];
      y += f[lid - offset];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    a[lid] = x;
    f[lid] = y;
  }
  out[lid] = a[lid];
  fout[lid] = f[lid];
}
)";

const char *kFunctionConstants = R"(#include <metal_stdlib>
using namespace metal;
constant bool use_bias [[function_constant(0)]];
constant float scale [[function_constant(1)]];
// bias exists only in the variant that uses it.
kernel void affine(device const float* x [[buffer(0)]],
                   device const float* bias [[buffer(1), function_constant(use_bias)]],
                   device float* y [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  float v = x[i] * scale;
  if (use_bias)
    v += bias[i];
  y[i] = v;
}
)";

const char *kHalfBfloat = R"(#include <metal_stdlib>
using namespace metal;
// Conversions float -> half -> float and float -> bfloat -> float, and a few
// operations in half and bfloat, each rounding to its type.
kernel void half_bfloat(device const float* x [[buffer(0)]], device const float* y [[buffer(1)]],
                        device float* x_half [[buffer(2)]], device float* x_bfloat [[buffer(3)]],
                        device half* sum [[buffer(4)]], device half* prod [[buffer(5)]],
                        device half* quot [[buffer(6)]], device half* chain [[buffer(7)]],
                        device bfloat* x_bf [[buffer(8)]], device bfloat* bf_sum [[buffer(9)]],
                        uint i [[thread_position_in_grid]]) {
  half a = half(x[i]);
  half b = half(y[i]);
  x_half[i] = float(a);
  bfloat c = bfloat(x[i]);
  bfloat d = bfloat(y[i]);
  x_bfloat[i] = float(c);
  sum[i] = a + b;
  prod[i] = a * b;
  quot[i] = a / b;
  chain[i] = (a + b) * a;   // the sum rounds to half before the product
  x_bf[i] = c;
  bf_sum[i] = c + d;
}
)";

const char *kConditionalBarrier = R"(#include <metal_stdlib>
using namespace metal;
struct CondParams { uint flag; uint rounds; };
// With flag set: reverse each threadgroup's values (plus the local index),
// triple them and rotate them by one `rounds` times, all through
// threadgroup memory with barriers; without: only an xor, no barrier.
kernel void cond_barrier(device const uint* in [[buffer(0)]], device uint* out [[buffer(1)]],
                         constant CondParams& p [[buffer(2)]],
                         uint gid [[thread_position_in_grid]],
                         uint lid [[thread_position_in_threadgroup]],
                         uint n [[threads_per_threadgroup]]) {
  threadgroup uint tmp[256];
  uint v = in[gid];
  if (p.flag) {
    tmp[lid] = v;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    v = tmp[n - 1 - lid] + lid;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    tmp[lid] = v * 3u;
    for (uint r = 0; r < p.rounds; ++r) {
      threadgroup_barrier(mem_flags::mem_threadgroup);
      uint w = tmp[(lid + 1) % n];
      threadgroup_barrier(mem_flags::mem_threadgroup);
      tmp[lid] = w;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    v = tmp[lid];
  } else {
    v ^= 0x5a5a5a5au;
  }
  out[gid] = v;
}
)";

const char *kIds2d = R"(#include <metal_stdlib>
using namespace metal;
struct Ids {
  uint gid_x, gid_y, tptg_x, tptg_y, tgid_x, tgid_y, lid_x, lid_y;
  uint grid_x, grid_y, ntg_x, ntg_y, dtptg_x, dtptg_y;
};
kernel void ids_2d(device Ids* out [[buffer(0)]], device atomic_uint* count [[buffer(1)]],
                   uint2 gid [[thread_position_in_grid]],
                   uint2 tptg [[threads_per_threadgroup]],
                   uint2 tgid [[threadgroup_position_in_grid]],
                   ushort2 lid [[thread_position_in_threadgroup]],
                   uint2 grid [[threads_per_grid]],
                   uint2 ntg [[threadgroups_per_grid]],
                   ushort2 dtptg [[dispatch_threads_per_threadgroup]]) {
  Ids r;
  r.gid_x = gid.x; r.gid_y = gid.y;
  r.tptg_x = tptg.x; r.tptg_y = tptg.y;
  r.tgid_x = tgid.x; r.tgid_y = tgid.y;
  r.lid_x = lid.x; r.lid_y = lid.y;
  r.grid_x = grid.x; r.grid_y = grid.y;
  r.ntg_x = ntg.x; r.ntg_y = ntg.y;
  r.dtptg_x = dtptg.x; r.dtptg_y = dtptg.y;
  out[gid.y * grid.x + gid.x] = r;
  atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
}
)";
constexpr int kIdsFields = 14;

const char *kAliasOffset = R"(#include <metal_stdlib>
using namespace metal;
struct Params { float scale; float bias; uint n; };
// src, dst and same are views of one buffer (dst and same at one offset):
// the store through dst must be seen by the load through same.
kernel void alias_offset(device const float* src [[buffer(0)]], device float* dst [[buffer(1)]],
                         device float* same [[buffer(2)]], constant Params& p [[buffer(3)]],
                         device float* other [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i >= p.n)
    return;
  dst[i] = src[i] * p.scale;
  same[i] += p.bias;
  other[i] = src[i] + p.bias;
}
)";

const char *kHistogram64 = R"(#include <metal_stdlib>
using namespace metal;
// 64 bins per threadgroup in threadgroup atomics, merged into the device
// histogram with device atomics. The bins are cleared and merged in loops
// strided by the threadgroup's actual size (the last one may be smaller
// than 64).
kernel void histogram64(device const uint* data [[buffer(0)]], device atomic_uint* hist [[buffer(1)]],
                        constant uint& n [[buffer(2)]],
                        uint gid [[thread_position_in_grid]],
                        uint lid [[thread_index_in_threadgroup]],
                        uint size [[threads_per_threadgroup]]) {
  threadgroup atomic_uint bins[64];
  for (uint b = lid; b < 64; b += size)
    atomic_store_explicit(&bins[b], 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (gid < n)
    atomic_fetch_add_explicit(&bins[data[gid] & 63u], 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint b = lid; b < 64; b += size) {
    uint c = atomic_load_explicit(&bins[b], memory_order_relaxed);
    if (c != 0)
      atomic_fetch_add_explicit(&hist[b], c, memory_order_relaxed);
  }
}
)";

class ExecuteKernelsTest : public DeviceTest {
protected:
  void SetUp() override {
    DeviceTest::SetUp();
    connect();
  }

  /// Execute on the test device; a failure naming the status if it is not OK.
  ::testing::AssertionResult run(const Kernel &k, ExecuteResponse &response) {
    auto r = runner_->execute(k.req);
    if (!r.ok())
      return ::testing::AssertionFailure() << k.req.kernel() << " on " << runner_->device() << ": "
                                           << msl::client::describeStatus(r.status());
    response = std::move(r).value();
    return ::testing::AssertionSuccess();
  }

  /// The tiled matmul of an M x K and a K x N matrix, against a double
  /// reference: exact for integer-valued inputs, else within `tolerance`
  /// times sum |a_ik b_kj| (K float roundings of at most 2^-24 each, with
  /// any summation order: K * 2^-24 < 1e-5 for K <= 96, so 1e-5).
  void expectMatmul(uint32_t M, uint32_t N, uint32_t K, const std::vector<float> &A,
                    const std::vector<float> &B, double tolerance) {
    SCOPED_TRACE(std::to_string(M) + "x" + std::to_string(K) + " * " + std::to_string(K) + "x" +
                 std::to_string(N));
    Kernel k(kMatmul, "matmul_tiled");
    k.bindNew(0, A);
    k.bindNew(1, B);
    // NaN in C where nothing was written; the zero-padded edge tiles of a
    // size not a multiple of 16 must not write past M x N.
    uint32_t c = k.bindNew(2, std::vector<float>(size_t(M) * N + 64, std::nanf("")));
    struct {
      uint32_t M, N, K;
    } params{M, N, K};
    k.bytes(3, params);
    k.threadgroups((N + 15) / 16, (M + 15) / 16);
    k.perThreadgroup(16, 16);
    ExecuteResponse r;
    ASSERT_TRUE(run(k, r));
    auto C = result<float>(r, c);
    ASSERT_EQ(C.size(), size_t(M) * N + 64);
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        double want = 0, magnitude = 0;
        for (uint32_t q = 0; q < K; ++q) {
          want += double(A[i * K + q]) * B[q * N + j];
          magnitude += std::fabs(double(A[i * K + q]) * B[q * N + j]);
        }
        float got = C[size_t(i) * N + j];
        if (tolerance == 0)
          ASSERT_EQ(got, float(want)) << "C[" << i << "][" << j << "]";
        else
          ASSERT_NEAR(got, want, tolerance * magnitude + 1e-30) << "C[" << i << "][" << j << "]";
      }
    for (size_t i = size_t(M) * N; i < C.size(); ++i)
      ASSERT_TRUE(std::isnan(C[i])) << "written past C at " << i;
  }

};

TEST_F(ExecuteKernelsTest, TiledMatmulWithThreadgroupTiles) {
  // Integer-valued entries in [-8, 8]: every product and partial sum is an
  // integer below 2^24, so any order of summation gives the exact answer.
  expectMatmul(128, 64, 96, gridFloats(128 * 96, 11, -8, 8), gridFloats(96 * 64, 12, -8, 8), 0);
  // Random floats: within the documented tolerance.
  expectMatmul(128, 64, 96, randomFloats(128 * 96, 13), randomFloats(96 * 64, 14), 1e-5);
  // Sizes that are not multiples of 16: partial tiles, zero padding.
  expectMatmul(50, 45, 37, gridFloats(50 * 37, 15, -8, 8), gridFloats(37 * 45, 16, -8, 8), 0);
}

TEST_F(ExecuteKernelsTest, PrefixScanOf1000InAThreadgroupOf1024) {
  const uint32_t n = 1000;
  std::mt19937 rng(21);
  std::vector<uint32_t> in(n);
  for (auto &v : in)
    v = uint32_t(rng()); // the sums wrap around 2^32, as uint does
  // Multiples of 1/8 below 8: every partial sum is exact in float.
  auto fin = gridFloats(n, 22, 0, 63, 8.0f);
  Kernel k(kScan, "scan_inclusive");
  k.bindNew(0, in);
  uint32_t out = k.bindNew(1, std::vector<uint32_t>(n, 0xdeadbeef));
  k.bindNew(2, fin);
  uint32_t fout = k.bindNew(3, std::vector<float>(n, -1.0f));
  // One threadgroup 1024 wide of which only 1000 threads are in the grid:
  // the 24 others do not run (and would read past the 1000-element buffers).
  k.threads(n);
  k.perThreadgroup(1024);
  ExecuteResponse r;
  ASSERT_TRUE(run(k, r));
  auto got = result<uint32_t>(r, out);
  auto fgot = result<float>(r, fout);
  ASSERT_EQ(got.size(), n);
  ASSERT_EQ(fgot.size(), n);
  uint32_t sum = 0;
  float fsum = 0;
  for (uint32_t i = 0; i < n; ++i) {
    sum += in[i];
    fsum += fin[i];
    ASSERT_EQ(got[i], sum) << i;
    ASSERT_EQ(fgot[i], fsum) << i;
  }
}

TEST_F(ExecuteKernelsTest, FunctionConstantsSpecializeTheKernel) {
  const uint32_t n = 777;
  // Multiples of 1/16 in [-4, 4]: x * 2.5 and x * -0.75 and the sums with
  // the bias are exact.
  auto x = gridFloats(n, 31, -64, 64, 16.0f), bias = gridFloats(n, 32, -64, 64, 16.0f);
  auto request = [&](bool useBias) {
    Kernel k(kFunctionConstants, "affine");
    k.bindNew(0, x);
    if (useBias) {
      k.bindNew(1, bias);
      k.constant("use_bias", "true"); // by name
      k.constant("1", "2.5");         // by index
    } else {
      k.constant("0", "false");
      k.constant("scale", "-0.75");
    }
    k.bindNew(2, std::vector<float>(n, 0.0f));
    k.threads(n);
    k.perThreadgroup(64);
    return k;
  };
  auto expectOutput = [&](const ExecuteResponse &r, uint32_t yBuffer, bool useBias) {
    auto y = result<float>(r, yBuffer);
    ASSERT_EQ(y.size(), n);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], useBias ? x[i] * 2.5f + bias[i] : x[i] * -0.75f) << i << (useBias ? " with bias" : "");
  };
  ExecuteResponse withBias, without, again;
  ASSERT_TRUE(run(request(true), withBias));
  expectOutput(withBias, 2, true);
  ASSERT_TRUE(run(request(false), without));
  expectOutput(without, 1, false); // no bias buffer: y is the second
  EXPECT_FALSE(without.compile_cache_hit()) << "the constants are part of the action key";
  ASSERT_TRUE(run(request(true), again));
  expectOutput(again, 2, true);
  EXPECT_TRUE(again.compile_cache_hit());
  // Both kept now (CompiledKernels.h), each under its own constants.
  ASSERT_TRUE(run(request(false), without));
  expectOutput(without, 1, false);
  EXPECT_TRUE(without.compile_cache_hit());
  ASSERT_TRUE(run(request(true), again));
  expectOutput(again, 2, true);
}

TEST_F(ExecuteKernelsTest, HalfAndBfloatRoundToNearestEven) {
  // Specials, the edges of half's range, ties for both types, then random
  // bit patterns over all of float (no float denormals: a device may flush
  // them) and random values over half's range.
  std::vector<float> x = {0.0f, -0.0f, 1.0f, -1.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65519.996f, 65520.0f,
                          -65520.0f, 1e10f, 0x1p-14f, 0x1p-24f, 0x1p-25f, 0x1.8p-25f, 0x1.0p-26f,
                          0x1.004p0f,  // 1 + 2^-10 exact
                          0x1.002p0f,  // tie between 1 and 1 + 2^-10: to even (1)
                          0x1.006p0f,  // tie between 1 + 2^-10 and 1 + 2^-9: to even (up)
                          0x1.ffep-15f, 0x1.01p0f, 0x1.008p0f, 0x1.018p0f, 3.14159265f, FLT_MAX, FLT_MIN};
  std::mt19937 rng(41);
  while (x.size() < 2048) {
    uint32_t u = uint32_t(rng());
    if ((u & 0x7f800000) == 0 && (u & 0x7fffff)) // a float denormal
      continue;
    x.push_back(floatOfBits(u));
  }
  std::uniform_real_distribution<float> log2Magnitude(-26.0f, 16.5f);
  while (x.size() < 4096) {
    float v = std::exp2(log2Magnitude(rng));
    x.push_back(rng() & 1 ? -v : v);
  }
  const uint32_t n = uint32_t(x.size());
  std::vector<float> y(n);
  for (uint32_t i = 0; i < n; ++i) // the second operand: from the same spread, shuffled
    y[i] = x[(i * 2654435761u + 17) % n];

  Kernel k(kHalfBfloat, "half_bfloat", {"-std=metal3.1", "-fno-fast-math"});
  k.bindNew(0, x);
  k.bindNew(1, y);
  uint32_t xHalf = k.bindNew(2, std::vector<float>(n)), xBfloat = k.bindNew(3, std::vector<float>(n));
  uint32_t sum = k.bindNew(4, std::vector<uint16_t>(n)), prod = k.bindNew(5, std::vector<uint16_t>(n));
  uint32_t quot = k.bindNew(6, std::vector<uint16_t>(n)), chain = k.bindNew(7, std::vector<uint16_t>(n));
  uint32_t xBf = k.bindNew(8, std::vector<uint16_t>(n)), bfSum = k.bindNew(9, std::vector<uint16_t>(n));
  k.threads(n);
  k.perThreadgroup(256);
  ExecuteResponse r;
  ASSERT_TRUE(run(k, r));
  auto gotXHalf = result<float>(r, xHalf), gotXBfloat = result<float>(r, xBfloat);
  auto gotSum = result<uint16_t>(r, sum), gotProd = result<uint16_t>(r, prod), gotQuot = result<uint16_t>(r, quot),
       gotChain = result<uint16_t>(r, chain), gotXBf = result<uint16_t>(r, xBf), gotBfSum = result<uint16_t>(r, bfSum);
  ASSERT_EQ(gotXHalf.size(), n);
  ASSERT_EQ(gotBfSum.size(), n);
  // A half (bfloat) operation rounds the exact result once; computing it
  // in float (double for the quotient) and rounding that to half (bfloat)
  // is the same: float holds every sum and product of two halves exactly
  // or with >= 2p+2 bits, so the double rounding is innocuous.
  auto h = [](float v) { return floatToHalf(v); };
  auto hf = [](uint16_t v) { return halfToFloat(v); };
  int failures = 0;
  auto check = [&](bool ok, const char *what, uint32_t i, uint32_t got, uint32_t want) {
    if (!ok && ++failures <= 20)
      ADD_FAILURE() << what << " x=" << x[i] << " (0x" << std::hex << bitsOf(x[i]) << ") y=" << std::dec << y[i]
                    << " (0x" << std::hex << bitsOf(y[i]) << "): got 0x" << got << ", want 0x" << want;
  };
  for (uint32_t i = 0; i < n; ++i) {
    uint16_t a = h(x[i]), b = h(y[i]);
    float wantXHalf = hf(a), wantXBfloat = bfloatToFloat(floatToBfloat(x[i]));
    check(sameFloat(gotXHalf[i], wantXHalf), "float(half(x))", i, bitsOf(gotXHalf[i]), bitsOf(wantXHalf));
    check(sameFloat(gotXBfloat[i], wantXBfloat), "float(bfloat(x))", i, bitsOf(gotXBfloat[i]),
          bitsOf(wantXBfloat));
    uint16_t s = h(hf(a) + hf(b));
    check(sameHalf(gotSum[i], s), "a + b", i, gotSum[i], s);
    uint16_t p = h(hf(a) * hf(b));
    check(sameHalf(gotProd[i], p), "a * b", i, gotProd[i], p);
    uint16_t q = h(float(double(hf(a)) / double(hf(b))));
    check(sameHalf(gotQuot[i], q), "a / b", i, gotQuot[i], q);
    uint16_t c = h(hf(s) * hf(a));
    check(sameHalf(gotChain[i], c), "(a + b) * a", i, gotChain[i], c);
    uint16_t bx = floatToBfloat(x[i]), by = floatToBfloat(y[i]);
    check(sameBfloat(gotXBf[i], bx), "bfloat(x)", i, gotXBf[i], bx);
    uint16_t bs = floatToBfloat(bfloatToFloat(bx) + bfloatToFloat(by));
    check(sameBfloat(gotBfSum[i], bs), "bfloat + bfloat", i, gotBfSum[i], bs);
  }
  EXPECT_EQ(failures, 0);
}

TEST_F(ExecuteKernelsTest, BarrierUnderAUniformCondition) {
  const uint32_t n = 1000, width = 128, rounds = 5; // the last threadgroup has 104 threads
  std::mt19937 rng(51);
  std::vector<uint32_t> in(n);
  for (auto &v : in)
    v = uint32_t(rng());
  for (uint32_t flag : {1u, 0u}) {
    SCOPED_TRACE("flag=" + std::to_string(flag));
    Kernel k(kConditionalBarrier, "cond_barrier");
    k.bindNew(0, in);
    uint32_t out = k.bindNew(1, std::vector<uint32_t>(n));
    struct {
      uint32_t flag, rounds;
    } params{flag, rounds};
    k.bytes(2, params);
    k.threads(n);
    k.perThreadgroup(width);
    ExecuteResponse r;
    ASSERT_TRUE(run(k, r));
    auto got = result<uint32_t>(r, out);
    ASSERT_EQ(got.size(), n);
    std::vector<uint32_t> want(n);
    for (uint32_t base = 0; base < n; base += width) {
      uint32_t size = std::min(width, n - base);
      std::vector<uint32_t> t(size);
      for (uint32_t l = 0; l < size; ++l)
        t[l] = (in[base + size - 1 - l] + l) * 3u;
      for (uint32_t l = 0; l < size; ++l)
        want[base + l] = flag ? t[(l + rounds) % size] : in[base + l] ^ 0x5a5a5a5au;
    }
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(got[i], want[i]) << i;
  }
}

TEST_F(ExecuteKernelsTest, TwoDimensionalBuiltinsOfPartialThreadgroups) {
  struct Case {
    bool threads;       // dispatchThreads (else dispatchThreadgroups)
    uint32_t gx, gy;    // threads, or threadgroups
  };
  const uint32_t wx = 16, wy = 8;
  for (Case c : {Case{true, 50, 37}, Case{false, 3, 5}}) {
    uint32_t gridX = c.threads ? c.gx : c.gx * wx, gridY = c.threads ? c.gy : c.gy * wy;
    SCOPED_TRACE((c.threads ? "dispatchThreads " : "dispatchThreadgroups ") + std::to_string(c.gx) + "x" +
                 std::to_string(c.gy));
    Kernel k(kIds2d, "ids_2d");
    uint32_t out = k.bindNew(0, std::vector<uint32_t>(size_t(gridX) * gridY * kIdsFields, 0xffffffffu));
    uint32_t count = k.bindNew(1, std::vector<uint32_t>{0});
    if (c.threads)
      k.threads(c.gx, c.gy);
    else
      k.threadgroups(c.gx, c.gy);
    k.perThreadgroup(wx, wy);
    ExecuteResponse r;
    ASSERT_TRUE(run(k, r));
    auto ids = result<uint32_t>(r, out);
    ASSERT_EQ(ids.size(), size_t(gridX) * gridY * kIdsFields);
    EXPECT_EQ(result<uint32_t>(r, count), std::vector<uint32_t>{gridX * gridY}) << "each thread runs once";
    uint32_t groupsX = (gridX + wx - 1) / wx, groupsY = (gridY + wy - 1) / wy;
    for (uint32_t y = 0; y < gridY; ++y)
      for (uint32_t x = 0; x < gridX; ++x) {
        uint32_t bx = x / wx, by = y / wy;
        // An edge threadgroup's threads_per_threadgroup is its actual size.
        uint32_t tx = std::min(wx, gridX - bx * wx), ty = std::min(wy, gridY - by * wy);
        std::vector<uint32_t> want = {x, y, tx, ty, bx, by, x % wx, y % wy, gridX, gridY, groupsX, groupsY, wx, wy};
        std::vector<uint32_t> got(ids.begin() + (size_t(y) * gridX + x) * kIdsFields,
                                  ids.begin() + (size_t(y) * gridX + x + 1) * kIdsFields);
        ASSERT_EQ(got, want) << "thread (" << x << ", " << y << "): gid, tptg, tgid, lid, grid, ntg, dtptg";
      }
  }
}

TEST_F(ExecuteKernelsTest, OneBufferAtTwoIndicesWithAnOffsetAndSetBytes) {
  const uint32_t n = 200, total = 512, offset = 256; // floats
  std::vector<float> buf = gridFloats(total, 61, -128, 128, 16.0f);
  std::vector<float> other(256, 7.0f); // 240 floats after the binding offset
  Kernel k(kAliasOffset, "alias_offset");
  uint32_t b0 = k.buffer(buf);
  uint32_t b1 = k.buffer(other);
  k.bind(0, b0);                  // src: floats 0..
  k.bind(1, b0, offset * 4);      // dst: floats 256..
  k.bind(2, b0, offset * 4);      // same: the same memory as dst
  k.bind(4, b1, 16 * 4);          // other: from float 16 of its own buffer
  struct {
    float scale, bias;
    uint32_t n;
  } params{0.5f, 3.25f, n};
  k.bytes(3, params);
  k.threads(256);
  k.perThreadgroup(64);
  ExecuteResponse r;
  ASSERT_TRUE(run(k, r));
  EXPECT_EQ(r.buffers_size(), 2) << "each written buffer once, however many bindings it has";
  auto got = result<float>(r, b0);
  auto gotOther = result<float>(r, b1);
  ASSERT_EQ(got.size(), total);
  ASSERT_EQ(gotOther.size(), other.size());
  for (uint32_t i = 0; i < total; ++i) {
    float want = buf[i];
    if (i >= offset && i < offset + n)
      want = buf[i - offset] * 0.5f + 3.25f; // the store through dst, then += through same
    ASSERT_EQ(got[i], want) << "float " << i;
  }
  for (uint32_t i = 0; i < other.size(); ++i)
    ASSERT_EQ(gotOther[i], i >= 16 && i - 16 < n ? buf[i - 16] + 3.25f : 7.0f) << "other float " << i;
}

TEST_F(ExecuteKernelsTest, HistogramWithThreadgroupAndDeviceAtomics) {
  const uint32_t width = 256, n = 390 * width + 37; // a last threadgroup of 37 < 64 threads
  std::mt19937 rng(71);
  std::vector<uint32_t> data(n);
  for (auto &v : data) // half of them in one bin: contention
    v = rng() % 2 ? 7u + 64u * (rng() % 1000) : uint32_t(rng());
  Kernel k(kHistogram64, "histogram64");
  k.bindNew(0, data);
  uint32_t hist = k.bindNew(1, std::vector<uint32_t>(64, 0));
  k.bytes(2, n);
  k.threads(n);
  k.perThreadgroup(width);
  k.req.set_repeat(2); // state carried over: every count twice
  ExecuteResponse r;
  ASSERT_TRUE(run(k, r));
  EXPECT_EQ(r.dispatch_time_ns_size(), 2);
  std::vector<uint32_t> want(64, 0);
  for (uint32_t v : data)
    want[v & 63] += 2;
  EXPECT_EQ(result<uint32_t>(r, hist), want);
}


// ---- SIMD-group and quad-group functions ---------------------------------------
// Every SIMD-group function, at execution width 32, in 2-D threadgroups of
// 8 x 10 (SIMD-groups of the linear thread index: 32, 32 and 16 lanes) and
// partial edge threadgroups (5 x 10: 32 and 18 lanes), with all lanes
// active and with a random half of them (divergent control flow: only the
// active lanes take part). Each thread writes one row of kSimdColumns.
const char *kSimdAll = R"(#include <metal_stdlib>
using namespace metal;
kernel void simd_all_functions(device const uint* vin [[buffer(0)]], device const uint* win [[buffer(1)]],
                               device uint* out [[buffer(2)]], constant uint& divergent [[buffer(3)]],
                               uint2 gid [[thread_position_in_grid]], uint2 grid [[threads_per_grid]],
                               ushort lane [[thread_index_in_simdgroup]],
                               ushort sg [[simdgroup_index_in_threadgroup]],
                               ushort width [[threads_per_simdgroup]]) {
  uint i = gid.y * grid.x + gid.x;
  uint v = vin[i], w = win[i];
  if (divergent && (w & 2u) == 0)
    return;
  device uint* o = out + i * 40;
  o[0] = simd_sum(v);
  o[1] = simd_product(v);
  o[2] = simd_min(v);
  o[3] = simd_max(v);
  o[4] = simd_and(w);
  o[5] = simd_or(w);
  o[6] = simd_xor(w);
  o[7] = simd_prefix_inclusive_sum(v);
  o[8] = simd_prefix_exclusive_sum(v);
  o[9] = simd_prefix_inclusive_product(v);
  o[10] = simd_prefix_exclusive_product(v);
  o[11] = simd_shuffle(v, ushort((lane * 7 + 3) & 31));
  o[12] = simd_shuffle_up(v, 3);
  o[13] = simd_shuffle_down(v, 5);
  o[14] = simd_shuffle_xor(v, 6);
  o[15] = simd_shuffle_rotate_up(v, 4);
  o[16] = simd_shuffle_rotate_down(v, 9);
  o[17] = simd_broadcast(v, 9);
  o[18] = simd_broadcast_first(v);
  o[19] = uint(ulong(simd_ballot((w & 1u) != 0)));
  o[20] = simd_all(v > 10);
  o[21] = simd_any(v > 95);
  o[22] = simd_is_first();
  o[23] = uint(ulong(simd_active_threads_mask()));
  o[24] = simd_shuffle_and_fill_up(v, v + 1000, 2, 8);
  o[25] = simd_shuffle_and_fill_down(v, v + 1000, 3);
  o[26] = quad_sum(v);
  o[27] = quad_shuffle(v, 2);
  o[28] = uint(ushort(quad_ballot((w & 1u) != 0)));
  o[29] = quad_broadcast_first(v);
  o[30] = quad_prefix_exclusive_sum(v);
  o[31] = uint(simd_sum(float(v) * 0.25f) * 4.0f);
  uint4 x = simd_shuffle_xor(uint4(v, w, v + 1, w ^ 5u), 1);
  o[32] = x.x; o[33] = x.y; o[34] = x.z; o[35] = x.w;
  o[36] = uint(simd_max(int(v) - 50));
  o[37] = uint(simd_sum(ushort(v)));
  o[38] = uint(simd_shuffle_down((ulong(w) << 32) | v, 1) >> 32);
  o[39] = lane + 100u * sg + 10000u * width;
}
)";
constexpr uint32_t kSimdColumns = 40;

/// The value of column `col` for one active lane; nullopt where Metal leaves
/// it undefined (a source lane that is not active).
std::optional<uint32_t> simdReference(unsigned col, unsigned lane, const std::vector<int> &active,
                                      const uint32_t *v, const uint32_t *w, unsigned simdgroup) {
  auto isActive = [&](unsigned l) { return l < 32 && std::find(active.begin(), active.end(), int(l)) != active.end(); };
  auto from = [&](unsigned src) -> std::optional<uint32_t> {
    return isActive(src) ? std::optional<uint32_t>(v[src]) : std::nullopt;
  };
  auto fold = [&](auto op, uint32_t init, auto &&keep, const uint32_t *x) {
    uint32_t r = init;
    for (int l : active)
      if (keep(unsigned(l)))
        r = op(r, x[l]);
    return r;
  };
  auto all = [](unsigned) { return true; };
  auto upto = [&](unsigned l) { return l <= lane; };
  auto below = [&](unsigned l) { return l < lane; };
  auto quad = [&](unsigned l) { return l / 4 == lane / 4; };
  auto add = [](uint32_t a, uint32_t b) { return a + b; };
  auto mul = [](uint32_t a, uint32_t b) { return a * b; };
  uint32_t mask = 0;
  for (int l : active)
    mask |= 1u << l;
  unsigned first = unsigned(active.front());
  switch (col) {
  case 0: return fold(add, 0, all, v);
  case 1: return fold(mul, 1, all, v);
  case 2: return fold([](uint32_t a, uint32_t b) { return std::min(a, b); }, ~0u, all, v);
  case 3: return fold([](uint32_t a, uint32_t b) { return std::max(a, b); }, 0, all, v);
  case 4: return fold([](uint32_t a, uint32_t b) { return a & b; }, ~0u, all, w);
  case 5: return fold([](uint32_t a, uint32_t b) { return a | b; }, 0, all, w);
  case 6: return fold([](uint32_t a, uint32_t b) { return a ^ b; }, 0, all, w);
  case 7: return fold(add, 0, upto, v);
  case 8: return fold(add, 0, below, v);
  case 9: return fold(mul, 1, upto, v);
  case 10: return fold(mul, 1, below, v);
  case 11: return from((lane * 7 + 3) & 31);
  case 12: return lane < 3 ? v[lane] : from(lane - 3);
  case 13: return lane + 5 < 32 ? from(lane + 5) : v[lane];
  case 14: return from(lane ^ 6);
  case 15: return from((lane + 32 - 4) & 31);
  case 16: return from((lane + 9) & 31);
  case 17: return from(9);
  case 18: return v[first];
  case 19: {
    uint32_t b = 0;
    for (int l : active)
      b |= (w[l] & 1u) << l;
    return b;
  }
  case 20: return uint32_t(std::all_of(active.begin(), active.end(), [&](int l) { return v[l] > 10; }));
  case 21: return uint32_t(std::any_of(active.begin(), active.end(), [&](int l) { return v[l] > 95; }));
  case 22: return uint32_t(lane == first);
  case 23: return mask;
  case 24: { // and_fill_up by 2 in vectors of 8
    unsigned base = lane & ~7u, i = lane & 7u;
    if (i >= 2) return from(base + i - 2);
    auto f = isActive(base + i + 6) ? std::optional<uint32_t>(v[base + i + 6] + 1000) : std::nullopt;
    return f;
  }
  case 25: { // and_fill_down by 3 over the 32 lanes
    if (lane + 3 < 32) return from(lane + 3);
    unsigned src = lane + 3 - 32;
    return isActive(src) ? std::optional<uint32_t>(v[src] + 1000) : std::nullopt;
  }
  case 26: return fold(add, 0, quad, v);
  case 27: return from((lane & ~3u) + 2);
  case 28: {
    uint32_t b = 0;
    for (int l : active)
      if (quad(l))
        b |= (w[l] & 1u) << (l & 3);
    return b;
  }
  case 29: {
    for (int l : active)
      if (quad(l))
        return v[l];
    return std::nullopt;
  }
  case 30: return fold(add, 0, [&](unsigned l) { return quad(l) && l < lane; }, v);
  case 31: return fold(add, 0, all, v); // sum of v/4, times 4: exact
  case 32: return from(lane ^ 1);
  case 33: return isActive(lane ^ 1) ? std::optional<uint32_t>(w[lane ^ 1]) : std::nullopt;
  case 34: return isActive(lane ^ 1) ? std::optional<uint32_t>(v[lane ^ 1] + 1) : std::nullopt;
  case 35: return isActive(lane ^ 1) ? std::optional<uint32_t>(w[lane ^ 1] ^ 5u) : std::nullopt;
  case 36: {
    int m = INT32_MIN;
    for (int l : active)
      m = std::max(m, int(v[l]) - 50);
    return uint32_t(m);
  }
  case 37: return fold(add, 0, all, v) & 0xffffu;
  case 38: return lane + 1 < 32 ? (isActive(lane + 1) ? std::optional<uint32_t>(w[lane + 1]) : std::nullopt)
                                : std::optional<uint32_t>(w[lane]);
  case 39: return lane + 100 * simdgroup + 10000 * 32;
  }
  return std::nullopt;
}

TEST_F(ExecuteKernelsTest, EverySimdGroupFunctionAtWidth32WithDivergentLanes) {
  const uint32_t gx = 13, gy = 20, tx = 8, ty = 10, n = gx * gy; // edge threadgroups are 5 x 10
  std::mt19937 rng(61);
  std::vector<uint32_t> vin(n), win(n);
  for (uint32_t i = 0; i < n; ++i) {
    vin[i] = rng() % 101; // products wrap around 2^32 as uint does, in any order
    win[i] = uint32_t(rng());
  }
  for (uint32_t divergent : {0u, 1u}) {
    SCOPED_TRACE(divergent ? "a random half of the lanes active" : "all lanes active");
    Kernel k(kSimdAll, "simd_all_functions", {"-std=macos-metal2.4"});
    // 40 SIMD-group functions are 47 cuts: the JIT of this work-group
    // function takes seconds on a loaded machine, past the default limit.
    k.req.set_timeout_ms(120000);
    k.bindNew(0, vin);
    k.bindNew(1, win);
    uint32_t out = k.bindNew(2, std::vector<uint32_t>(n * kSimdColumns, 0xdeadbeef));
    k.bytes(3, divergent);
    k.threads(gx, gy);
    k.perThreadgroup(tx, ty);
    ExecuteResponse r;
    ASSERT_TRUE(run(k, r));
    auto got = result<uint32_t>(r, out);
    ASSERT_EQ(got.size(), n * kSimdColumns);
    size_t checked = 0, undefined = 0;
    std::set<uint32_t> wrongColumns;
    for (uint32_t by = 0; by < gy; by += ty)
      for (uint32_t bx = 0; bx < gx; bx += tx) {
        const uint32_t w = std::min(tx, gx - bx), h = std::min(ty, gy - by), size = w * h;
        for (uint32_t sg = 0; sg * 32 < size; ++sg) {
          // The SIMD-group's lanes by linear index in the threadgroup.
          uint32_t v[32] = {}, wv[32] = {}, at[32] = {};
          std::vector<int> active;
          for (uint32_t l = 0; l < 32 && sg * 32 + l < size; ++l) {
            uint32_t linear = sg * 32 + l, x = bx + linear % w, y = by + linear / w;
            at[l] = y * gx + x;
            v[l] = vin[at[l]];
            wv[l] = win[at[l]];
            if (!divergent || (wv[l] & 2u))
              active.push_back(int(l));
          }
          for (uint32_t l = 0; l < 32 && sg * 32 + l < size; ++l) {
            const uint32_t *row = &got[size_t(at[l]) * kSimdColumns];
            if (std::find(active.begin(), active.end(), int(l)) == active.end()) {
              for (uint32_t c = 0; c < kSimdColumns; ++c)
                ASSERT_EQ(row[c], 0xdeadbeefu) << "inactive thread " << at[l] << " wrote column " << c;
              continue;
            }
            for (uint32_t c = 0; c < kSimdColumns; ++c) {
              auto want = simdReference(c, l, active, v, wv, sg);
              if (!want) {
                ++undefined;
                continue;
              }
              ++checked;
              if (row[c] == *want)
                continue;
              // Every wrong column is named (a device may get a few functions wrong).
              if (wrongColumns.insert(c).second)
                ADD_FAILURE() << "column " << c << ", thread " << at[l] << " (lane " << l << " of SIMD-group "
                              << sg << " of " << size << " lanes' threadgroup " << bx / tx << "," << by / ty
                              << "): got " << row[c] << ", want " << *want;
            }
          }
        }
      }
    // (Undefined: shuffles from lanes that are inactive or past a partial group.)
    EXPECT_GT(checked, 4 * undefined);
    EXPECT_TRUE(wrongColumns.empty()) << wrongColumns.size() << " of " << kSimdColumns << " columns are wrong";
  }
}

// The integer SIMD-group reductions (on sm_80+ one redux.sync each over the
// active mask; a shuffle tree elsewhere) of int, uint, short, uchar and int2,
// beside long and float (always shuffles), in threadgroups of 64 with a
// partial last one of 8 lanes: with every lane active, with the odd lanes
// returned early, and with lanes 0..15 returned early (the reductions must
// fold the active lanes only). Signed values, so that signed and unsigned
// min/max differ, and narrow types that wrap and sign-extend.
const char *kSimdIntReductions = R"(#include <metal_stdlib>
using namespace metal;
kernel void simd_int_reductions(device const int* in [[buffer(0)]], device int* out [[buffer(1)]],
                                constant uint& mode [[buffer(2)]], uint i [[thread_position_in_grid]],
                                ushort lane [[thread_index_in_simdgroup]]) {
  if ((mode == 1u && (lane & 1) != 0) || (mode == 2u && lane < 16))
    return;
  int x = in[i];
  uint u = uint(x) * 2654435761u;
  device int* o = out + i * 20;
  o[0] = simd_sum(x);
  o[1] = simd_min(x);
  o[2] = simd_max(x);
  o[3] = simd_xor(x);
  o[4] = int(simd_sum(u));
  o[5] = int(simd_min(u));
  o[6] = int(simd_max(u));
  o[7] = int(simd_and(u));
  o[8] = int(simd_or(u));
  o[9] = int(simd_xor(u));
  o[10] = int(simd_max(short(x * 40)));
  o[11] = int(simd_min(short(x * 40)));
  o[12] = int(simd_sum(short(x * 97)));
  o[13] = int(simd_min(uchar(x)));
  o[14] = int(simd_max(uchar(x)));
  int2 m = simd_min(int2(x, -x));
  o[15] = m.x;
  o[16] = m.y;
  o[17] = int(simd_sum(long(x) << 20) >> 20);
  o[18] = int(simd_sum(float(x)));
  o[19] = int(lane);
}
)";
constexpr uint32_t kSimdIntColumns = 20;

TEST_F(ExecuteKernelsTest, IntegerSimdReductionsFoldTheActiveLanesOnly) {
  const uint32_t n = 200, tg = 64; // SIMD-groups of 32 lanes, the last of 8
  std::mt19937 rng(83);
  std::vector<int32_t> in(n);
  for (auto &x : in)
    x = int32_t(rng() % 2001) - 1000;
  for (uint32_t mode : {0u, 1u, 2u}) {
    SCOPED_TRACE(mode == 0 ? "all lanes active" : mode == 1 ? "even lanes active" : "lanes 16..31 active");
    Kernel k(kSimdIntReductions, "simd_int_reductions", {"-std=macos-metal2.1"});
    k.bindNew(0, in);
    uint32_t out = k.bindNew(1, std::vector<int32_t>(n * kSimdIntColumns, int32_t(0xdeadbeef)));
    k.bytes(2, mode);
    k.threads(n);
    k.perThreadgroup(tg);
    ExecuteResponse r;
    ASSERT_TRUE(run(k, r));
    auto got = result<int32_t>(r, out);
    ASSERT_EQ(got.size(), n * kSimdIntColumns);
    auto isActive = [&](uint32_t lane) { return mode == 0 || (mode == 1 && lane % 2 == 0) || (mode == 2 && lane >= 16); };
    std::set<uint32_t> wrongColumns;
    for (uint32_t base = 0; base < n; base += 32) {
      std::vector<int32_t> xs; // the active lanes' values
      for (uint32_t l = 0; l < 32 && base + l < n; ++l)
        if (isActive(l))
          xs.push_back(in[base + l]);
      auto fold = [&](auto f, auto op) {
        auto r = f(xs.front());
        for (size_t j = 1; j < xs.size(); ++j)
          r = decltype(r)(op(r, f(xs[j])));
        return r;
      };
      auto id = [](int32_t x) { return x; };
      auto un = [](int32_t x) { return uint32_t(x) * 2654435761u; };
      auto s40 = [](int32_t x) { return int16_t(x * 40); };
      auto s97 = [](int32_t x) { return int16_t(x * 97); };
      auto u8 = [](int32_t x) { return uint8_t(x); };
      auto neg = [](int32_t x) { return -x; };
      auto add = [](auto a, auto b) { return a + b; };
      auto mn = [](auto a, auto b) { return std::min(a, b); };
      auto mx = [](auto a, auto b) { return std::max(a, b); };
      auto band = [](auto a, auto b) { return a & b; };
      auto bor = [](auto a, auto b) { return a | b; };
      auto bxor = [](auto a, auto b) { return a ^ b; };
      std::vector<int32_t> want;
      if (!xs.empty())
        want = {fold(id, add), fold(id, mn), fold(id, mx), fold(id, bxor),
                int32_t(fold(un, add)), int32_t(fold(un, mn)), int32_t(fold(un, mx)),
                int32_t(fold(un, band)), int32_t(fold(un, bor)), int32_t(fold(un, bxor)),
                fold(s40, mx), fold(s40, mn), fold(s97, add), fold(u8, mn), fold(u8, mx),
                fold(id, mn), fold(neg, mn), fold(id, add), fold(id, add)};
      for (uint32_t l = 0; l < 32 && base + l < n; ++l) {
        const int32_t *row = &got[size_t(base + l) * kSimdIntColumns];
        if (!isActive(l)) {
          for (uint32_t c = 0; c < kSimdIntColumns; ++c)
            ASSERT_EQ(row[c], int32_t(0xdeadbeef)) << "inactive thread " << base + l << " wrote column " << c;
          continue;
        }
        ASSERT_EQ(row[19], int32_t(l)) << "thread " << base + l << " is not lane " << l;
        for (uint32_t c = 0; c + 1 < kSimdIntColumns; ++c)
          if (row[c] != want[c] && wrongColumns.insert(c).second)
            ADD_FAILURE() << "column " << c << ", thread " << base + l << " (lane " << l << " of " << xs.size()
                          << " active): got " << row[c] << ", want " << want[c];
      }
    }
    EXPECT_TRUE(wrongColumns.empty()) << wrongColumns.size() << " of " << kSimdIntColumns - 1 << " columns are wrong";
  }
}

// simdgroup_matrix 8x8: one SIMD-group per 8x8 tile of C, accumulating into
// the C it loaded (so a store that overtook another lane's load would show),
// B read transposed from its transpose, in float and in half. Integer
// entries keep every product and sum exact.
const char *kSimdgroupMatmul = R"(#include <metal_stdlib>
using namespace metal;
template <typename T>
void tile_matmul(device const T* A, device const T* Bt, device T* C, uint3 mnk, uint2 tile) {
  const uint N = mnk.y, K = mnk.z;
  simdgroup_matrix<T, 8, 8> acc;
  simdgroup_load(acc, C, N, ulong2(tile.x * 8, tile.y * 8));
  for (uint k = 0; k < K; k += 8) {
    simdgroup_matrix<T, 8, 8> a, b;
    simdgroup_load(a, A, K, ulong2(k, tile.y * 8));
    simdgroup_load(b, Bt, K, ulong2(k, tile.x * 8), true);
    simdgroup_multiply_accumulate(acc, a, b, acc);
  }
  simdgroup_store(acc, C, N, ulong2(tile.x * 8, tile.y * 8));
}
kernel void sgm_float(device const float* A [[buffer(0)]], device const float* Bt [[buffer(1)]],
                      device float* C [[buffer(2)]], constant uint3& mnk [[buffer(3)]],
                      uint2 tile [[threadgroup_position_in_grid]]) { tile_matmul(A, Bt, C, mnk, tile); }
kernel void sgm_half(device const half* A [[buffer(0)]], device const half* Bt [[buffer(1)]],
                     device half* C [[buffer(2)]], constant uint3& mnk [[buffer(3)]],
                     uint2 tile [[threadgroup_position_in_grid]]) { tile_matmul(A, Bt, C, mnk, tile); }
)";

TEST_F(ExecuteKernelsTest, SimdgroupMatrixMultiplyAccumulate) {
  const uint32_t M = 32, N = 40, K = 24;
  std::mt19937 rng(71);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<int> A(M * K), Bt(N * K), C0(M * N);
  for (auto *m : {&A, &Bt, &C0})
    for (auto &x : *m)
      x = small(rng);
  struct {
    uint32_t m, n, k, pad;
  } mnk{M, N, K, 0};
  for (bool half : {false, true}) {
    SCOPED_TRACE(half ? "half" : "float");
    Kernel k(kSimdgroupMatmul, half ? "sgm_half" : "sgm_float", {"-std=macos-metal2.3"});
    auto encode = [&](const std::vector<int> &v) {
      std::string bytes;
      for (int x : v) {
        if (half) {
          uint16_t h = floatToHalf(float(x));
          bytes.append(reinterpret_cast<const char *>(&h), 2);
        } else {
          float f = float(x);
          bytes.append(reinterpret_cast<const char *>(&f), 4);
        }
      }
      return bytes;
    };
    k.bind(0, k.buffer(encode(A)));
    k.bind(1, k.buffer(encode(Bt)));
    uint32_t c = k.buffer(encode(C0));
    k.bind(2, c);
    k.bytes(3, mnk);
    k.threadgroups(N / 8, M / 8);
    k.perThreadgroup(32);
    ExecuteResponse r;
    ASSERT_TRUE(run(k, r));
    std::string got = resultBytes(r, c);
    ASSERT_EQ(got.size(), size_t(M) * N * (half ? 2 : 4));
    for (uint32_t i = 0; i < M; ++i)
      for (uint32_t j = 0; j < N; ++j) {
        int want = C0[i * N + j];
        for (uint32_t q = 0; q < K; ++q)
          want += A[i * K + q] * Bt[j * K + q];
        float value;
        if (half) {
          uint16_t h;
          std::memcpy(&h, got.data() + 2 * (i * N + j), 2);
          value = halfToFloat(h);
        } else {
          std::memcpy(&value, got.data() + 4 * (i * N + j), 4);
        }
        ASSERT_EQ(value, float(want)) << "C[" << i << "][" << j << "]";
      }
  }
}

// The exchange and compare-and-exchange functions of
// ../shared/seeds/000_dfe49c7c39d649a1.txt as real atomic operations: on
// device memory, with a scope, through a volatile pointer, in the implicit
// seq_cst forms of ios-metal2.0, and on threadgroup memory. Threadgroups run
// in parallel on the CPU device's threads, so a non-atomic exchange or
// compare-exchange would lose or duplicate values.
const char *kExchangeAtomics = R"(#include <metal_stdlib>
using namespace metal;
kernel void exchanges(device atomic_uint* slot [[buffer(0)]], device uint* olds [[buffer(1)]],
                      device atomic_uint* table [[buffer(2)]], constant uint& table_size [[buffer(3)]],
                      volatile device atomic_uint* counter [[buffer(4)]], device uint* tg_olds [[buffer(5)]],
                      device uint* tg_counts [[buffer(6)]],
                      uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]],
                      uint group [[threadgroup_position_in_grid]]) {
  // A chain of exchanges: every value written is read back exactly once.
  olds[gid] = atomic_exchange_explicit(slot, gid + 1, memory_order_relaxed, memory_scope_device);
  // Open addressing with a weak compare-exchange; a failure loads the occupant.
  uint h = (gid * 2654435761u) % table_size;
  for (;;) {
    uint expected = 0;
    if (atomic_compare_exchange_weak_explicit(&table[h], &expected, gid + 1, memory_order_relaxed,
                                              memory_order_relaxed))
      break;
    if (expected == 0)
      continue; // a spurious failure
    h = (h + 1) % table_size;
  }
  // An increment by compare-exchange through a volatile pointer, seq_cst implied.
  uint seen = atomic_load(counter);
  while (!atomic_compare_exchange_weak(counter, &seen, seen + 1)) {
  }
  // The same on threadgroup memory.
  threadgroup atomic_uint tg_slot, tg_count;
  if (lid == 0) {
    atomic_store_explicit(&tg_slot, 0u, memory_order_relaxed);
    atomic_store_explicit(&tg_count, 0u, memory_order_relaxed);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  tg_olds[gid] = atomic_exchange(&tg_slot, lid + 1);
  uint c = atomic_load_explicit(&tg_count, memory_order_relaxed);
  while (!atomic_compare_exchange_weak_explicit(&tg_count, &c, c + 1, memory_order_relaxed, memory_order_relaxed)) {
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0)
    tg_counts[group * 2] = atomic_load_explicit(&tg_count, memory_order_relaxed),
    tg_counts[group * 2 + 1] = atomic_exchange_explicit(&tg_slot, 0u, memory_order_relaxed);
}
)";

TEST_F(ExecuteKernelsTest, ExchangeAndCompareExchangeAreAtomic) {
  const uint32_t groups = 64, width = 128, n = groups * width, tableSize = n + n / 2;
  Kernel k(kExchangeAtomics, "exchanges", {"-std=ios-metal2.0"});
  uint32_t slot = k.bindNew(0, std::vector<uint32_t>{0});
  uint32_t olds = k.bindNew(1, std::vector<uint32_t>(n, 0xdeadbeef));
  uint32_t table = k.bindNew(2, std::vector<uint32_t>(tableSize, 0));
  k.bytes(3, tableSize);
  uint32_t counter = k.bindNew(4, std::vector<uint32_t>{0});
  uint32_t tgOlds = k.bindNew(5, std::vector<uint32_t>(n, 0xdeadbeef));
  uint32_t tgCounts = k.bindNew(6, std::vector<uint32_t>(2 * groups, 0xdeadbeef));
  k.threadgroups(groups);
  k.perThreadgroup(width);
  ExecuteResponse r;
  ASSERT_TRUE(run(k, r));

  // Every value 0..n appears once among the old values and the final one.
  auto o = result<uint32_t>(r, olds);
  ASSERT_EQ(o.size(), n);
  o.push_back(result<uint32_t>(r, slot).at(0));
  std::sort(o.begin(), o.end());
  for (uint32_t i = 0; i <= n; ++i)
    ASSERT_EQ(o[i], i) << "the exchange chain lost or duplicated a value";
  // Every thread's id is in the table once.
  auto t = result<uint32_t>(r, table);
  std::vector<uint32_t> ids;
  for (uint32_t v : t)
    if (v)
      ids.push_back(v);
  std::sort(ids.begin(), ids.end());
  ASSERT_EQ(ids.size(), n);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(ids[i], i + 1);
  EXPECT_EQ(result<uint32_t>(r, counter).at(0), n);
  // Per threadgroup: the chain 0..width and the count.
  auto tg = result<uint32_t>(r, tgOlds);
  auto counts = result<uint32_t>(r, tgCounts);
  for (uint32_t g = 0; g < groups; ++g) {
    std::vector<uint32_t> chain(tg.begin() + g * width, tg.begin() + (g + 1) * width);
    chain.push_back(counts[2 * g + 1]);
    std::sort(chain.begin(), chain.end());
    for (uint32_t i = 0; i <= width; ++i)
      ASSERT_EQ(chain[i], i) << "threadgroup " << g;
    ASSERT_EQ(counts[2 * g], width) << "threadgroup " << g;
  }
}

} // namespace
} // namespace msl::test
