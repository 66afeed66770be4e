// The CPU device (executor/CpuDevice.h), in-process: MSL compiled with
// msl_compiler for x86_64, run through CpuDevice::execute, checked against
// references computed here from fixed-seed random inputs. And the fault path
// through the real msld-exec-worker binary.
#include "CpuDevice.h"
#include "WorkerProtocol.h"
#include "msl/compiler/Compiler.h"
#include "msl/internal/worker.pb.h"

#include <gtest/gtest.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace mc = msl::compiler;
using msl::executor::CpuDevice;
using msl::internal::ExecSlot;
using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string bitcodeOf(const std::string &source, std::vector<std::string> options = {}) {
  mc::CompileJob job;
  job.mainSource = source;
  job.options = std::move(options);
  job.outputs = {mc::OutputKind::LLVMBitcode};
  auto r = mc::compile(job);
  std::string diags;
  for (const auto &d : r.diagnostics)
    diags += std::to_string(d.line) + ": " + d.message + "\n";
  EXPECT_TRUE(r.success) << diags;
  return r.artifacts[mc::OutputKind::LLVMBitcode];
}

// `bitcode` with an inline-assembly call at the start of function `fn`.
std::string withInlineAsm(const std::string &bitcode, const std::string &fn) {
  llvm::LLVMContext context;
  auto m = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "k.bc"), context);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return {};
  }
  llvm::Function *f = (*m)->getFunction(fn);
  EXPECT_NE(f, nullptr);
  if (!f)
    return {};
  llvm::IRBuilder<> b(&*f->getEntryBlock().getFirstInsertionPt());
  auto *type = llvm::FunctionType::get(b.getVoidTy(), false);
  b.CreateCall(type, llvm::InlineAsm::get(type, "syscall", "", /*hasSideEffects=*/true));
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::WriteBitcodeToFile(**m, os);
  return out;
}

template <typename T> std::string bytesOf(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}
template <typename T> std::vector<T> valuesOf(const std::string &s) {
  std::vector<T> v(s.size() / sizeof(T));
  std::memcpy(v.data(), s.data(), v.size() * sizeof(T));
  return v;
}

struct Request {
  ExecWorkerRequest r;
  Request(const std::string &module, const std::string &symbol) {
    r.set_module(module);
    r.set_module_digest("test:" + std::to_string(std::hash<std::string>()(module)));
    r.set_symbol(symbol);
  }
  // A buffer bound to the next slot.
  Request &buffer(const std::string &bytes, bool returned = false, uint64_t length = 0) {
    auto *b = r.add_buffers();
    b->set_data(bytes);
    b->set_length(std::max<uint64_t>(length, bytes.size()));
    b->set_returned(returned);
    auto *s = r.add_slots();
    s->set_kind(ExecSlot::BUFFER);
    s->set_buffer(uint32_t(r.buffers_size() - 1));
    return *this;
  }
  Request &threadgroupMemory(uint32_t length) {
    auto *s = r.add_slots();
    s->set_kind(ExecSlot::THREADGROUP);
    s->set_length(length);
    return *this;
  }
  Request &groups(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    r.clear_threadgroups();
    for (uint32_t v : {x, y, z})
      r.add_threadgroups(v);
    return *this;
  }
  Request &grid(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    r.clear_grid_threads();
    for (uint32_t v : {x, y, z})
      r.add_grid_threads(v);
    return *this;
  }
  Request &threads(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    r.clear_threads_per_threadgroup();
    for (uint32_t v : {x, y, z})
      r.add_threads_per_threadgroup(v);
    return *this;
  }
};

CpuDevice &device() {
  static CpuDevice d;
  return d;
}

ExecWorkerResponse run(const Request &req) {
  ExecWorkerResponse resp = device().execute(req.r);
  EXPECT_EQ(resp.error(), "");
  return resp;
}

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = dist(rng);
  return v;
}

const std::string kSaxpy = readFile(MSLD_SOURCE_DIR "/examples/saxpy.metal");

