// The CUDA device through the real msld: what ListDevices says of a GPU,
// threadgroup memory past 48 KiB, the cubin cache (the second msld loads the
// cubin the first one linked, skipping the JIT), and that a kernel that
// faults or runs away costs its request only: the GPU's worker is replaced
// and the next kernel runs. Each test needs a GPU ($MSLD_TEST_DEVICE, e.g.
// cuda:0) and skips, saying so, where msld has none (DeviceRunner.h).
#include "DaemonFixture.h"
#include "DeviceRunner.h"
#include "msl/client/Client.h"

#include <cmath>
#include <iostream>

namespace msl::test {
namespace {

using grpc::StatusCode;
using msl::v1::ExecuteRequest;
using msl::v1::ExecuteResponse;

const char *kIota = R"(#include <metal_stdlib>
using namespace metal;
kernel void iota(device uint* out [[buffer(0)]], constant uint& base [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  out[i] = base + i;
}
)";

// Enough math for the driver's JIT to take a while (for the load times).
const char *kMathy = R"(#include <metal_stdlib>
using namespace metal;
kernel void mathy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
  float a = x[i];
  y[i] = precise::sin(a) + precise::cos(a) * precise::exp(a) + precise::log(fabs(a) + 1.0f) +
         precise::pow(fabs(a), 1.7f) + precise::atan2(a, 2.0f) + precise::tanh(a) + precise::sinh(a) +
         precise::asin(a * 0.5f) + precise::exp2(a) + precise::fmod(a, 0.3f);
}
)";

// Every thread fills its slice of a large threadgroup buffer, then (after a
// barrier) reads its neighbour's: the memory must be shared and that large.
const char *kBigThreadgroup = R"(#include <metal_stdlib>
using namespace metal;
kernel void big_threadgroup(device uint* out [[buffer(0)]], constant uint& words [[buffer(1)]],
                            threadgroup uint* scratch [[threadgroup(0)]],
                            uint lid [[thread_position_in_threadgroup]],
                            uint n [[threads_per_threadgroup]],
                            uint group [[threadgroup_position_in_grid]]) {
  uint per = words / n;
  for (uint k = 0; k < per; ++k)
    scratch[lid * per + k] = group * 1000000u + lid * per + k;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint other = (lid + 1) % n;
  uint sum = 0;
  for (uint k = 0; k < per; ++k)
    sum += scratch[other * per + k];
  out[group * n + lid] = sum;
}
)";

// A store 8 TiB past its buffer: an illegal address on any GPU.
const char *kWildStore = R"(#include <metal_stdlib>
using namespace metal;
kernel void wild_store(device uint* out [[buffer(0)]], constant ulong& wild [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
  out[wild + i] = 1u;
}
)";

// Thread `bad` executes a PTX trap (`trap; exit;`): the kernel aborts with a
// sticky error, as a fault does.
const char *kTrapping = R"(#include <metal_stdlib>
using namespace metal;
kernel void trapping(device uint* out [[buffer(0)]], constant uint& bad [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
  if (i == bad)
    __builtin_trap();
  out[i] = i;
}
)";

// Spins until a flag nobody sets: only the time limit ends it.
const char *kSpin = R"(#include <metal_stdlib>
using namespace metal;
kernel void spin(device atomic_uint* flag [[buffer(0)]], device uint* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  uint n = 0;
  while (atomic_load_explicit(flag, memory_order_relaxed) == 0u)
    ++n;
  out[i] = n;
}
)";

ExecuteRequest request(const char *source, const std::string &kernel) {
  ExecuteRequest r;
  *r.mutable_compile() = compileRequest(source);
  r.set_kernel(kernel);
  return r;
}

void bindBuffer(ExecuteRequest &r, uint32_t index, const std::string &bytes) {
  r.add_buffers()->set_inline_(bytes);
  auto *b = r.add_buffer_bindings();
  b->set_index(index);
  b->set_buffer(uint32_t(r.buffers_size() - 1));
}

template <class T> void setBytes(ExecuteRequest &r, uint32_t index, const T &value) {
  auto *b = r.add_bytes();
  b->set_index(index);
  b->set_data(std::string(reinterpret_cast<const char *>(&value), sizeof value));
}

void grid(ExecuteRequest &r, uint32_t threads, uint32_t perThreadgroup) {
  r.mutable_dispatch()->mutable_threads()->set_x(threads);
  r.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(perThreadgroup);
}

