// msl-bench-cpu: the same kernels on msld's CPU device (in-process
// msl::executor::CpuDevice, the code the execution worker runs; kernel time
// is its dispatch_time_ns), as OpenCL C on PoCL (through the OpenCL API;
// kernel time from event profiling) and as plain C++ -O3 -march=native on
// std::threads (wall clock). Each column: best of --runs timed runs after one
// warm-up, every implementation's output checked against a reference
// computed here; with --rounds K the three take turns K times (msld, PoCL,
// C++, msld, ...) and each keeps its best, so that a slow spell of a shared
// machine's memory falls on all of them rather than on one. Prints one
// table and the machine.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>

#include "CpuBench.h"
#include "CpuDevice.h"
#include "msl/compiler/Compiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace msl::bench::cpu;
using msl::internal::ExecSlot;
using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "msl-bench-cpu: %s\n", what.c_str());
  std::exit(1);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    die("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename T> std::string bytesOf(const std::vector<T> &v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(T));
}
template <typename T> std::string bytesOf(const T &v) { return std::string(reinterpret_cast<const char *>(&v), sizeof v); }
template <typename T> std::vector<T> valuesOf(const std::string &s) {
  std::vector<T> v(s.size() / sizeof(T));
  std::memcpy(v.data(), s.data(), v.size() * sizeof(T));
  return v;
}

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto &x : v)
    x = dist(rng);
  return v;
}

// One implementation's result on one row.
struct Result {
  double bestNs = 0; // 0: did not run
  std::string error; // non-empty: failed (did not run, or wrong output)
};

// ---- msld's CPU device ------------------------------------------------------

class Msld {
public:
  Msld() {
    msl::compiler::CompileJob job;
    job.mainPath = "kernels.metal";
    job.mainSource = readFile(MSLD_BENCH_CPU_DIR "/kernels.metal");
    job.outputs = {msl::compiler::OutputKind::LLVMBitcode};
    auto r = msl::compiler::compile(job);
    if (!r.success) {
      std::string diags;
      for (const auto &d : r.diagnostics)
        diags += "\n  " + d.file + ":" + std::to_string(d.line) + ": " + d.message;
      die("kernels.metal does not compile:" + diags);
    }
    module_ = r.artifacts[msl::compiler::OutputKind::LLVMBitcode];
  }
  unsigned threads() const { return device_.threads(); }

  // A request for `symbol` of kernels.metal; bind buffers and threadgroup
  // memory in the order of the kernel's (non-built-in) parameters.
  struct Request {
    ExecWorkerRequest r;
    Request &buffer(std::string bytes, bool returned = false, uint64_t length = 0) {
      auto *b = r.add_buffers();
      b->set_length(std::max<uint64_t>(length, bytes.size()));
      b->set_data(std::move(bytes));
      b->set_returned(returned);
      auto *s = r.add_slots();
      s->set_kind(ExecSlot::BUFFER);
      s->set_buffer(uint32_t(r.buffers_size() - 1));
      return *this;
    }
    Request &groups(uint32_t x, uint32_t y = 1) { return set3(r.mutable_threadgroups(), x, y); }
    Request &grid(uint32_t x, uint32_t y = 1) { return set3(r.mutable_grid_threads(), x, y); }
    Request &threads(uint32_t x, uint32_t y = 1) { return set3(r.mutable_threads_per_threadgroup(), x, y); }
    Request &set3(google::protobuf::RepeatedField<uint32_t> *f, uint32_t x, uint32_t y) {
      f->Clear();
      f->Add(x);
      f->Add(y);
      f->Add(1);
      return *this;
    }
  };
  Request request(const std::string &symbol) const {
    Request q;
    q.r.set_module(module_);
    q.r.set_module_digest("msl-bench-cpu:kernels.metal");
    q.r.set_symbol(symbol);
    return q;
  }

  // Runs `runs` dispatches (state carried over); the best, the first one
  // (a warm-up) left out, into `result`; the returned buffers.
  std::vector<std::string> run(Request &q, unsigned runs, Result &result) {
    q.r.set_repeat(runs);
    ExecWorkerResponse resp = device_.execute(q.r);
    if (!resp.error().empty()) {
      result.error = "msld: " + resp.error();
      return {};
    }
    int64_t best = INT64_MAX;
    for (int i = 1; i < resp.dispatch_time_ns_size(); ++i)
      best = std::min(best, resp.dispatch_time_ns(i));
    result.bestNs = double(best);
    return {resp.buffers().begin(), resp.buffers().end()};
  }

private:
  std::string module_;
  msl::executor::CpuDevice device_;
};