void runSaxpy(uint32_t n, unsigned repeat, bool report) {
  std::string bc = bitcodeOf(kSaxpy);
  float a = 1.75f;
  auto x = randomFloats(n, 1), y = randomFloats(n, 2);
  Request req(bc, "saxpy");
  req.buffer(bytesOf(std::vector<float>{a}))
      .buffer(bytesOf(x))
      .buffer(bytesOf(y), true)
      .buffer(bytesOf(std::vector<uint32_t>{n}))
      .groups(n / 256)
      .threads(256);
  req.r.set_repeat(repeat);
  auto resp = run(req);
  ASSERT_EQ(resp.buffers_size(), 1);
  ASSERT_EQ(resp.dispatch_time_ns_size(), int(repeat));
  auto out = valuesOf<float>(resp.buffers(0));
  ASSERT_EQ(out.size(), n);
  for (uint32_t i = 0; i < n; ++i) {
    float expect = y[i];
    for (unsigned r = 0; r < repeat; ++r)
      expect = std::fma(a, x[i], expect);
    ASSERT_EQ(out[i], expect) << "at " << i;
  }
  if (report) {
    int64_t best = INT64_MAX;
    for (int64_t t : resp.dispatch_time_ns())
      best = std::min(best, t);
    double gbs = 3.0 * 4 * n / double(best);
    std::printf("saxpy n=%u on %u threads: best of %u dispatches %.1f us (%.1f GB/s)\n", n,
                device().threads(), repeat, best / 1000.0, gbs);
  }
}

TEST(CpuDevice, Saxpy) { runSaxpy(1u << 20, 1, false); }

TEST(CpuDevice, Saxpy2p24Timing) { runSaxpy(1u << 24, 5, true); }

// beforeFirstDispatch (the worker's start note) is called once, after the
// JIT and before the dispatches, however many repeats; never for a request
// that fails before its first dispatch.
TEST(CpuDevice, BeforeFirstDispatchComesOnceAfterTheJit) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void count(device atomic_uint* n [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  atomic_fetch_add_explicit(n, 1u, memory_order_relaxed);
}
)");
  Request req(bc, "count");
  req.buffer(std::string(4, '\0'), true).groups(2).threads(32);
  req.r.set_repeat(3);
  int calls = 0;
  uint64_t jitsBefore = device().jitCompiles();
  ExecWorkerResponse resp = device().execute(req.r, [&] {
    ++calls;
    EXPECT_EQ(device().jitCompiles(), jitsBefore + 1); // compiled by now
  });
  EXPECT_EQ(resp.error(), "");
  EXPECT_EQ(calls, 1);
  ASSERT_EQ(resp.buffers_size(), 1);
  EXPECT_EQ(valuesOf<uint32_t>(resp.buffers(0)), std::vector<uint32_t>{3 * 64});

  Request bad(bc, "no_such_kernel");
  bad.buffer(std::string(4, '\0')).groups(1).threads(1);
  calls = 0;
  resp = device().execute(bad.r, [&] { ++calls; });
  EXPECT_NE(resp.error(), "");
  EXPECT_EQ(calls, 0);
}

// Buffers are reused across requests (kept mapped, cleared): a request never
// sees what an earlier one left, even in the bytes around its own (a
// negative index or the rest of the page before the buffer).
TEST(CpuDevice, ReusedBuffersShowNothingOfEarlierRequests) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void fill(device uint* b [[buffer(0)]], uint gid [[thread_position_in_grid]]) { b[gid] = 0xabababab; }
kernel void peek(device const uint* b [[buffer(0)]], device uint* out [[buffer(1)]],
                 uint gid [[thread_position_in_grid]]) {
  out[gid] = b[gid] | b[int(gid) - 256];
}
)");
  const uint32_t n = 1 << 16; // 256 KiB: the buffer ends at a page end
  Request first(bc, "fill");
  first.buffer(std::string(), false, 4ull * n).grid(n).threads(256);
  ASSERT_TRUE(run(first).error().empty());
  // Same size: the region comes back from the spares; offset 256 elements in
  // so that b[gid - 256] stays inside this buffer's mapped pages.
  Request second(bc, "peek");
  second.buffer(std::string(), false, 4ull * n).buffer(std::string(), true, 4ull * n).grid(n - 256).threads(256);
  second.r.mutable_slots(0)->set_offset(1024);
  auto resp = run(second);
  ASSERT_TRUE(resp.error().empty()) << resp.error();
  auto out = valuesOf<uint32_t>(resp.buffers(0));
  for (uint32_t i = 0; i < n - 256; ++i)
    ASSERT_EQ(out[i], 0u) << "stale bytes at " << i;
}