ExecuteRequest mathyRequest() {
  ExecuteRequest r = request(kMathy, "mathy");
  bindBuffer(r, 0, bytesOf(randomFloats(4096, 5)));
  bindBuffer(r, 1, bytesOf(std::vector<float>(4096, 0.0f)));
  grid(r, 4096, 256);
  return r;
}

ExecuteRequest iotaRequest(uint32_t n, uint32_t base) {
  ExecuteRequest r = request(kIota, "iota");
  bindBuffer(r, 0, bytesOf(std::vector<uint32_t>(n, 0)));
  setBytes(r, 1, base);
  grid(r, n, 128);
  return r;
}

class ExecuteCudaTest : public DaemonTest {
protected:
  void SetUp() override {
    DaemonTest::SetUp();
    start();
    if (!runner_->skipReason().empty())
      GTEST_SKIP() << runner_->skipReason();
    if (!runner_->recording() && runner_->info().kind() != msl::v1::Device::CUDA)
      GTEST_SKIP() << runner_->device() << " is no GPU: these tests are for cuda devices";
  }

  void start() {
    client_ = std::make_unique<msl::client::Client>(startDaemon().address());
    runner_ = std::make_unique<DeviceRunner>(*client_, testDevice() == "cpu" ? "cuda:0" : testDevice());
  }

  /// Runs `r` on the GPU. Recording (no GPU here): compiles it for the GPU
  /// and marks the test skipped; false.
  bool run(const ExecuteRequest &r, msl::client::Result<ExecuteResponse> &out) {
    if (runner_->recording()) {
      runner_->record(r);
      [] { GTEST_SKIP() << "recorded the compile for a GPU run; no GPU here"; }();
      return false;
    }
    out = runner_->execute(r);
    return true;
  }

  /// The iota kernel runs and gives the right answer: the GPU serves.
  void expectTheGpuServes(uint32_t base) {
    msl::client::Result<ExecuteResponse> r = grpc::Status::OK;
    ASSERT_TRUE(run(iotaRequest(1000, base), r));
    ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
    auto got = valuesOf<uint32_t>(r->buffers(0).inline_data());
    ASSERT_EQ(got.size(), 1000u);
    for (uint32_t i = 0; i < 1000; ++i)
      ASSERT_EQ(got[i], base + i) << i;
  }

  /// A faulted request (an illegal address, a trap): ABORTED naming the
  /// kernel, counted once; then a new worker on a fresh context serves.
  void expectAFaultThenTheGpuServes(const msl::client::Result<ExecuteResponse> &out, const std::string &kernel,
                                    uint32_t next) {
    ASSERT_FALSE(out.ok());
    const std::string &message = out.status().error_message();
    EXPECT_EQ(out.status().error_code(), StatusCode::ABORTED) << message;
    EXPECT_NE(message.find("faulted"), std::string::npos) << message;
    EXPECT_NE(message.find(kernel), std::string::npos) << message;
    EXPECT_EQ(daemon_->metric("msld_kernel_faults_total"), 1);
    expectTheGpuServes(next);
  }

  std::unique_ptr<msl::client::Client> client_;
  std::unique_ptr<DeviceRunner> runner_;
};

TEST_F(ExecuteCudaTest, ListDevicesShowsTheGpuWithItsLimits) {
  if (runner_->recording())
    GTEST_SKIP() << "no GPU here";
  const msl::v1::Device &d = runner_->info();
  std::cout << d.name() << ": " << d.description() << "; " << d.architecture() << ", " << d.compute_units()
            << " SMs, " << (d.memory_bytes() >> 20) << " MiB, " << d.max_threads_per_threadgroup()
            << " threads, shared memory " << d.shared_memory_per_block_bytes() << " (opt-in "
            << d.max_threadgroup_memory_bytes() << "), warp " << d.simd_width() << ", driver " << d.driver_version()
            << "\n";
  EXPECT_EQ(d.kind(), msl::v1::Device::CUDA);
  EXPECT_EQ(d.architecture().rfind("sm_", 0), 0u) << d.architecture();
  EXPECT_GE(d.compute_units(), 1u);
  EXPECT_GT(d.memory_bytes(), 1ull << 30);
  EXPECT_EQ(d.max_threads_per_threadgroup(), 1024u);
  EXPECT_EQ(d.shared_memory_per_block_bytes(), 48u << 10);
  EXPECT_GT(d.max_threadgroup_memory_bytes(), 48u << 10);
  EXPECT_EQ(d.simd_width(), 32u);
  EXPECT_GT(d.max_buffer_bytes(), 0u);
  EXPECT_NE(d.driver_version().find("CUDA"), std::string::npos) << d.driver_version();
}