// ---- PoCL through the OpenCL API --------------------------------------------

void clCheck(cl_int err, const char *what) {
  if (err != CL_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: OpenCL error " + std::to_string(err));
}

std::string platformInfo(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  clGetPlatformInfo(p, what, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetPlatformInfo(p, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0')
    s.pop_back();
  return s;
}

class Pocl {
public:
  // Throws (with the reason) when there is no PoCL CPU device.
  Pocl() {
    // PoCL links its own LLVM and Clang (15 on Debian 12); libclang-cpp's
    // symbols are unversioned, so in this process (which has LLVM/Clang 19
    // for msld) PoCL's calls would bind to Clang 19's and crash in
    // clBuildProgram. Loaded first with RTLD_DEEPBIND, PoCL and its
    // libraries bind to their own; the ICD loader then finds it loaded.
    dlopen("libpocl.so.2", RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    cl_uint n = 0;
    clGetPlatformIDs(0, nullptr, &n);
    std::vector<cl_platform_id> platforms(n);
    if (n)
      clCheck(clGetPlatformIDs(n, platforms.data(), nullptr), "clGetPlatformIDs");
    std::string seen;
    for (cl_platform_id p : platforms) {
      std::string name = platformInfo(p, CL_PLATFORM_NAME);
      seen += (seen.empty() ? "" : ", ") + name;
      if (name.find("Portable Computing Language") == std::string::npos &&
          platformInfo(p, CL_PLATFORM_VENDOR).find("pocl") == std::string::npos)
        continue;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &device_, nullptr) == CL_SUCCESS) {
        version_ = platformInfo(p, CL_PLATFORM_VERSION);
        break;
      }
    }
    if (!device_)
      throw std::runtime_error("no PoCL CPU device among the OpenCL platforms (" +
                               (seen.empty() ? std::string("none") : seen) + ")");
    char name[256] = {};
    clGetDeviceInfo(device_, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    deviceName_ = name;
    cl_uint units = 0;
    clGetDeviceInfo(device_, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, nullptr);
    computeUnits_ = units;
    cl_int err;
    ctx_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &err);
    clCheck(err, "clCreateContext");
    queue_ = clCreateCommandQueue(ctx_, device_, CL_QUEUE_PROFILING_ENABLE, &err);
    clCheck(err, "clCreateCommandQueue");
    std::string src = readFile(MSLD_BENCH_CPU_DIR "/kernels.cl");
    const char *text = src.c_str();
    program_ = clCreateProgramWithSource(ctx_, 1, &text, nullptr, &err);
    clCheck(err, "clCreateProgramWithSource");
    // Metal compiles with fast math by default (msld too): the OpenCL peer.
    err = clBuildProgram(program_, 1, &device_, "-cl-std=CL1.2 -cl-fast-relaxed-math", nullptr, nullptr);
    if (err != CL_SUCCESS) {
      size_t logSize = 0;
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &logSize);
      std::string log(logSize, '\0');
      clGetProgramBuildInfo(program_, device_, CL_PROGRAM_BUILD_LOG, logSize, log.data(), nullptr);
      throw std::runtime_error("kernels.cl does not build: " + log);
    }
  }
  ~Pocl() {
    for (cl_mem m : mems_)
      clReleaseMemObject(m);
    if (program_)
      clReleaseProgram(program_);
    if (queue_)
      clReleaseCommandQueue(queue_);
    if (ctx_)
      clReleaseContext(ctx_);
  }
  const std::string &version() const { return version_; }
  const std::string &deviceName() const { return deviceName_; }
  unsigned computeUnits() const { return computeUnits_; }

  cl_mem buffer(const void *data, size_t bytes) {
    cl_int err;
    cl_mem m = clCreateBuffer(ctx_, CL_MEM_READ_WRITE | (data ? CL_MEM_COPY_HOST_PTR : 0), bytes,
                              const_cast<void *>(data), &err);
    clCheck(err, "clCreateBuffer");
    if (!data) {
      uint32_t zero = 0;
      clCheck(clEnqueueFillBuffer(queue_, m, &zero, 4, 0, bytes, 0, nullptr, nullptr), "clEnqueueFillBuffer");
      clCheck(clFinish(queue_), "clFinish");
    }
    mems_.push_back(m);
    return m;
  }
  void read(cl_mem m, void *out, size_t bytes) {
    clCheck(clEnqueueReadBuffer(queue_, m, CL_TRUE, 0, bytes, out, 0, nullptr, nullptr), "clEnqueueReadBuffer");
  }
  void releaseBuffers() {
    for (cl_mem m : mems_)
      clReleaseMemObject(m);
    mems_.clear();
  }

  // Runs `name` `runs` times (args: cl_mem or plain values); the best kernel
  // time (CL_PROFILING_COMMAND_START..END) of all runs but the first.
  struct Arg {
    size_t size;
    const void *value;
    template <typename T> Arg(const T &v) : size(sizeof(T)), value(&v) {}
  };
  double run(const char *name, const std::vector<Arg> &args, unsigned dims, const size_t *global,
             const size_t *local, unsigned runs) {
    cl_int err;
    cl_kernel k = clCreateKernel(program_, name, &err);
    clCheck(err, "clCreateKernel");
    for (size_t i = 0; i < args.size(); ++i)
      clCheck(clSetKernelArg(k, cl_uint(i), args[i].size, args[i].value), "clSetKernelArg");
    double best = 1e300;
    for (unsigned r = 0; r < runs; ++r) {
      cl_event ev;
      clCheck(clEnqueueNDRangeKernel(queue_, k, dims, nullptr, global, local, 0, nullptr, &ev),
              "clEnqueueNDRangeKernel");
      clCheck(clFinish(queue_), "clFinish");
      cl_ulong start = 0, end = 0;
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
      clReleaseEvent(ev);
      if (r > 0)
        best = std::min(best, double(end - start));
    }
    clReleaseKernel(k);
    return best;
  }

private:
  cl_device_id device_ = nullptr;
  cl_context ctx_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program program_ = nullptr;
  std::vector<cl_mem> mems_;
  std::string version_, deviceName_;
  unsigned computeUnits_ = 0;
};

// ---- C++ ----------------------------------------------------------------------

// Best wall time of all runs of fn but the first.
double timeNative(unsigned runs, const std::function<void()> &fn) {
  double best = 1e300;
  for (unsigned r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    auto t1 = std::chrono::steady_clock::now();
    if (r > 0)
      best = std::min(best, double(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
  }
  return best;
}

// ---- rows ---------------------------------------------------------------------

struct Row {
  Row(std::string name, std::string size) : name(std::move(name)), size(std::move(size)) {}
  std::string name, size;
  double work = 0; // bytes moved or flops, for the rate column
  const char *unit = "GB/s";
  Result msld, pocl, cpp;
  // msld/PoCL within each round: the two ran seconds apart, so a slow spell
  // of the machine's memory that lasts longer than a round cancels out.
  std::vector<double> roundRatios;
};

struct Context {
  Msld &msld;
  Pocl *pocl; // null: no PoCL (its column says why)
  std::string poclError;
  unsigned runs;   // timed runs + 1 warm-up, for every implementation
  unsigned threads;
};

// Runs an implementation; a thrown error becomes its Result's error.
void guarded(Result &r, const char *who, const std::function<void()> &fn) {
  try {
    fn();
  } catch (const std::exception &e) {
    r.error = std::string(who) + ": " + e.what();
  }
}

void pocled(Context &c, Result &r, const std::function<void(Pocl &)> &fn) {
  if (!c.pocl) {
    r.error = c.poclError;
    return;
  }
  guarded(r, "PoCL", [&] { fn(*c.pocl); });
  c.pocl->releaseBuffers();
}

// The check: an empty string, or what is wrong.
using Check = std::function<std::string(const void *out)>;
void check(Result &r, const char *who, const Check &fn, const void *out) {
  if (r.error.empty() && r.bestNs > 0)
    if (std::string e = fn(out); !e.empty())
      r.error = std::string(who) + " wrong: " + e;
}

Row saxpyRow(Context &c) {
  Row row{"saxpy", "2^24 floats"};
  const uint32_t n = kSaxpyN;
  row.work = 3.0 * 4 * n;
  const float a = 1.75f;
  auto x = randomFloats(n, 11), y0 = randomFloats(n, 12);
  // y after c.runs in-place dispatches.
  std::vector<float> ref(y0);
  for (unsigned r = 0; r < c.runs; ++r)
    for (uint32_t i = 0; i < n; ++i)
      ref[i] = std::fma(a, x[i], ref[i]);
  Check ok = [&](const void *p) -> std::string {
    const float *y = static_cast<const float *>(p);
    for (uint32_t i = 0; i < n; ++i)
      if (!(std::fabs(y[i] - ref[i]) <= 1e-6f * std::fabs(ref[i]) + 1e-6f))
        return "y[" + std::to_string(i) + "] = " + std::to_string(y[i]) + ", expected " + std::to_string(ref[i]);
    return "";
  };
  {
    auto q = c.msld.request("saxpy");
    q.buffer(bytesOf(x)).buffer(bytesOf(y0), true).buffer(bytesOf(a)).buffer(bytesOf(n)).grid(n).threads(kSaxpyGroup);
    auto out = c.msld.run(q, c.runs, row.msld);
    check(row.msld, "msld", ok, out.empty() ? nullptr : out[0].data());
  }
  pocled(c, row.pocl, [&](Pocl &p) {
    cl_mem bx = p.buffer(x.data(), 4 * n), by = p.buffer(y0.data(), 4 * n);
    size_t g = n, l = kSaxpyGroup;
    row.pocl.bestNs = p.run("saxpy", {bx, by, a, n}, 1, &g, &l, c.runs);
    std::vector<float> out(n);
    p.read(by, out.data(), 4 * n);
    check(row.pocl, "PoCL", ok, out.data());
  });
  std::vector<float> y(y0);
  row.cpp.bestNs = timeNative(c.runs, [&] { nativeSaxpy(c.threads, x.data(), y.data(), a, n); });
  check(row.cpp, "C++", ok, y.data());
  return row;
}

Row sgemmRow(Context &c) {
  Row row{"sgemm, 16x16 threadgroup tiles", "1024x1024"};
  const uint32_t N = kGemmN;
  row.work = 2.0 * N * N * N;
  row.unit = "GFLOP/s";
  auto A = randomFloats(size_t(N) * N, 21), B = randomFloats(size_t(N) * N, 22);
  // 8192 sampled elements of C against a double reference.
  std::mt19937 rng(23);
  std::vector<std::pair<uint32_t, uint32_t>> samples(8192);
  std::vector<double> sref(samples.size()), smag(samples.size());
  for (size_t s = 0; s < samples.size(); ++s) {
    uint32_t i = rng() % N, j = rng() % N;
    samples[s] = {i, j};
    double acc = 0, mag = 0;
    for (uint32_t k = 0; k < N; ++k) {
      acc += double(A[size_t(i) * N + k]) * B[size_t(k) * N + j];
      mag += std::fabs(double(A[size_t(i) * N + k]) * B[size_t(k) * N + j]);
    }
    sref[s] = acc;
    smag[s] = mag;
  }
  Check ok = [&](const void *p) -> std::string {
    const float *C = static_cast<const float *>(p);
    for (size_t s = 0; s < samples.size(); ++s) {
      auto [i, j] = samples[s];
      float v = C[size_t(i) * N + j];
      if (!(std::fabs(v - sref[s]) <= 1e-5 * smag[s] + 1e-6))
        return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + std::to_string(v) + ", expected " +
               std::to_string(sref[s]);
    }
    return "";
  };
  {
    auto q = c.msld.request("sgemm");
    q.buffer(bytesOf(A)).buffer(bytesOf(B)).buffer(std::string(), true, 4ull * N * N).buffer(bytesOf(N))
        .groups(N / kGemmTile, N / kGemmTile).threads(kGemmTile, kGemmTile);
    auto out = c.msld.run(q, c.runs, row.msld);
    check(row.msld, "msld", ok, out.empty() ? nullptr : out[0].data());
  }
  pocled(c, row.pocl, [&](Pocl &p) {
    cl_mem bA = p.buffer(A.data(), 4ull * N * N), bB = p.buffer(B.data(), 4ull * N * N),
           bC = p.buffer(nullptr, 4ull * N * N);
    size_t g[2] = {N, N}, l[2] = {kGemmTile, kGemmTile};
    row.pocl.bestNs = p.run("sgemm", {bA, bB, bC, N}, 2, g, l, c.runs);
    std::vector<float> out(size_t(N) * N);
    p.read(bC, out.data(), 4ull * N * N);
    check(row.pocl, "PoCL", ok, out.data());
  });
  std::vector<float> C(size_t(N) * N);
  row.cpp.bestNs = timeNative(c.runs, [&] { nativeSgemm(c.threads, A.data(), B.data(), C.data(), N); });
  check(row.cpp, "C++", ok, C.data());
  return row;
}

Row reduceRow(Context &c) {
  Row row{"reduce, tree + per-group partials", "2^26 floats"};
  const uint32_t n = kReduceN, groups = kReducePartials;
  row.work = 4.0 * n;
  auto in = randomFloats(n, 31);
  std::vector<double> ref(groups), mag(groups);
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t i = g * kReduceChunk; i < (g + 1) * kReduceChunk; ++i) {
      ref[g] += in[i];
      mag[g] += std::fabs(in[i]);
    }
  Check ok = [&](const void *p) -> std::string {
    const float *partial = static_cast<const float *>(p);
    for (uint32_t g = 0; g < groups; ++g)
      if (!(std::fabs(partial[g] - ref[g]) <= 1e-5 * mag[g] + 1e-6))
        return "partial[" + std::to_string(g) + "] = " + std::to_string(partial[g]) + ", expected " +
               std::to_string(ref[g]);
    return "";
  };
  {
    auto q = c.msld.request("reduce");
    q.buffer(bytesOf(in)).buffer(std::string(), true, 4ull * groups).groups(groups).threads(kReduceGroup);
    auto out = c.msld.run(q, c.runs, row.msld);
    check(row.msld, "msld", ok, out.empty() ? nullptr : out[0].data());
  }
  pocled(c, row.pocl, [&](Pocl &p) {
    cl_mem bin = p.buffer(in.data(), 4ull * n), bout = p.buffer(nullptr, 4ull * groups);
    size_t g = size_t(groups) * kReduceGroup, l = kReduceGroup;
    row.pocl.bestNs = p.run("reduce", {bin, bout}, 1, &g, &l, c.runs);
    std::vector<float> out(groups);
    p.read(bout, out.data(), 4ull * groups);
    check(row.pocl, "PoCL", ok, out.data());
  });
  std::vector<float> partial(groups);
  row.cpp.bestNs = timeNative(c.runs, [&] { nativeReduce(c.threads, in.data(), partial.data(), n); });
  check(row.cpp, "C++", ok, partial.data());
  return row;
}

Row histogramRow(Context &c) {
  Row row{"histogram, 256 bins, atomics", "2^24 bytes"};
  const uint32_t n = kHistN;
  row.work = 1.0 * n;
  // Skewed (a sum of two uniform bytes, folded): neighbouring values often
  // share bins, as in an image.
  std::mt19937 rng(41);
  std::vector<uint8_t> data(n);
  for (auto &d : data)
    d = uint8_t((rng() % 256 + rng() % 256) / 2);
  std::vector<uint32_t> ref(256, 0);
  for (auto d : data)
    ref[d] += c.runs; // every implementation adds into its bins c.runs times
  Check ok = [&](const void *p) -> std::string {
    const uint32_t *bins = static_cast<const uint32_t *>(p);
    for (int v = 0; v < 256; ++v)
      if (bins[v] != ref[v])
        return "bin " + std::to_string(v) + " = " + std::to_string(bins[v]) + ", expected " + std::to_string(ref[v]);
    return "";
  };
  {
    auto q = c.msld.request("histogram");
    q.buffer(bytesOf(data)).buffer(std::string(), true, 256 * 4).groups(kHistGroups).threads(kHistGroup);
    auto out = c.msld.run(q, c.runs, row.msld);
    check(row.msld, "msld", ok, out.empty() ? nullptr : out[0].data());
  }
  pocled(c, row.pocl, [&](Pocl &p) {
    cl_mem bd = p.buffer(data.data(), n), bb = p.buffer(nullptr, 256 * 4);
    size_t g = size_t(kHistGroups) * kHistGroup, l = kHistGroup;
    row.pocl.bestNs = p.run("histogram", {bd, bb}, 1, &g, &l, c.runs);
    std::vector<uint32_t> out(256);
    p.read(bb, out.data(), 256 * 4);
    check(row.pocl, "PoCL", ok, out.data());
  });
  std::vector<uint32_t> bins(256, 0);
  row.cpp.bestNs = timeNative(c.runs, [&] { nativeHistogram(c.threads, data.data(), bins.data(), n); });
  check(row.cpp, "C++", ok, bins.data());
  return row;
}

Row transposeRow(Context &c) {
  Row row{"transpose, 32x32 threadgroup tiles", "4096x4096"};
  const uint32_t N = kTransN;
  row.work = 2.0 * 4 * N * N;
  auto in = randomFloats(size_t(N) * N, 51);
  Check ok = [&](const void *p) -> std::string {
    const float *out = static_cast<const float *>(p);
    for (uint32_t i = 0; i < N; ++i)
      for (uint32_t j = 0; j < N; ++j)
        if (out[size_t(j) * N + i] != in[size_t(i) * N + j])
          return "out[" + std::to_string(j) + "][" + std::to_string(i) + "] != in[" + std::to_string(i) + "][" +
                 std::to_string(j) + "]";
    return "";
  };
  {
    auto q = c.msld.request("transpose");
    q.buffer(bytesOf(in)).buffer(std::string(), true, 4ull * N * N).buffer(bytesOf(N))
        .groups(N / kTransTile, N / kTransTile).threads(kTransTile, kTransRows);
    auto out = c.msld.run(q, c.runs, row.msld);
    check(row.msld, "msld", ok, out.empty() ? nullptr : out[0].data());
  }
  pocled(c, row.pocl, [&](Pocl &p) {
    cl_mem bi = p.buffer(in.data(), 4ull * N * N), bo = p.buffer(nullptr, 4ull * N * N);
    size_t g[2] = {N, N / (kTransTile / kTransRows)}, l[2] = {kTransTile, kTransRows};
    row.pocl.bestNs = p.run("transpose", {bi, bo, N}, 2, g, l, c.runs);
    std::vector<float> out(size_t(N) * N);
    p.read(bo, out.data(), 4ull * N * N);
    check(row.pocl, "PoCL", ok, out.data());
  });
  std::vector<float> out(size_t(N) * N);
  row.cpp.bestNs = timeNative(c.runs, [&] { nativeTranspose(c.threads, in.data(), out.data(), N); });
  check(row.cpp, "C++", ok, out.data());
  return row;
}

Row softmaxRow(Context &c) {
  Row row{"row softmax, simd_max + simd_sum", "4096x1024"};
  const uint32_t rows = kSoftmaxRows, cols = kSoftmaxCols;
  const size_t n = size_t(rows) * cols;
  row.work = 2.0 * 4 * n;
  auto in = randomFloats(n, 61);
  for (auto &x : in)
    x *= 8.0f; // exponents over [-16, 0] after the max is taken off
  std::vector<double> ref(n);
  for (uint32_t r = 0; r < rows; ++r) {
    const float *x = &in[size_t(r) * cols];
    double m = -INFINITY, s = 0;
    for (uint32_t i = 0; i < cols; ++i)
      m = std::max(m, double(x[i]));
    for (uint32_t i = 0; i < cols; ++i)
      s += std::exp(double(x[i]) - m);
    for (uint32_t i = 0; i < cols; ++i)
      ref[size_t(r) * cols + i] = std::exp(double(x[i]) - m) / s;
  }
  // Fast-math exp (a few ULP) and a float sum of 1024 terms: 1e-4 relative.
  Check ok = [&](const void *p) -> std::string {
    const float *y = static_cast<const float *>(p);
    for (size_t i = 0; i < n; ++i)
      if (!(std::fabs(y[i] - ref[i]) <= 1e-4 * ref[i] + 1e-12))
        return "y[" + std::to_string(i) + "] = " + std::to_string(y[i]) + ", expected " + std::to_string(ref[i]);
    return "";
  };
  {
    auto q = c.msld.request("softmax");
    q.buffer(bytesOf(in)).buffer(std::string(), true, 4 * n).buffer(bytesOf(cols)).groups(rows).threads(kSoftmaxLanes);
    auto out = c.msld.run(q, c.runs, row.msld);
    check(row.msld, "msld", ok, out.empty() ? nullptr : out[0].data());
  }
  pocled(c, row.pocl, [&](Pocl &p) {
    cl_mem bi = p.buffer(in.data(), 4 * n), bo = p.buffer(nullptr, 4 * n);
    size_t g = size_t(rows) * kSoftmaxLanes, l = kSoftmaxLanes;
    row.pocl.bestNs = p.run("softmax", {bi, bo, cols}, 1, &g, &l, c.runs);
    std::vector<float> out(n);
    p.read(bo, out.data(), 4 * n);
    check(row.pocl, "PoCL", ok, out.data());
  });
  std::vector<float> out(n);
  row.cpp.bestNs = timeNative(c.runs, [&] { nativeSoftmax(c.threads, in.data(), out.data(), rows, cols); });
  check(row.cpp, "C++", ok, out.data());
  return row;
}

// ---- output -------------------------------------------------------------------

std::string fmtTime(const Result &r) {
  if (!r.error.empty())
    return "FAILED";
  char b[32];
  double ms = r.bestNs / 1e6;
  std::snprintf(b, sizeof b, ms >= 100 ? "%.0f ms" : ms >= 10 ? "%.1f ms" : "%.2f ms", ms);
  return b;
}
std::string fmtRatio(const Result &msld, const Result &other) {
  if (!msld.error.empty() || !other.error.empty() || msld.bestNs <= 0 || other.bestNs <= 0)
    return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.2fx", other.bestNs / msld.bestNs);
  return b;
}
// The median of the rounds' msld/PoCL ratios, with the lowest and highest.
std::string fmtRoundRatios(std::vector<double> r) {
  if (r.empty())
    return "-";
  std::sort(r.begin(), r.end());
  const size_t n = r.size();
  const double median = n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
  char b[48];
  std::snprintf(b, sizeof b, "%.2fx (%.2f-%.2f)", median, r.front(), r.back());
  return b;
}
std::string fmtRate(const Row &r) {
  if (!r.msld.error.empty() || r.msld.bestNs <= 0)
    return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.1f %s", r.work / r.msld.bestNs, r.unit);
  return b;
}

std::string cpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0)
      return line.substr(line.find(':') + 2);
  return "unknown CPU";
}
std::string loadAverage() {
  std::ifstream in("/proc/loadavg");
  double a = 0, b = 0, c = 0;
  in >> a >> b >> c;
  char s[64];
  std::snprintf(s, sizeof s, "%.2f %.2f %.2f", a, b, c);
  return s;
}