TEST(CpuDevice, DispatchThreadsEdgeThreadgroups) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* o [[buffer(0)]], device uint* t [[buffer(1)]],
              device uint* g [[buffer(2)]],
              uint gid [[thread_position_in_grid]], uint tpt [[threads_per_threadgroup]],
              uint grid [[threads_per_grid]], uint dtpt [[dispatch_threads_per_threadgroup]],
              uint group [[threadgroup_position_in_grid]], uint groups [[threadgroups_per_grid]]) {
  o[gid] = gid * 7u + 1u;
  t[gid] = tpt | (dtpt << 16);
  g[gid] = grid | (group << 16) | (groups << 24);
}
)");
  const std::vector<uint32_t> fill(1024, 0xdeadbeefu);
  Request req(bc, "k");
  req.buffer(bytesOf(fill), true).buffer(bytesOf(fill), true).buffer(bytesOf(fill), true).grid(1000).threads(256);
  auto resp = run(req);
  ASSERT_EQ(resp.buffers_size(), 3);
  auto o = valuesOf<uint32_t>(resp.buffers(0)), t = valuesOf<uint32_t>(resp.buffers(1)),
       g = valuesOf<uint32_t>(resp.buffers(2));
  for (uint32_t i = 0; i < 1024; ++i) {
    if (i >= 1000) {
      ASSERT_EQ(o[i], 0xdeadbeefu) << i;
      ASSERT_EQ(t[i], 0xdeadbeefu) << i;
      continue;
    }
    ASSERT_EQ(o[i], i * 7 + 1) << i;
    uint32_t tpt = i < 768 ? 256 : 1000 - 768;
    ASSERT_EQ(t[i], tpt | (256u << 16)) << i;
    ASSERT_EQ(g[i], 1000u | ((i / 256) << 16) | (4u << 24)) << i;
  }
}

// Threadgroups are handed out in chunks that cross rows and planes of the
// grid (105 threadgroups, chunks of 3 here): each gets its own position.
TEST(CpuDevice, EveryThreadgroupOfAThreeDimensionalGridGetsItsPosition) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* o [[buffer(0)]], uint3 p [[thread_position_in_grid]], uint3 n [[threads_per_grid]],
              uint3 tg [[threadgroup_position_in_grid]]) {
  o[(p.z * n.y + p.y) * n.x + p.x] = tg.x | (tg.y << 8) | (tg.z << 16);
}
)");
  const uint32_t w = 10, h = 6, d = 14; // threadgroups 5 x 3 x 7
  Request req(bc, "k");
  req.buffer(bytesOf(std::vector<uint32_t>(w * h * d, 0xdeadbeefu)), true).grid(w, h, d).threads(2, 2, 2);
  auto o = valuesOf<uint32_t>(run(req).buffers(0));
  for (uint32_t z = 0; z < d; ++z)
    for (uint32_t y = 0; y < h; ++y)
      for (uint32_t x = 0; x < w; ++x)
        ASSERT_EQ(o[(z * h + y) * w + x], (x / 2) | ((y / 2) << 8) | ((z / 2) << 16)) << x << "," << y << "," << z;
}

TEST(CpuDevice, TwoDimensionalDispatchThreads) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k(device uint* o [[buffer(0)]], uint2 p [[thread_position_in_grid]], uint2 n [[threads_per_grid]]) {
  o[p.y * n.x + p.x] = p.x + 1000u * p.y;
}
)");
  const uint32_t w = 37, h = 21;
  Request req(bc, "k");
  req.buffer(bytesOf(std::vector<uint32_t>(w * h, 0)), true).grid(w, h).threads(8, 4);
  auto o = valuesOf<uint32_t>(run(req).buffers(0));
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x)
      ASSERT_EQ(o[y * w + x], x + 1000 * y) << x << "," << y;
}

void checkReduce(const std::string &symbol, bool dynamic) {
  std::string bc = bitcodeOf(readFile(MSLD_SOURCE_DIR "/examples/reduce.metal"));
  const uint32_t n = (1u << 16) + 100, tg = 256, groups = (n + tg - 1) / tg;
  auto in = randomFloats(n, 3);
  Request req(bc, symbol);
  req.buffer(bytesOf(in))
      .buffer(bytesOf(std::vector<float>(groups, -1.0f)), true)
      .buffer(bytesOf(std::vector<uint32_t>{n}));
  if (dynamic)
    req.threadgroupMemory(tg * 4);
  req.groups(groups).threads(tg);
  auto resp = run(req);
  ASSERT_EQ(resp.buffers_size(), 1);
  auto partial = valuesOf<float>(resp.buffers(0));
  ASSERT_EQ(partial.size(), groups);
  for (uint32_t g = 0; g < groups; ++g) {
    double ref = 0, mag = 0;
    for (uint32_t i = g * tg; i < std::min(n, (g + 1) * tg); ++i) {
      ref += in[i];
      mag += std::fabs(in[i]);
    }
    ASSERT_NEAR(partial[g], ref, 1e-5 * mag + 1e-6) << "group " << g;
  }
}