TEST_F(ExecuteCudaTest, RepeatTimesEveryDispatch) {
  ExecuteRequest r = iotaRequest(1 << 20, 7);
  r.set_repeat(5);
  msl::client::Result<ExecuteResponse> out = grpc::Status::OK;
  if (!run(r, out))
    return;
  ASSERT_TRUE(out.ok()) << msl::client::describeStatus(out.status());
  EXPECT_EQ(out->device(), runner_->device());
  ASSERT_EQ(out->dispatch_time_ns_size(), 5);
  for (int64_t ns : out->dispatch_time_ns()) {
    EXPECT_GT(ns, 0);
    EXPECT_LT(ns, 1000000000);
  }
}

TEST_F(ExecuteCudaTest, ThreadgroupMemoryAbove48KiBUpToTheOptInMaximum) {
  const uint32_t threads = 256, groups = 6;
  // 160 KiB, and the opt-in maximum rounded down to what 256 threads split.
  uint64_t optin = runner_->recording() ? (227u << 10) : runner_->info().max_threadgroup_memory_bytes();
  for (uint64_t bytes : {uint64_t(160u << 10), optin / (4 * threads) * 4 * threads}) {
    SCOPED_TRACE(std::to_string(bytes) + " bytes of threadgroup memory");
    const uint32_t words = uint32_t(bytes / 4);
    ExecuteRequest r = request(kBigThreadgroup, "big_threadgroup");
    bindBuffer(r, 0, bytesOf(std::vector<uint32_t>(threads * groups, 0)));
    setBytes(r, 1, words);
    auto *t = r.add_threadgroup_memory();
    t->set_index(0);
    t->set_length(uint32_t(bytes));
    r.mutable_dispatch()->mutable_threadgroups()->set_x(groups);
    r.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(threads);
    msl::client::Result<ExecuteResponse> out = grpc::Status::OK;
    if (!run(r, out))
      return;
    ASSERT_TRUE(out.ok()) << msl::client::describeStatus(out.status());
    auto got = valuesOf<uint32_t>(out->buffers(0).inline_data());
    ASSERT_EQ(got.size(), size_t(threads) * groups);
    const uint32_t per = words / threads;
    for (uint32_t g = 0; g < groups; ++g)
      for (uint32_t lid = 0; lid < threads; ++lid) {
        uint32_t other = (lid + 1) % threads, want = 0;
        for (uint32_t k = 0; k < per; ++k)
          want += g * 1000000u + other * per + k;
        ASSERT_EQ(got[g * threads + lid], want) << "group " << g << ", thread " << lid;
      }
  }
  // One byte past the maximum is refused before anything runs.
  ExecuteRequest tooMuch = request(kBigThreadgroup, "big_threadgroup");
  bindBuffer(tooMuch, 0, bytesOf(std::vector<uint32_t>(threads, 0)));
  setBytes(tooMuch, 1, uint32_t(1));
  auto *t = tooMuch.add_threadgroup_memory();
  t->set_index(0);
  t->set_length(uint32_t(optin + 16));
  grid(tooMuch, threads, threads);
  msl::client::Result<ExecuteResponse> out = grpc::Status::OK;
  if (!run(tooMuch, out))
    return;
  EXPECT_EQ(out.status().error_code(), StatusCode::INVALID_ARGUMENT) << out.status().error_message();
  EXPECT_NE(out.status().error_message().find("threadgroup memory"), std::string::npos)
      << out.status().error_message();
}

