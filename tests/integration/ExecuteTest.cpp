// The Executor service through the real msld: `mslc run` on the examples
// with answers computed here, ListDevices, the request errors, and the
// faults (an endless kernel, an out-of-bounds write) after which the daemon
// serves on, and the two time limits of a run (the JIT's, then the kernel's
// from its first dispatch). Tests that run kernels need
// build/bin/msld-exec-worker and are skipped without it.
#include "DaemonFixture.h"
#include "KernelRequest.h"
#include "msl/client/Client.h"

#include <sys/wait.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <cstring>
#include <fstream>
#include <random>

namespace msl::test {
namespace {

namespace fs = std::filesystem;
using grpc::StatusCode;

std::string quote(const std::string &s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

struct MslcResult {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

void writeBytes(const fs::path &p, const std::string &bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

// The comma-separated values of one --print line.
std::vector<double> parseLine(const std::string &line) {
  std::vector<double> out;
  size_t start = 0;
  while (start <= line.size()) {
    size_t comma = line.find(',', start);
    std::string item = line.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty() && item != "\n")
      out.push_back(std::strtod(item.c_str(), nullptr));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
    out.push_back(text.substr(start, nl - start));
  if (start < text.size())
    out.push_back(text.substr(start));
  return out;
}

const char *kOutOfBounds = R"(#include <metal_stdlib>
using namespace metal;
kernel void write_far(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid + 100000000u] = 1.0f;   // 400 MB past a 16-byte buffer
}
)";

// A kernel quick to compile but slow to JIT on the cpu device: `steps`
// dependent fma/sin steps with a few barriers between them. msld's compile
// (Clang, O2 to bitcode) takes ~0.2 s for 700 steps; the execution worker's
// JIT of its work-group function (O3, vectorized across the threadgroup, and
// x86 code generation) ~3 s on the 2-core test machine (MSLD_EXEC_TIMING's
// jit_us), while the kernel itself runs in ~1 ms. It writes gid * 3 + 1 to
// ids[gid] (to check) and the arithmetic's result to junk[gid] (so that it
// is not dead code).
std::string slowJitKernel(int steps) {
  std::string s = "#include <metal_stdlib>\nusing namespace metal;\n"
                  "kernel void slow_jit(device uint* ids [[buffer(0)]], device float* junk [[buffer(1)]],\n"
                  "                     threadgroup float* tg [[threadgroup(0)]],\n"
                  "                     uint tid [[thread_position_in_threadgroup]],\n"
                  "                     uint gid [[thread_position_in_grid]]) {\n"
                  "  float a = float(gid) * 0.5f + 1.0f, b = a * 0.25f + 2.0f;\n";
  char line[256];
  for (int i = 0; i < steps; ++i) {
    std::snprintf(line, sizeof line, "  a = fma(a, %.6ff, b); b = b * %.7ff + sin(a * %.6ff);\n", 1.0 + i * 1e-4,
                  0.999 - i * 1e-6, 0.01 + i * 1e-5);
    s += line;
    if (i % (steps / 4) == 0) {
      std::snprintf(line, sizeof line,
                    "  tg[tid] = a; threadgroup_barrier(mem_flags::mem_threadgroup); b += tg[(tid + %du) & 63u];\n"
                    "  threadgroup_barrier(mem_flags::mem_threadgroup);\n",
                    i);
      s += line;
    }
  }
  return s + "  ids[gid] = gid * 3u + 1u;\n  junk[gid] = a + b;\n}\n";
}

// slow_jit over one threadgroup of 64 threads.
msl::v1::ExecuteRequest slowJitRequest(int steps) {
  msl::v1::ExecuteRequest req;
  *req.mutable_compile() = compileRequest(slowJitKernel(steps));
  req.set_kernel("slow_jit");
  for (uint32_t i = 0; i < 2; ++i) {
    req.add_buffers()->set_zeros(64 * 4);
    auto *b = req.add_buffer_bindings();
    b->set_index(i);
    b->set_buffer(i);
  }
  auto *t = req.add_threadgroup_memory();
  t->set_index(0);
  t->set_length(64 * 4);
  req.mutable_dispatch()->mutable_threads()->set_x(64);
  req.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(64);
  return req;
}

// The value of `key` (e.g. "jit_us") on the last exec_timing line of `text`
// (MSLD_EXEC_TIMING's file); -1 if absent.
double lastTiming(const std::string &text, const std::string &key) {
  size_t line = text.rfind("exec_timing ");
  size_t at = line == std::string::npos ? line : text.find(" " + key + " ", line);
  return at == std::string::npos ? -1 : std::strtod(text.c_str() + at + key.size() + 2, nullptr);
}

class ExecuteTest : public DaemonTest {
protected:
  /// msld with its cpu device when the worker is built, else without.
  Daemon &start() {
    if (haveExecWorker())
      return startDaemon();
    return startDaemon({"--exec-workers", "0"});
  }

  /// Runs `mslc run ARGS` in `cwd` (the source tree by default).
  MslcResult mslcRun(const std::vector<std::string> &args, fs::path cwd = MSLD_SOURCE_DIR) {
    std::string command = "cd " + quote(cwd.string()) + " && " + quote(binDir() + "/mslc") + " run";
    for (const auto &a : args)
      command += " " + quote(a);
    command += " --server " + quote(daemon_->address());
    fs::path errFile = dir_ / "mslc.stderr";
    command += " 2>" + quote(errFile.string());
    MslcResult r;
    FILE *p = ::popen(command.c_str(), "r");
    if (!p)
      return r;
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, p)) > 0)
      r.out.append(buffer, n);
    int status = ::pclose(p);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp(errFile);
    return r;
  }