TEST(CpuDevice, ReduceWithBarriers) { checkReduce("reduce_sum", false); }

TEST(CpuDevice, ReduceWithThreadgroupArgument) { checkReduce("reduce_sum_dynamic", true); }

TEST(CpuDevice, HistogramWithDeviceAtomics) {
  std::string bc = bitcodeOf(readFile(MSLD_SOURCE_DIR "/examples/histogram.metal"));
  const uint32_t n = 1u << 20;
  std::mt19937 rng(4);
  std::vector<uint8_t> data(n);
  for (auto &d : data)
    d = uint8_t(rng() % 200); // skewed: 56 bins stay 0
  Request req(bc, "histogram");
  req.buffer(bytesOf(data))
      .buffer(std::string(), true, 256 * 4)
      .buffer(bytesOf(std::vector<uint32_t>{n}))
      .grid(n)
      .threads(256);
  auto bins = valuesOf<uint32_t>(run(req).buffers(0));
  std::vector<uint32_t> ref(256, 0);
  for (auto d : data)
    ++ref[d];
  EXPECT_EQ(bins, ref);
}

TEST(CpuDevice, RepeatRunsOnTheSameBuffersAndTheKernelIsCached) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void inc(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] += 1; }
)");
  std::vector<int32_t> v(4096);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = int32_t(i) - 100;
  Request req(bc, "inc");
  req.buffer(bytesOf(v), true).groups(64).threads(64);
  req.r.set_repeat(3);
  uint64_t before = device().jitCompiles();
  auto t0 = std::chrono::steady_clock::now();
  auto resp = run(req);
  auto t1 = std::chrono::steady_clock::now();
  EXPECT_EQ(device().jitCompiles(), before + 1);
  ASSERT_EQ(resp.dispatch_time_ns_size(), 3);
  for (int64_t t : resp.dispatch_time_ns())
    EXPECT_GT(t, 0);
  auto out = valuesOf<int32_t>(resp.buffers(0));
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(out[i], v[i] + 3) << i;
  // Same module, symbol and threadgroup size: no JIT.
  req.r.set_repeat(1);
  auto t2 = std::chrono::steady_clock::now();
  out = valuesOf<int32_t>(run(req).buffers(0));
  auto t3 = std::chrono::steady_clock::now();
  std::printf("execute with JIT: %.2f ms, cached: %.3f ms\n",
              std::chrono::duration<double, std::milli>(t1 - t0).count(),
              std::chrono::duration<double, std::milli>(t3 - t2).count());
  EXPECT_EQ(device().jitCompiles(), before + 1);
  EXPECT_EQ(out[5], v[5] + 1);
  // The same number of threads in another shape: the same work-group function.
  req.threads(8, 8).groups(64);
  run(req);
  EXPECT_EQ(device().jitCompiles(), before + 1);
  // Another threadgroup size: a new work-group function.
  req.threads(32).groups(128);
  run(req);
  EXPECT_EQ(device().jitCompiles(), before + 2);
}

// The pool's threads watch for the next dispatch for a while, then sleep:
// dispatches that follow at once, and requests that come just before, just
// after or long after the threads fall asleep, each run every threadgroup
// exactly once (a lost wake-up would hang here; a missed thread, a count off).
TEST(CpuDevice, DispatchesInQuickSuccessionAndAfterPausesRunEveryThreadgroupOnce) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void inc(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] += 1; }
)");
  std::vector<int32_t> v(64 * 5);
  Request req(bc, "inc");
  req.buffer(bytesOf(v), true).groups(5).threads(64);
  req.r.set_repeat(2000);
  auto out = valuesOf<int32_t>(run(req).buffers(0));
  for (size_t i = 0; i < v.size(); ++i)
    ASSERT_EQ(out[i], 2000) << i;
  std::mt19937 rng(7);
  req.r.set_repeat(3);
  for (int k = 0; k < 60; ++k) {
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 600));
    out = valuesOf<int32_t>(run(req).buffers(0));
    for (size_t i = 0; i < v.size(); ++i)
      ASSERT_EQ(out[i], 3) << "request " << k << ", element " << i;
  }
}