// The row `rows` times in turn; each implementation's best time (and its
// first error).
void addRoundRatio(Row &into, const Row &round) {
  if (round.msld.error.empty() && round.pocl.error.empty() && round.msld.bestNs > 0 && round.pocl.bestNs > 0)
    into.roundRatios.push_back(round.pocl.bestNs / round.msld.bestNs);
}

Row bestOfRounds(unsigned rounds, Row (*row)(Context &), Context &c) {
  Row best = row(c);
  addRoundRatio(best, best);
  for (unsigned k = 1; k < rounds; ++k) {
    Row next = row(c);
    addRoundRatio(best, next);
    for (auto [b, n] : {std::pair{&best.msld, &next.msld}, {&best.pocl, &next.pocl}, {&best.cpp, &next.cpp}}) {
      if (b->error.empty() && !n->error.empty())
        b->error = n->error;
      if (n->bestNs > 0 && (b->bestNs == 0 || n->bestNs < b->bestNs))
        b->bestNs = n->bestNs;
    }
  }
  return best;
}

} // namespace

int main(int argc, char **argv) {
  unsigned timed = 10, rounds = 1;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc)
      timed = unsigned(std::max(1, std::atoi(argv[++i])));
    else if (a == "--rounds" && i + 1 < argc)
      rounds = unsigned(std::max(1, std::atoi(argv[++i])));
    else if (a == "--only" && i + 1 < argc)
      only.push_back(argv[++i]);
    else if (a == "--help" || a == "-h") {
      std::printf("usage: msl-bench-cpu [--runs N] [--rounds K] [--only saxpy|sgemm|reduce|histogram|transpose|softmax]...\n"
                  "  each kernel: 1 warm-up + N timed runs per implementation (default N=10), best shown;\n"
                  "  K rounds (default 1) of that, the implementations taking turns\n");
      return 0;
    } else
      die("unknown argument " + a + " (see --help)");
  }
  const std::string loadBefore = loadAverage();

  Msld msld;
  std::optional<Pocl> pocl;
  std::string poclError;
  try {
    pocl.emplace();
  } catch (const std::exception &e) {
    poclError = std::string("PoCL: ") + e.what();
  }
  Context c{msld, pocl ? &*pocl : nullptr, poclError, timed + 1, std::max(1u, std::thread::hardware_concurrency())};

  auto wanted = [&](const char *name) { return only.empty() || std::find(only.begin(), only.end(), name) != only.end(); };
  std::vector<Row> rows;
  if (wanted("saxpy"))
    rows.push_back(bestOfRounds(rounds, saxpyRow, c));
  if (wanted("sgemm"))
    rows.push_back(bestOfRounds(rounds, sgemmRow, c));
  if (wanted("reduce"))
    rows.push_back(bestOfRounds(rounds, reduceRow, c));
  if (wanted("histogram"))
    rows.push_back(bestOfRounds(rounds, histogramRow, c));
  if (wanted("transpose"))
    rows.push_back(bestOfRounds(rounds, transposeRow, c));
  if (wanted("softmax"))
    rows.push_back(bestOfRounds(rounds, softmaxRow, c));

  std::printf("Machine: %s, %u logical cores; load average %s at start, %s at end\n", cpuModel().c_str(),
              std::thread::hardware_concurrency(), loadBefore.c_str(), loadAverage().c_str());
  std::printf("msld CPU device: %u threads, JIT for %s (in-process CpuDevice, dispatch_time_ns)\n", msld.threads(),
              msl::executor::CpuDevice::hostCpu().c_str());
  if (pocl)
    std::printf("PoCL: %s, device %s, %u compute units (-cl-fast-relaxed-math; event profiling)\n",
                pocl->version().c_str(), pocl->deviceName().c_str(), pocl->computeUnits());
  else
    std::printf("%s\n", poclError.c_str());
  std::printf("C++: -O3 -march=native, %u std::threads (wall clock)\n", c.threads);
  std::printf("Best of %u runs after 1 warm-up, in %u rounds taken in turn; ratios are speed (>1: msld faster); \"by "
              "round\": the median (lowest-highest) of each round's msld/PoCL; every output checked.\n\n",
              timed, rounds);

  std::printf("| %-36s | %-12s | %10s | %10s | %10s | %9s | %-22s | %9s | %14s |\n", "kernel", "size", "msld CPU",
              "PoCL", "C++ -O3", "msld/PoCL", "msld/PoCL by round", "msld/C++", "msld rate");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(38, '-').c_str(), std::string(14, '-').c_str(),
              std::string(11, '-').append(":").c_str(), std::string(11, '-').append(":").c_str(),
              std::string(11, '-').append(":").c_str(), std::string(10, '-').append(":").c_str(),
              std::string(24, '-').c_str(), std::string(10, '-').append(":").c_str(),
              std::string(15, '-').append(":").c_str());
  bool failed = false;
  std::vector<std::string> errors;
  for (const Row &r : rows) {
    std::printf("| %-36s | %-12s | %10s | %10s | %10s | %9s | %-22s | %9s | %14s |\n", r.name.c_str(),
                r.size.c_str(), fmtTime(r.msld).c_str(), fmtTime(r.pocl).c_str(), fmtTime(r.cpp).c_str(),
                fmtRatio(r.msld, r.pocl).c_str(), fmtRoundRatios(r.roundRatios).c_str(),
                fmtRatio(r.msld, r.cpp).c_str(), fmtRate(r).c_str());
    for (const Result *res : {&r.msld, &r.pocl, &r.cpp})
      if (!res->error.empty()) {
        failed = true;
        errors.push_back(r.name + ": " + res->error);
      }
  }
  for (const auto &e : errors)
    std::printf("  %s\n", e.c_str());
  return failed ? 1 : 0;
}