  /// saxpy over `n` floats through mslc (dispatchThreads of n, threadgroups
  /// of 256) with y printed; checks y = fma(a, x, y) `repeat` times over.
  void expectSaxpy(size_t n, unsigned seed, uint32_t repeat = 1) {
    SCOPED_TRACE("saxpy n=" + std::to_string(n) + " repeat=" + std::to_string(repeat));
    const float a = 1.75f;
    auto x = randomFloats(n, seed), y = randomFloats(n, seed + 1);
    writeBytes(dir_ / "x.bin", bytesOf(x));
    writeBytes(dir_ / "y.bin", bytesOf(y));
    std::vector<std::string> args = {"examples/saxpy.metal", "--kernel", "saxpy", "--grid", std::to_string(n),
                                     "--threadgroup", "256", "--buffer", "0=float:1.75", "--buffer",
                                     "1=@" + (dir_ / "x.bin").string(), "--buffer",
                                     "2=@" + (dir_ / "y.bin").string(), "--buffer", "3=uint:" + std::to_string(n),
                                     "--print", "2", "--out", "2=" + (dir_ / "y.out").string(), "--stats"};
    if (repeat > 1)
      args.insert(args.end(), {"--repeat", std::to_string(repeat)});
    MslcResult r = mslcRun(args);
    ASSERT_EQ(r.status, 0) << r.err;
    std::vector<float> want = y;
    for (uint32_t k = 0; k < repeat; ++k)
      for (size_t i = 0; i < n; ++i)
        want[i] = std::fma(a, x[i], want[i]);
    auto printed = parseLine(r.out);
    auto written = floatsOf(slurp(dir_ / "y.out"));
    ASSERT_EQ(printed.size(), n) << r.out.substr(0, 200);
    ASSERT_EQ(written.size(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_FLOAT_EQ(float(printed[i]), want[i]) << i;
      ASSERT_FLOAT_EQ(written[i], want[i]) << i;
    }
    // --stats: the compile's cache hit and one kernel time per dispatch.
    EXPECT_NE(r.err.find("mslc: stats: cache_hit="), std::string::npos) << r.err;
    int dispatchLines = 0;
    for (const auto &l : lines(r.err))
      dispatchLines += l.find("mslc: stats: dispatch ") == 0 && l.find("kernel_time=") != std::string::npos;
    EXPECT_EQ(dispatchLines, int(repeat)) << r.err;
  }

  /// examples/reduce.metal's `kernel` over 1000 random floats in
  /// threadgroups of 256: one partial sum per threadgroup.
  void expectReduce(const std::string &kernel, std::vector<std::string> extra = {}) {
    const uint32_t n = 1000, groupSize = 256, groups = (n + groupSize - 1) / groupSize;
    auto in = randomFloats(n, 42, 0.0f, 1.0f);
    writeBytes(dir_ / "in.bin", bytesOf(in));
    std::vector<std::string> args = {"examples/reduce.metal", "--kernel", kernel, "--threadgroups",
                                     std::to_string(groups), "--threadgroup", std::to_string(groupSize),
                                     "--buffer", "0=@" + (dir_ / "in.bin").string(), "--buffer",
                                     "1=zeros:" + std::to_string(groups * 4), "--buffer", "2=uint:" + std::to_string(n),
                                     "--print", "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    MslcResult r = mslcRun(args);
    ASSERT_EQ(r.status, 0) << r.err;
    auto partial = parseLine(r.out);
    ASSERT_EQ(partial.size(), groups) << r.out;
    for (uint32_t g = 0; g < groups; ++g) {
      double want = 0;
      for (uint32_t i = g * groupSize; i < std::min(n, (g + 1) * groupSize); ++i)
        want += in[i];
      EXPECT_NEAR(partial[g], want, 1e-3) << "group " << g;
    }
  }

  msl::v1::ExecuteRequest saxpyRequest(uint32_t n) {
    msl::v1::ExecuteRequest req;
    *req.mutable_compile() = compileRequest(readSourceFile("examples/saxpy.metal"));
    req.set_kernel("saxpy");
    float a = 2.0f;
    std::vector<float> x(n, 1.0f), y(n, 3.0f);
    req.add_buffers()->set_inline_(std::string(reinterpret_cast<const char *>(&a), 4));
    req.add_buffers()->set_inline_(bytesOf(x));
    req.add_buffers()->set_inline_(bytesOf(y));
    req.add_buffers()->set_inline_(std::string(reinterpret_cast<const char *>(&n), 4));
    for (uint32_t i = 0; i < 4; ++i) {
      auto *b = req.add_buffer_bindings();
      b->set_index(i);
      b->set_buffer(i);
    }
    req.mutable_dispatch()->mutable_threads()->set_x(n);
    req.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(64);
    return req;
  }

  /// The daemon still runs kernels: a small saxpy gives 2 * 1 + 3.
  void expectServesOn() {
    SCOPED_TRACE("the daemon serves on");
    msl::client::Client client(daemon_->address());
    auto r = client.execute(saxpyRequest(100));
    ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
    ASSERT_EQ(r->buffers_size(), 1);
    EXPECT_EQ(r->buffers(0).buffer(), 2u);
    auto y = floatsOf(r->buffers(0).inline_data());
    ASSERT_EQ(y.size(), 100u);
    for (float v : y)
      ASSERT_EQ(v, 5.0f);
  }
};

TEST_F(ExecuteTest, ListDevicesListsTheCpuWithItsLimits) {
  REQUIRE_EXEC_WORKER();
  Daemon &d = start();
  msl::client::Client client(d.address());
  auto devices = client.listDevices();
  ASSERT_TRUE(devices.ok()) << msl::client::describeStatus(devices.status());
  const msl::v1::Device *cpu = nullptr;
  for (const auto &dev : devices->devices())
    if (dev.name() == "cpu")
      cpu = &dev;
  ASSERT_NE(cpu, nullptr) << devices->DebugString();
  EXPECT_EQ(cpu->kind(), msl::v1::Device::CPU);
  EXPECT_FALSE(cpu->description().empty());
  EXPECT_FALSE(cpu->architecture().empty());
  EXPECT_GE(cpu->compute_units(), 1u);
  EXPECT_GT(cpu->memory_bytes(), 0u);
  EXPECT_EQ(cpu->max_threads_per_threadgroup(), 1024u);
  EXPECT_EQ(cpu->max_threadgroup_memory_bytes(), 32u * 1024);
  EXPECT_GE(cpu->simd_width(), 1u);
  EXPECT_GT(cpu->max_buffer_bytes(), 0u);
}

// Buffers of megabytes go to the worker and back raw (split frames,
// service/WorkerProtocol.h) through pipes smaller than them; each byte must
// land where it belongs, call after call on the same worker.
TEST_F(ExecuteTest, MegabyteBuffersRoundTripThroughTheWorker) {
  REQUIRE_EXEC_WORKER();
  Daemon &d = start();
  msl::client::Client client(d.address());
  for (uint32_t n : {262144u, 200003u, 262144u}) {
    SCOPED_TRACE(n);
    auto req = saxpyRequest(n);
    std::vector<float> x(n);
    for (uint32_t i = 0; i < n; ++i)
      x[i] = float(i);
    req.mutable_buffers(1)->set_inline_(bytesOf(x));
    auto r = client.execute(req);
    ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
    ASSERT_EQ(r->buffers_size(), 1);
    EXPECT_EQ(r->buffers(0).buffer(), 2u);
    auto y = floatsOf(r->buffers(0).inline_data());
    ASSERT_EQ(y.size(), n);
    for (uint32_t i = 0; i < n; ++i)
      ASSERT_EQ(y[i], 2.0f * float(i) + 3.0f) << i;
  }
}

TEST_F(ExecuteTest, CudaDeviceIsFailedPreconditionWithoutCuda) {
  Daemon &d = start();
  msl::client::Client client(d.address());
  auto devices = client.listDevices();
  ASSERT_TRUE(devices.ok());
  for (const auto &device : devices->devices())
    if (device.kind() == msl::v1::Device::CUDA)
      GTEST_SKIP() << "this machine has a GPU (" << device.description() << "): ExecuteCudaTest runs on it";
  auto req = saxpyRequest(16);
  req.set_device("cuda:0");
  auto r = client.execute(req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().error_code(), StatusCode::FAILED_PRECONDITION) << r.status().error_message();
  EXPECT_NE(r.status().error_message().find("no CUDA device is present"), std::string::npos)
      << r.status().error_message();

  MslcResult m = mslcRun({"examples/saxpy.metal", "--kernel", "saxpy", "--device", "cuda:0", "--grid", "4",
                          "--threadgroup", "4", "--buffer", "0=float:1", "--buffer", "1=float:1,2,3,4", "--buffer",
                          "2=zeros:16", "--buffer", "3=uint:4"});
  EXPECT_EQ(m.status, 1) << m.err;
  EXPECT_NE(m.err.find("mslc: error: FAILED_PRECONDITION"), std::string::npos) << m.err;
  EXPECT_NE(m.err.find("no CUDA device is present"), std::string::npos) << m.err;
}

TEST_F(ExecuteTest, BadRequestsAreInvalidArgument) {
  REQUIRE_EXEC_WORKER();
  Daemon &d = start();
  msl::client::Client client(d.address());
  auto expectInvalid = [&](const msl::v1::ExecuteRequest &req, const std::string &needle) {
    SCOPED_TRACE(needle);
    auto r = client.execute(req);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().error_code(), StatusCode::INVALID_ARGUMENT) << r.status().error_message();
    EXPECT_NE(r.status().error_message().find(needle), std::string::npos) << r.status().error_message();
  };
  auto unknown = saxpyRequest(16);
  unknown.set_kernel("no_such_kernel");
  expectInvalid(unknown, "no_such_kernel");

  auto missing = saxpyRequest(16);
  missing.mutable_buffer_bindings()->RemoveLast(); // [[buffer(3)]], n
  expectInvalid(missing, "[[buffer(3)]]");

  auto wide = saxpyRequest(16);
  wide.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(2048);
  expectInvalid(wide, "2048");

  // Through mslc: exit status 1 and the server's message.
  MslcResult m = mslcRun({"examples/saxpy.metal", "--kernel", "saxpie", "--grid", "4", "--threadgroup", "4",
                          "--buffer", "0=float:1", "--buffer", "1=float:1,2,3,4", "--buffer", "2=zeros:16",
                          "--buffer", "3=uint:4"});
  EXPECT_EQ(m.status, 1) << m.err;
  EXPECT_NE(m.err.find("mslc: error: INVALID_ARGUMENT"), std::string::npos) << m.err;
  EXPECT_NE(m.err.find("saxpie"), std::string::npos) << m.err;
  MslcResult unbound = mslcRun({"examples/saxpy.metal", "--kernel", "saxpy", "--grid", "4", "--threadgroup",
                                "4", "--buffer", "0=float:1", "--buffer", "1=float:1,2,3,4", "--buffer",
                                "2=zeros:16"});
  EXPECT_EQ(unbound.status, 1) << unbound.err;
  EXPECT_NE(unbound.err.find("[[buffer(3)]]"), std::string::npos) << unbound.err;
  MslcResult tooWide = mslcRun({"examples/saxpy.metal", "--kernel", "saxpy", "--grid", "4096", "--threadgroup",
                                "2048", "--buffer", "0=float:1", "--buffer", "1=zeros:16384", "--buffer",
                                "2=zeros:16384", "--buffer", "3=uint:4096"});
  EXPECT_EQ(tooWide.status, 1) << tooWide.err;
  EXPECT_NE(tooWide.err.find("INVALID_ARGUMENT"), std::string::npos) << tooWide.err;
}

TEST_F(ExecuteTest, MslcRunsSaxpy) {
  REQUIRE_EXEC_WORKER();
  start();
  // dispatchThreads of 1000 with threadgroups of 256: the last one partial.
  expectSaxpy(1000, 1);
  // A small case with the values inline and the default print type (float,
  // from the reflection) against an explicit one.
  MslcResult r = mslcRun({"examples/saxpy.metal", "--kernel", "saxpy", "--threadgroups", "1", "--threadgroup",
                          "8", "--buffer", "0=float:2", "--buffer", "1=float:1,2,3,4,5", "--buffer",
                          "2=float:0.5,0.5,0.5,0.5,0.5,9,9,9", "--buffer", "3=uint:5", "--print", "2", "--print",
                          "2:float", "--print", "1", "--print", "3"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "2.5,4.5,6.5,8.5,10.5,9,9,9\n2.5,4.5,6.5,8.5,10.5,9,9,9\n1,2,3,4,5\n5\n") << r.err;
}

TEST_F(ExecuteTest, MslcRepeatCarriesStateOver) {
  REQUIRE_EXEC_WORKER();
  start();
  expectSaxpy(512, 5, 3);
}

TEST_F(ExecuteTest, ReduceSumWithBarriers) {
  REQUIRE_EXEC_WORKER();
  start();
  expectReduce("reduce_sum");
}

TEST_F(ExecuteTest, ReduceSumWithThreadgroupMemoryFromTheHost) {
  REQUIRE_EXEC_WORKER();
  start();
  expectReduce("reduce_sum_dynamic", {"--threadgroup-memory", "0=1024"});
}

TEST_F(ExecuteTest, HistogramWithAtomics) {
  REQUIRE_EXEC_WORKER();
  start();
  const uint32_t n = 100000;
  std::mt19937 rng(9);
  std::string data(n, '\0');
  for (auto &c : data)
    c = char(rng() % 97 + (rng() % 3 == 0 ? 150 : 0)); // uneven bins
  writeBytes(dir_ / "data.bin", data);
  MslcResult r = mslcRun({"examples/histogram.metal", "--kernel", "histogram", "--grid", std::to_string(n),
                          "--threadgroup", "256", "--buffer", "0=@" + (dir_ / "data.bin").string(), "--buffer",
                          "1=zeros:1024", "--buffer", "2=uint:" + std::to_string(n), "--print", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<uint32_t> want(256, 0);
  for (unsigned char c : data)
    ++want[c];
  auto bins = parseLine(r.out); // atomic_uint bins print as uint
  ASSERT_EQ(bins.size(), 256u) << r.out;
  for (int b = 0; b < 256; ++b)
    EXPECT_EQ(uint32_t(bins[b]), want[b]) << "bin " << b;
}

TEST_F(ExecuteTest, EndlessKernelIsDeadlineExceededAndTheDaemonServesOn) {
  REQUIRE_EXEC_WORKER();
  start();
  fs::path project = dir_ / "project";
  writeBytes(project / "spin.metal", kSpinForeverSource);
  auto begin = std::chrono::steady_clock::now();
  MslcResult r = mslcRun({"spin.metal", "--kernel", "spin", "--grid", "1", "--threadgroup", "1", "--buffer",
                          "0=zeros:4", "--timeout-ms", "500"},
                         project);
  auto took = std::chrono::steady_clock::now() - begin;
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("DEADLINE_EXCEEDED"), std::string::npos) << r.err;
  // The kernel's own limit (from its first dispatch), not the JIT's.
  EXPECT_NE(r.err.find("kernel 'spin' on cpu: it ran past its 500 ms time limit"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("JIT"), std::string::npos) << r.err;
  // The compile, then 0.5 s of kernel: not the JIT's 120 s on top.
  EXPECT_LT(took, std::chrono::seconds(30));
  EXPECT_EQ(daemon_->metric("msld_exec_worker_timeouts_total"), 1);
  expectServesOn(); // on the worker that replaced the killed one
}

// Execute's timeout_ms is the kernel's: it counts from the first dispatch,
// not from the request's arrival at the worker, so a kernel whose JIT takes
// many times its limit runs (its JIT has msld's --exec-jit-timeout-ms, 120 s).
TEST_F(ExecuteTest, AKernelWhoseJitOutlastsItsTimeLimitRuns) {
  REQUIRE_EXEC_WORKER();
  const fs::path timing = dir_ / "exec-timing.txt";
  ::setenv("MSLD_EXEC_TIMING", timing.c_str(), 1); // msld inherits it
  start();
  ::unsetenv("MSLD_EXEC_TIMING");
  msl::client::Client client(daemon_->address());
  msl::v1::ExecuteRequest req = slowJitRequest(700);
  req.set_timeout_ms(200); // the JIT takes ~3 s here: a wide margin on faster machines
  auto r = client.execute(req);
  ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
  ASSERT_EQ(r->buffers_size(), 2);
  auto ids = valuesOf<uint32_t>(r->buffers(0).inline_data());
  ASSERT_EQ(ids.size(), 64u);
  for (uint32_t i = 0; i < 64; ++i)
    ASSERT_EQ(ids[i], i * 3 + 1) << i;
  // What the test stands on: the JIT took longer than timeout_ms (so the
  // old rule, one limit for the JIT and the kernel, failed this request),
  // the kernel far less.
  // msld writes its timing line just after answering: wait for it (5 s at most).
  std::string text = slurp(timing);
  for (int i = 0; i < 100 && text.find("exec_timing ") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    text = slurp(timing);
  }
  const double jitUs = lastTiming(text, "jit_us"), kernelUs = lastTiming(text, "kernel_us");
  EXPECT_GT(jitUs, 200e3) << "the JIT was too quick to show anything: " << text;
  EXPECT_GT(kernelUs, 0) << text;
  EXPECT_LT(kernelUs, 100e3) << text;
  EXPECT_EQ(daemon_->metric("msld_exec_worker_timeouts_total"), 0);
}

// The JIT's own limit: past --exec-jit-timeout-ms the worker is killed and
// the answer (DEADLINE_EXCEEDED) names the JIT and the kernel, not the
// kernel's time limit; the replaced worker takes the next request.
TEST_F(ExecuteTest, AJitPastTheJitTimeLimitIsDeadlineExceededNamingTheJit) {
  REQUIRE_EXEC_WORKER();
  startDaemon({"--exec-jit-timeout-ms", "100"});
  msl::client::Client client(daemon_->address());
  msl::v1::ExecuteRequest req = slowJitRequest(700);
  req.set_timeout_ms(60000); // the kernel's limit, never reached
  for (int attempt = 1; attempt <= 2; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    auto begin = std::chrono::steady_clock::now();
    auto r = client.execute(req);
    auto took = std::chrono::steady_clock::now() - begin;
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().error_code(), StatusCode::DEADLINE_EXCEEDED) << r.status().error_message();
    const std::string &m = r.status().error_message();
    EXPECT_NE(m.find("the JIT of kernel 'slow_jit' on cpu"), std::string::npos) << m;
    EXPECT_NE(m.find("100 ms limit (--exec-jit-timeout-ms)"), std::string::npos) << m;
    EXPECT_NE(m.find("the kernel did not run"), std::string::npos) << m;
    EXPECT_LT(took, std::chrono::seconds(20)); // the compile (the first time), then 0.1 s
    EXPECT_EQ(daemon_->metric("msld_exec_worker_timeouts_total"), attempt);
  }
}

TEST_F(ExecuteTest, OutOfBoundsWriteIsAbortedAndTheDaemonServesOn) {
  REQUIRE_EXEC_WORKER();
  start();
  // saxpy once before the fault: msld then sends it without its module,
  // which the replacement worker has not seen (module_needed, and again
  // with it).
  expectServesOn();
  fs::path project = dir_ / "project";
  writeBytes(project / "oob.metal", kOutOfBounds);
  MslcResult r = mslcRun({"oob.metal", "--kernel", "write_far", "--grid", "4", "--threadgroup", "4", "--buffer",
                          "0=zeros:16"},
                         project);
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_NE(r.err.find("ABORTED"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("write_far"), std::string::npos) << r.err;
  expectServesOn();
}

TEST_F(ExecuteTest, MslcReportsCompileErrorsLikeMslcC) {
  start();
  fs::path project = dir_ / "project";
  writeBytes(project / "bad.metal", "kernel void k(device float* a [[buffer(0)]]) { a[0] = ; }\n");
  MslcResult r = mslcRun({"bad.metal", "--kernel", "k", "--grid", "1", "--threadgroup", "1", "--buffer",
                          "0=zeros:4"},
                         project);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("bad.metal:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
}

} // namespace
} // namespace msl::test