TEST(CpuDevice, BufferOffsetsAndSharedBindings) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void copy(device const float* in [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) { out[i] = in[i] * 2.0f; }
)");
  auto data = randomFloats(512, 5);
  Request req(bc, "copy");
  req.buffer(bytesOf(data), true);
  // Slot 1: the same buffer, 256 floats in.
  auto *s = req.r.add_slots();
  s->set_kind(ExecSlot::BUFFER);
  s->set_buffer(0);
  s->set_offset(256 * 4);
  req.groups(4).threads(64);
  auto out = valuesOf<float>(run(req).buffers(0));
  for (int i = 0; i < 256; ++i) {
    ASSERT_EQ(out[i], data[i]);
    ASSERT_EQ(out[256 + i], data[i] * 2.0f);
  }
}

TEST(CpuDevice, MathFromTheProcess) {
  std::string bc = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void m(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  float x = o[i];
  o[i] = precise::sin(x) + precise::exp(x) + atan2(x, 0.5f) + precise::pow(fabs(x), 1.5f);
}
)",
                             {"-fno-fast-math"});
  auto in = randomFloats(1024, 6, -3, 3);
  Request req(bc, "m");
  req.buffer(bytesOf(in), true).groups(16).threads(64);
  auto out = valuesOf<float>(run(req).buffers(0));
  for (size_t i = 0; i < in.size(); ++i) {
    double x = in[i];
    double ref = std::sin(x) + std::exp(x) + std::atan2(x, 0.5) + std::pow(std::fabs(x), 1.5);
    ASSERT_NEAR(out[i], ref, 1e-5 * (std::fabs(ref) + 4)) << "x=" << x;
  }
}

TEST(CpuDevice, BadRequestsFailAndTheDeviceLivesOn) {
  auto expectError = [](const ExecWorkerRequest &r, const std::string &part) {
    auto resp = device().execute(r);
    EXPECT_NE(resp.error().find(part), std::string::npos) << resp.error();
    EXPECT_EQ(resp.buffers_size(), 0);
  };
  Request garbage("not bitcode", "k");
  garbage.groups(1).threads(1);
  expectError(garbage.r, "bitcode");

  std::string bc = bitcodeOf(kSaxpy);
  Request missing(bc, "nosuchkernel");
  missing.groups(1).threads(1);
  expectError(missing.r, "nosuchkernel");

  Request handle(bc, "saxpy");
  handle.groups(1).threads(1);
  auto *slot = handle.r.add_slots();
  slot->set_kind(ExecSlot::HANDLE);
  slot->add_handles()->set_texture(0);
  expectError(handle.r, "names texture 0 of 0");

  Request tooMany(bc, "saxpy");
  tooMany.groups(1).threads(2048);
  expectError(tooMany.r, "threads per threadgroup");

  Request fewSlots(bc, "saxpy");
  fewSlots.buffer(bytesOf(std::vector<float>{1})).groups(1).threads(1);
  expectError(fewSlots.r, "reads 4 argument slots");

  std::string tex = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void t(texture2d<float, access::read> src [[texture(0)]], device float4* o [[buffer(0)]],
              uint2 p [[thread_position_in_grid]]) { o[p.x] = src.read(p, 1); }
)");
  // One mip level: a read of level 1 fails the request, naming it.
  Request texture(tex, "t");
  texture.groups(1).threads(1);
  auto *t = texture.r.add_textures();
  t->set_type(2); // TEXTURE_2D
  t->set_format(7); // R32_FLOAT
  t->set_width(4);
  t->set_height(4);
  t->set_index(0);
  auto *texSlot = texture.r.add_slots();
  texSlot->set_kind(ExecSlot::HANDLE);
  texSlot->add_handles()->set_texture(0);
  texture.buffer(std::string(64, '\0'), true);
  expectError(texture.r, "mip level 1");

  // Inline assembly would reach the OS past the symbol allow-list. The
  // compiler refuses it in MSL, but a CompiledKernel's module may be any
  // bitcode in the store: here a compiled kernel with a `syscall` added.
  std::string asmKernel = withInlineAsm(bitcodeOf("kernel void a(device int *o [[buffer(0)]]) { o[0] = 1; }\n"), "a");
  Request withAsm(asmKernel, "a");
  withAsm.buffer(std::string(4, '\0'), true).groups(1).threads(1);
  expectError(withAsm.r, "inline assembly");
  // An empty asm is a compiler barrier (atomic_thread_fence at thread scope): it runs.
  std::string fence = bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void f(device int *o [[buffer(0)]]) {
  o[0] = 1;
  atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_thread);
  o[1] = 2;
}
)", {"-std=metal3.2"});
  Request withFence(fence, "f");
  withFence.buffer(std::string(8, '\0'), true).groups(1).threads(1);
  auto fenced = run(withFence);
  ASSERT_EQ(fenced.buffers_size(), 1);
  EXPECT_EQ(fenced.buffers(0), std::string("\x01\0\0\0\x02\0\0\0", 8));

  // And it still runs kernels.
  runSaxpy(1u << 12, 1, false);
}