TEST_F(ExecuteCudaTest, ACubinLinkedOnceLoadsWithoutTheJitNextTime) {
  auto loads = [&](const char *source) {
    double n = daemon_->metric(std::string("msld_cuda_module_load_seconds_count{source=\"") + source + "\"}");
    return std::isnan(n) ? 0.0 : n;
  };
  auto seconds = [&](const char *source) {
    double s = daemon_->metric(std::string("msld_cuda_module_load_seconds_sum{source=\"") + source + "\"}");
    return std::isnan(s) ? 0.0 : s;
  };
  // Each kernel's time: the growth of the histogram's sum over its run.
  auto timeOne = [&](const ExecuteRequest &r, const char *source, double &ms) {
    const double before = seconds(source), count = loads(source);
    msl::client::Result<ExecuteResponse> out = grpc::Status::OK;
    if (!run(r, out))
      return false;
    EXPECT_TRUE(out.ok()) << msl::client::describeStatus(out.status());
    EXPECT_EQ(loads(source), count + 1) << r.kernel() << ": not loaded by " << source;
    ms = (seconds(source) - before) * 1e3;
    return out.ok();
  };
  if (runner_->recording()) {
    runner_->record(iotaRequest(4096, 1));
    runner_->record(mathyRequest());
    GTEST_SKIP() << "recorded the compiles for a GPU run; no GPU here";
  }
  double jitIota = 0, jitMathy = 0, cubinIota = 0, cubinMathy = 0, ignored = 0;
  if (!timeOne(iotaRequest(4096, 1), "ptx_jit", jitIota) || !timeOne(mathyRequest(), "ptx_jit", jitMathy))
    return;
  ASSERT_TRUE(timeOne(iotaRequest(4096, 2), "loaded", ignored)) << "the worker keeps the module it loaded";

  // A new msld on the same store: its worker has nothing loaded, and the
  // cubins come from the store.
  start();
  ASSERT_TRUE(timeOne(iotaRequest(4096, 3), "cubin", cubinIota));
  ASSERT_TRUE(timeOne(mathyRequest(), "cubin", cubinMathy));
  EXPECT_EQ(loads("ptx_jit"), 0) << "no JIT on a cubin cache hit";
  std::cout << "module load on " << runner_->device() << ": iota PTX JIT link + load " << jitIota
            << " ms, its cached cubin " << cubinIota << " ms; mathy PTX JIT link + load " << jitMathy
            << " ms, its cached cubin " << cubinMathy << " ms\n";
  RecordProperty("iota_ptx_jit_ms", std::to_string(jitIota));
  RecordProperty("iota_cubin_load_ms", std::to_string(cubinIota));
  RecordProperty("mathy_ptx_jit_ms", std::to_string(jitMathy));
  RecordProperty("mathy_cubin_load_ms", std::to_string(cubinMathy));
  expectTheGpuServes(33);
}

TEST_F(ExecuteCudaTest, AFaultingKernelIsAbortedAndTheGpuServesOn) {
  ExecuteRequest r = request(kWildStore, "wild_store");
  bindBuffer(r, 0, bytesOf(std::vector<uint32_t>(64, 0)));
  setBytes(r, 1, uint64_t(1) << 41); // 8 TiB of uints past the buffer
  grid(r, 64, 64);
  msl::client::Result<ExecuteResponse> out = grpc::Status::OK;
  if (!run(r, out))
    return;
  expectAFaultThenTheGpuServes(out, "wild_store", 11);
}

// A trap (__builtin_trap, PTX `trap;`) in one thread is a fault like an
// illegal address: the request is ABORTED naming the kernel, the worker is
// replaced, and the next kernel runs on a fresh context.
TEST_F(ExecuteCudaTest, ATrappingKernelIsAbortedAndTheGpuServesOn) {
  ExecuteRequest r = request(kTrapping, "trapping");
  bindBuffer(r, 0, bytesOf(std::vector<uint32_t>(64, 0)));
  setBytes(r, 1, uint32_t(37));
  grid(r, 64, 64);
  msl::client::Result<ExecuteResponse> out = grpc::Status::OK;
  if (!run(r, out))
    return;
  std::cout << "a trap reads: " << out.status().error_message() << "\n";
  expectAFaultThenTheGpuServes(out, "trapping", 44);
}

TEST_F(ExecuteCudaTest, ARunawayKernelIsStoppedAtItsTimeLimitAndTheGpuServesOn) {
  ExecuteRequest r = request(kSpin, "spin");
  bindBuffer(r, 0, bytesOf(std::vector<uint32_t>(1, 0)));
  bindBuffer(r, 1, bytesOf(std::vector<uint32_t>(256, 0)));
  grid(r, 256, 256);
  r.set_timeout_ms(1500);
  msl::client::Result<ExecuteResponse> out = grpc::Status::OK;
  if (!run(r, out))
    return;
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().error_code(), StatusCode::DEADLINE_EXCEEDED) << out.status().error_message();
  expectTheGpuServes(22);
}

} // namespace
} // namespace msl::test