// The real binary: a request that fails is answered, a kernel that faults
// (after the worker's start note) ends the worker with
// kWorkerKernelFaultExitCode, saying how on stderr.
void expectWorkerFault(const std::string &bc, const std::string &symbol, const std::string &message) {
  int toChild[2], fromChild[2], errChild[2];
  ASSERT_EQ(pipe(toChild), 0);
  ASSERT_EQ(pipe(fromChild), 0);
  ASSERT_EQ(pipe(errChild), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(toChild[0], 0);
    dup2(fromChild[1], 1);
    dup2(errChild[1], 2);
    for (int fd : {toChild[0], toChild[1], fromChild[0], fromChild[1], errChild[0], errChild[1]})
      close(fd);
    execl(MSLD_BINARY_DIR "/msld-exec-worker", "msld-exec-worker", nullptr);
    _exit(127);
  }
  close(toChild[0]);
  close(fromChild[1]);
  close(errChild[1]);
  signal(SIGPIPE, SIG_IGN);
  msl::internal::WorkerHello hello;
  ASSERT_TRUE(msl::service::readMessage(fromChild[0], hello));
  EXPECT_NE(hello.compiler_identity().find("binary/sha256:"), std::string::npos) << hello.compiler_identity();

  Request bad("not bitcode", symbol);
  bad.groups(1).threads(1);
  ASSERT_TRUE(msl::service::writeMessage(toChild[1], bad.r));
  ExecWorkerResponse resp;
  ASSERT_TRUE(msl::service::readMessage(fromChild[0], resp));
  EXPECT_NE(resp.error(), "");
  EXPECT_FALSE(resp.dispatch_starts()); // failed before a dispatch: the answer alone

  Request req(bc, symbol);
  req.buffer(std::string(), true, 1024).groups(4).threads(64);
  ASSERT_TRUE(msl::service::writeMessage(toChild[1], req.r));
  // The start note once it is JIT-compiled, then no answer: the fault.
  ASSERT_TRUE(msl::service::readMessage(fromChild[0], resp));
  EXPECT_TRUE(resp.dispatch_starts()) << resp.error();
  EXPECT_FALSE(msl::service::readMessage(fromChild[0], resp)) << resp.error();
  close(toChild[1]);
  std::string err;
  char buf[4096];
  for (ssize_t k; (k = read(errChild[0], buf, sizeof buf)) > 0;)
    err.append(buf, size_t(k));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "status " << status << ": " << err;
  EXPECT_EQ(WEXITSTATUS(status), msl::service::kWorkerKernelFaultExitCode) << err;
  EXPECT_NE(err.find("kernel " + symbol + " faulted: " + message), std::string::npos) << err;
  close(fromChild[0]);
  close(errChild[0]);
}

TEST(ExecWorker, OutOfBoundsWriteFaultsTheWorker) {
  expectWorkerFault(bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void oob(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i + (1u << 28)] = 1; }
)"),
                    "oob", "out-of-bounds access at 0x");
}

TEST(ExecWorker, OneElementPastTheEndFaults) {
  // 1024 bytes = 256 uints; thread 255 writes just past the end.
  expectWorkerFault(bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void past(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i + 1] = i; }
)"),
                    "past", "out-of-bounds access at 0x");
}

TEST(ExecWorker, NegativeIndexFaults) {
  expectWorkerFault(bitcodeOf(R"(
#include <metal_stdlib>
using namespace metal;
kernel void neg(device float4* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[int(i) - 0x7fffffff] = 1; }
)"),
                    "neg", "out-of-bounds access at 0x");
}

} // namespace
