// msl-bench-gpu: the kernels of bench/cpu/kernels.metal on an NVIDIA GPU,
// msld's PTX (compiled here by msld's compiler for sm_90, JIT-linked by the
// driver the way msld-cuda-worker links it: cuLink, optimization level 4)
// beside the same algorithms in CUDA (kernels.cu, nvcc -O3 -arch=sm_90
// -cubin), both loaded and launched through the driver API on one stream,
// each launch timed with CUDA events around it; the median of --runs
// launches after one warm-up. Every output is checked against a host
// reference. Also: the device-to-device copy bandwidth (cuMemcpyDtoD,
// bytes read + written), the bandwidth-bound kernels as % of it, and the
// direct driver-API cost of what msld's Execute does for a 1 MiB copy
// kernel (allocate, copy in, launch, copy out, free), for comparison with
// the RPC (msl-bench-gpu-exec, its result file given with --rpc-result).
//
// Built and run on the GPU machine by scripts/gpu-bench.sh (needs cuda.h and
// libcuda; no msld library).
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *msg = nullptr;
    cuGetErrorString(r, &msg);
    std::fprintf(stderr, "msl-bench-gpu: %s: %s\n", what, msg ? msg : "?");
    std::exit(2);
  }
}
#define CK(x) check((x), #x)

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "msl-bench-gpu: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// msld's PTX linked as msld-cuda-worker links it (CudaDevice.cpp).
CUmodule linkPtx(const std::string &ptx) {
  std::string log(8192, '\0');
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {log.data(), reinterpret_cast<void *>(uintptr_t(log.size() - 1)),
                    reinterpret_cast<void *>(uintptr_t(4))};
  CUlinkState state;
  CK(cuLinkCreate(3, options, values, &state));
  std::string text = ptx + '\0';
  CUresult r = cuLinkAddData(state, CU_JIT_INPUT_PTX, text.data(), text.size(), "kernel.ptx", 0, nullptr, nullptr);
  void *image = nullptr;
  size_t size = 0;
  if (r == CUDA_SUCCESS)
    r = cuLinkComplete(state, &image, &size);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "msl-bench-gpu: linking msld's PTX failed: %s\n", log.c_str());
    std::exit(2);
  }
  // MSL_BENCH_GPU_JIT_DUMP=FILE keeps the driver's cubin, for cuobjdump:
  // the SASS that runs, which an offline ptxas of the PTX need not match.
  if (const char *dump = std::getenv("MSL_BENCH_GPU_JIT_DUMP"))
    if (FILE *f = std::fopen(dump, "wb")) {
      std::fwrite(image, 1, size, f);
      std::fclose(f);
    }
  CUmodule m;
  CK(cuModuleLoadData(&m, image));
  cuLinkDestroy(state);
  return m;
}

CUfunction fn(CUmodule m, const char *name) {
  CUfunction f;
  if (cuModuleGetFunction(&f, m, name) != CUDA_SUCCESS) {
    std::fprintf(stderr, "msl-bench-gpu: no kernel %s\n", name);
    std::exit(2);
  }
  return f;
}

struct Dim {
  unsigned x, y = 1, z = 1;
};

// msld's entry takes, after one value per slot, the launch block
// (compiler/EntryPoints.h): origin, threads per threadgroup, grid threads,
// threadgroups.
struct LaunchBlock {
  uint32_t w[12];
};
LaunchBlock launchBlock(Dim groups, Dim block) {
  return {{0, 0, 0, block.x, block.y, block.z, groups.x * block.x, groups.y * block.y, groups.z * block.z, groups.x,
           groups.y, groups.z}};
}

CUstream stream;

// One launch's time in ms, with events around it on the stream.
std::vector<double> timeLaunches(CUfunction f, Dim groups, Dim block, void **params, unsigned runs) {
  std::vector<CUevent> ev(2 * (runs + 1));
  for (auto &e : ev)
    CK(cuEventCreate(&e, CU_EVENT_DEFAULT));
  for (unsigned i = 0; i <= runs; ++i) {
    CK(cuEventRecord(ev[2 * i], stream));
    CK(cuLaunchKernel(f, groups.x, groups.y, groups.z, block.x, block.y, block.z, 0, stream, params, nullptr));
    CK(cuEventRecord(ev[2 * i + 1], stream));
  }
  CK(cuStreamSynchronize(stream));
  std::vector<double> ms;
  for (unsigned i = 1; i <= runs; ++i) { // the first is a warm-up
    float t = 0;
    CK(cuEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]));
    ms.push_back(t);
  }
  for (auto &e : ev)
    cuEventDestroy(e);
  return ms;
}

void launchOnce(CUfunction f, Dim groups, Dim block, void **params) {
  CK(cuLaunchKernel(f, groups.x, groups.y, groups.z, block.x, block.y, block.z, 0, stream, params, nullptr));
  CK(cuStreamSynchronize(stream));
}

struct Buffer {
  CUdeviceptr p = 0;
  size_t bytes = 0;
  explicit Buffer(size_t n) : bytes(n) { CK(cuMemAlloc(&p, n)); }
  template <typename T> Buffer(const std::vector<T> &v) : Buffer(v.size() * sizeof(T)) { upload(v); }
  ~Buffer() { cuMemFree(p); }
  template <typename T> void upload(const std::vector<T> &v) { CK(cuMemcpyHtoD(p, v.data(), v.size() * sizeof(T))); }
  template <typename T> std::vector<T> download() const {
    std::vector<T> v(bytes / sizeof(T));
    CK(cuMemcpyDtoH(v.data(), p, bytes));
    return v;
  }
  void zero() { CK(cuMemsetD8(p, 0, bytes)); }
};

std::vector<float> randomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto &x : v)
    x = dist(rng);
  return v;
}

struct Impl {
  const char *name;
  CUmodule module;
  bool msld; // msld's calling convention (scalars by pointer, launch block)
};

struct Cell {
  double ms = 0;
  std::string error;
};

struct Row {
  std::string kernel, size;
  double bytes = 0, flops = 0; // moved / computed by one launch
  bool bandwidthBound = false;
  std::vector<Cell> cells; // per Impl
};

// Runs `kernel` on each implementation: set up (fresh data), one launch
// checked, then the timed launches.
struct Case {
  std::string name;
  Dim groups, block;
  // Fresh inputs; returns the parameter array for the implementation.
  std::function<std::vector<void *>(const Impl &)> setup;
  std::function<std::string()> verify; // after exactly one launch
};

unsigned gRuns = 50;

Cell runCase(const Impl &impl, Case &c) {
  Cell cell;
  CUfunction f = fn(impl.module, c.name.c_str());
  std::vector<void *> params = c.setup(impl);
  launchOnce(f, c.groups, c.block, params.data());
  cell.error = c.verify();
  params = c.setup(impl);
  cell.ms = median(timeLaunches(f, c.groups, c.block, params.data(), gRuns));
  return cell;
}

std::string fmtMs(double ms) {
  char b[32];
  if (ms >= 1)
    std::snprintf(b, sizeof b, "%.3f ms", ms);
  else
    std::snprintf(b, sizeof b, "%.1f us", ms * 1000);
  return b;
}

} // namespace

int main(int argc, char **argv) {
  std::string ptxPath, cubinPath, restrictCubinPath, pointerCubinPath, copyPtxPath, rpcResultPath;
  std::string msldPtxasCubinPath, nvccPtxPath; // which compiler of PTX to SASS makes a difference
  unsigned copyCalls = 300;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "msl-bench-gpu: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--ptx") ptxPath = next();
    else if (a == "--cubin") cubinPath = next();
    else if (a == "--cubin-restrict") restrictCubinPath = next();
    else if (a == "--cubin-scalar-ptr") pointerCubinPath = next();
    else if (a == "--cubin-msld-ptxas") msldPtxasCubinPath = next();
    else if (a == "--ptx-nvcc") nvccPtxPath = next();
    else if (a == "--copy-ptx") copyPtxPath = next();
    else if (a == "--rpc-result") rpcResultPath = next();
    else if (a == "--runs") gRuns = unsigned(std::max(1, std::atoi(next().c_str())));
    else if (a == "--copy-calls") copyCalls = unsigned(std::max(1, std::atoi(next().c_str())));
    else {
      std::fprintf(stderr,
                   "usage: msl-bench-gpu --ptx MSLD.ptx --cubin NVCC.cubin [--cubin-restrict NVCC.cubin] [--cubin-scalar-ptr NVCC.cubin] "
                   "[--cubin-msld-ptxas MSLD.cubin] [--ptx-nvcc NVCC.ptx] [--copy-ptx COPY.ptx] [--rpc-result FILE] [--runs N] [--copy-calls N]\n");
      return 2;
    }
  }
  if (ptxPath.empty() || cubinPath.empty()) {
    std::fprintf(stderr, "msl-bench-gpu: --ptx and --cubin are needed\n");
    return 2;
  }
  CK(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  char devName[256] = {};
  cuDeviceGetName(devName, sizeof devName - 1, dev);
  int driver = 0, sms = 0, clockKhz = 0, memClockKhz = 0, busWidth = 0;
  cuDriverGetVersion(&driver);
  cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
  cuDeviceGetAttribute(&clockKhz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  cuDeviceGetAttribute(&memClockKhz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev);
  cuDeviceGetAttribute(&busWidth, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev);

  std::vector<Impl> impls;
  impls.push_back({"msld", linkPtx(readFile(ptxPath)), true});
  CUmodule nvcc;
  CK(cuModuleLoadData(&nvcc, readFile(cubinPath).c_str()));
  impls.push_back({"nvcc", nvcc, false});
  if (!restrictCubinPath.empty()) {
    CUmodule r;
    CK(cuModuleLoadData(&r, readFile(restrictCubinPath).c_str()));
    impls.push_back({"nvcc restrict", r, false});
  }
  if (!pointerCubinPath.empty()) {
    CUmodule r;
    CK(cuModuleLoadData(&r, readFile(pointerCubinPath).c_str()));
    impls.push_back({"nvcc scalars by pointer", r, true}); // msld's parameters
  }
  // The same PTX through the other PTX-to-SASS compiler: msld's PTX through
  // the toolkit's ptxas, nvcc's through the driver's JIT (as msld's runs).
  if (!msldPtxasCubinPath.empty()) {
    CUmodule r;
    CK(cuModuleLoadData(&r, readFile(msldPtxasCubinPath).c_str()));
    impls.push_back({"msld PTX, ptxas", r, true});
  }
  if (!nvccPtxPath.empty())
    impls.push_back({"nvcc PTX, driver JIT", linkPtx(readFile(nvccPtxPath)), false});
  for (const Impl &impl : impls) {
    // Registers and shared memory of each kernel, as the driver sees them.
    for (const char *k : {"saxpy", "sgemm", "reduce", "histogram", "transpose", "softmax"}) {
      CUfunction f = fn(impl.module, k);
      int regs = 0, shared = 0, local = 0;
      cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
      cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f);
      cuFuncGetAttribute(&local, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
      std::fprintf(stderr, "%-14s %-10s regs %3d, shared %5d B, local %d B\n", impl.name, k, regs, shared, local);
    }
  }

  // ---- device-to-device copy bandwidth -------------------------------------
  double copyGBs = 0;
  {
    const size_t bytes = size_t(1) << 30;
    Buffer a(bytes), b(bytes);
    a.zero();
    std::vector<double> ms;
    CUevent e0, e1;
    CK(cuEventCreate(&e0, 0));
    CK(cuEventCreate(&e1, 0));
    for (unsigned i = 0; i <= 20; ++i) {
      CK(cuEventRecord(e0, stream));
      CK(cuMemcpyDtoDAsync(b.p, a.p, bytes, stream));
      CK(cuEventRecord(e1, stream));
      CK(cuEventSynchronize(e1));
      float t;
      CK(cuEventElapsedTime(&t, e0, e1));
      if (i)
        ms.push_back(t);
    }
    copyGBs = 2.0 * bytes / (median(ms) * 1e-3) / 1e9;
    std::printf("device: %s, %d SMs, SM clock %d MHz, memory clock %d MHz, bus %d bit, driver CUDA %d.%d\n", devName,
                sms, clockKhz / 1000, memClockKhz / 1000, busWidth, driver / 1000, driver % 1000 / 10);
    std::printf("cuMemcpyDtoD of 1 GiB: median %.3f ms over 20 = %.0f GB/s (bytes read + written)\n\n", median(ms),
                copyGBs);
  }

  // The copy bandwidth at a kernel's own footprint (a DtoD of half its
  // bytes reads and writes them all), for the bandwidth-bound rows.
  auto copyGBsAt = [&](double kernelBytes) {
    size_t bytes = size_t(kernelBytes / 2) / 256 * 256;
    Buffer a(bytes), b(bytes);
    a.zero();
    CUevent e0, e1;
    CK(cuEventCreate(&e0, 0));
    CK(cuEventCreate(&e1, 0));
    std::vector<double> ms;
    for (unsigned i = 0; i <= 50; ++i) {
      CK(cuEventRecord(e0, stream));
      CK(cuMemcpyDtoDAsync(b.p, a.p, bytes, stream));
      CK(cuEventRecord(e1, stream));
      CK(cuEventSynchronize(e1));
      float t;
      CK(cuEventElapsedTime(&t, e0, e1));
      if (i)
        ms.push_back(t);
    }
    cuEventDestroy(e0);
    cuEventDestroy(e1);
    return 2.0 * bytes / (median(ms) * 1e-3) / 1e9;
  };

  std::vector<Row> rows;
  auto addRow = [&](Row row, Case c) {
    for (const Impl &impl : impls)
      row.cells.push_back(runCase(impl, c));
    rows.push_back(std::move(row));
  };

  // ---- saxpy ---------------------------------------------------------------
  {
    const uint32_t n = 1u << 24;
    const float a = 1.75f;
    auto x = randomFloats(n, 11), y0 = randomFloats(n, 12);
    Buffer bx(x), by(y0), ba(std::vector<float>{a}), bn(std::vector<uint32_t>{n});
    static LaunchBlock lb;
    static CUdeviceptr px, py, pa, pn;
    static float va;
    static uint32_t vn;
    px = bx.p, py = by.p, pa = ba.p, pn = bn.p, va = a, vn = n;
    Case c{"saxpy", {n / 256}, {256}, nullptr, nullptr};
    lb = launchBlock(c.groups, c.block);
    c.setup = [&](const Impl &impl) -> std::vector<void *> {
      by.upload(y0);
      if (impl.msld)
        return {&px, &py, &pa, &pn, &lb};
      return {&px, &py, &va, &vn};
    };
    c.verify = [&]() -> std::string {
      auto y = by.download<float>();
      for (uint32_t i = 0; i < n; ++i)
        if (y[i] != std::fma(a, x[i], y0[i]))
          return "y[" + std::to_string(i) + "] wrong";
      return "";
    };
    addRow({"saxpy", "2^24 floats", 12.0 * n, 2.0 * n, true}, c);
  }
  // ---- sgemm ---------------------------------------------------------------
  {
    const uint32_t N = 1024;
    auto A = randomFloats(size_t(N) * N, 21), B = randomFloats(size_t(N) * N, 22);
    Buffer bA(A), bB(B), bC(size_t(N) * N * 4), bN(std::vector<uint32_t>{N});
    static LaunchBlock lb;
    static CUdeviceptr pA, pB, pC, pN;
    static uint32_t vN;
    pA = bA.p, pB = bB.p, pC = bC.p, pN = bN.p, vN = N;
    Case c{"sgemm", {N / 16, N / 16}, {16, 16}, nullptr, nullptr};
    lb = launchBlock(c.groups, c.block);
    c.setup = [&](const Impl &impl) -> std::vector<void *> {
      bC.zero();
      if (impl.msld)
        return {&pA, &pB, &pC, &pN, &lb};
      return {&pA, &pB, &pC, &vN};
    };
    c.verify = [&]() -> std::string {
      auto C = bC.download<float>();
      std::mt19937 rng(23);
      for (int s = 0; s < 4096; ++s) {
        uint32_t i = rng() % N, j = rng() % N;
        double acc = 0, mag = 0;
        for (uint32_t k = 0; k < N; ++k) {
          double p = double(A[size_t(i) * N + k]) * B[size_t(k) * N + j];
          acc += p;
          mag += std::fabs(p);
        }
        if (!(std::fabs(C[size_t(i) * N + j] - acc) <= 1e-5 * mag + 1e-6))
          return "C[" + std::to_string(i) + "][" + std::to_string(j) + "] wrong";
      }
      return "";
    };
    addRow({"sgemm, 16x16 threadgroup tiles", "1024x1024", 0, 2.0 * N * N * N, false}, c);
  }
  // ---- reduce --------------------------------------------------------------
  {
    const uint32_t n = 1u << 26, chunk = 256 * 16, groups = n / chunk;
    auto in = randomFloats(n, 31);
    Buffer bin(in), bout(size_t(groups) * 4);
    static LaunchBlock lb;
    static CUdeviceptr pi, po;
    pi = bin.p, po = bout.p;
    Case c{"reduce", {groups}, {256}, nullptr, nullptr};
    lb = launchBlock(c.groups, c.block);
    c.setup = [&](const Impl &impl) -> std::vector<void *> {
      bout.zero();
      if (impl.msld)
        return {&pi, &po, &lb};
      return {&pi, &po};
    };
    c.verify = [&]() -> std::string {
      auto p = bout.download<float>();
      for (uint32_t g = 0; g < groups; ++g) {
        double ref = 0, mag = 0;
        for (uint32_t i = g * chunk; i < (g + 1) * chunk; ++i) {
          ref += in[i];
          mag += std::fabs(in[i]);
        }
        if (!(std::fabs(p[g] - ref) <= 1e-5 * mag + 1e-6))
          return "partial[" + std::to_string(g) + "] wrong";
      }
      return "";
    };
    addRow({"reduce, tree + per-group partials", "2^26 floats", 4.0 * n, 1.0 * n, true}, c);
  }
  // ---- histogram -----------------------------------------------------------
  {
    const uint32_t n = 1u << 24, groups = n / (256 * 64);
    std::mt19937 rng(41);
    std::vector<uint8_t> data(n);
    for (auto &d : data)
      d = uint8_t((rng() % 256 + rng() % 256) / 2);
    std::vector<uint32_t> ref(256, 0);
    for (auto d : data)
      ++ref[d];
    Buffer bd(data), bb(256 * 4);
    static LaunchBlock lb;
    static CUdeviceptr pd, pb;
    pd = bd.p, pb = bb.p;
    Case c{"histogram", {groups}, {256}, nullptr, nullptr};
    lb = launchBlock(c.groups, c.block);
    c.setup = [&](const Impl &impl) -> std::vector<void *> {
      bb.zero();
      if (impl.msld)
        return {&pd, &pb, &lb};
      return {&pd, &pb};
    };
    c.verify = [&]() -> std::string {
      auto bins = bb.download<uint32_t>();
      for (int v = 0; v < 256; ++v)
        if (bins[v] != ref[v])
          return "bin " + std::to_string(v) + " wrong";
      return "";
    };
    addRow({"histogram, 256 bins, atomics", "2^24 bytes", 1.0 * n, 0, true}, c);
  }
  // ---- transpose -----------------------------------------------------------
  {
    const uint32_t N = 4096;
    auto in = randomFloats(size_t(N) * N, 51);
    Buffer bi(in), bo(size_t(N) * N * 4), bN(std::vector<uint32_t>{N});
    static LaunchBlock lb;
    static CUdeviceptr pi, po, pN;
    static uint32_t vN;
    pi = bi.p, po = bo.p, pN = bN.p, vN = N;
    Case c{"transpose", {N / 32, N / 32}, {32, 8}, nullptr, nullptr};
    lb = launchBlock(c.groups, c.block);
    c.setup = [&](const Impl &impl) -> std::vector<void *> {
      bo.zero();
      if (impl.msld)
        return {&pi, &po, &pN, &lb};
      return {&pi, &po, &vN};
    };
    c.verify = [&]() -> std::string {
      auto out = bo.download<float>();
      for (uint32_t i = 0; i < N; ++i)
        for (uint32_t j = 0; j < N; ++j)
          if (out[size_t(j) * N + i] != in[size_t(i) * N + j])
            return "out[" + std::to_string(j) + "][" + std::to_string(i) + "] wrong";
      return "";
    };
    addRow({"transpose, 32x32 threadgroup tiles", "4096x4096", 8.0 * N * N, 0, true}, c);
  }
  // ---- softmax -------------------------------------------------------------
  {
    const uint32_t rowsN = 4096, cols = 1024;
    const size_t n = size_t(rowsN) * cols;
    auto in = randomFloats(n, 61);
    for (auto &x : in)
      x *= 8.0f;
    Buffer bi(in), bo(n * 4), bc(std::vector<uint32_t>{cols});
    static LaunchBlock lb;
    static CUdeviceptr pi, po, pc;
    static uint32_t vc;
    pi = bi.p, po = bo.p, pc = bc.p, vc = cols;
    Case c{"softmax", {rowsN}, {32}, nullptr, nullptr};
    lb = launchBlock(c.groups, c.block);
    c.setup = [&](const Impl &impl) -> std::vector<void *> {
      bo.zero();
      if (impl.msld)
        return {&pi, &po, &pc, &lb};
      return {&pi, &po, &vc};
    };
    c.verify = [&]() -> std::string {
      auto y = bo.download<float>();
      for (uint32_t r = 0; r < rowsN; ++r) {
        const float *x = &in[size_t(r) * cols];
        double m = -INFINITY, s = 0;
        for (uint32_t i = 0; i < cols; ++i)
          m = std::max(m, double(x[i]));
        for (uint32_t i = 0; i < cols; ++i)
          s += std::exp(double(x[i]) - m);
        for (uint32_t i = 0; i < cols; ++i) {
          double want = std::exp(double(x[i]) - m) / s;
          if (!(std::fabs(y[size_t(r) * cols + i] - want) <= 1e-4 * want + 1e-12))
            return "y[" + std::to_string(r) + "][" + std::to_string(i) + "] wrong";
        }
      }
      return "";
    };
    addRow({"row softmax, simd_max + simd_sum", "4096x1024", 8.0 * n, 0, true}, c);
  }

  // ---- the table -----------------------------------------------------------
  std::printf("median of %u launches after one warm-up, CUDA events around each launch\n\n", gRuns);
  std::printf("| kernel | size |");
  for (const Impl &impl : impls)
    std::printf(" %s |", impl.name);
  for (size_t i = 1; i < impls.size(); ++i)
    std::printf(" msld/%s |", impls[i].name);
  std::printf(" msld rate | msld %% of copy BW | nvcc %% of copy BW | copy of the same bytes | msld %% of it |\n|---|---|");
  for (size_t i = 0; i < impls.size(); ++i)
    std::printf("---:|");
  for (size_t i = 1; i < impls.size(); ++i)
    std::printf("---:|");
  std::printf("---:|---:|---:|---:|---:|\n");
  bool allOk = true;
  for (const Row &r : rows) {
    std::printf("| %s | %s |", r.kernel.c_str(), r.size.c_str());
    for (const Cell &c : r.cells) {
      if (!c.error.empty()) {
        std::printf(" WRONG (%s) |", c.error.c_str());
        allOk = false;
      } else {
        std::printf(" %s |", fmtMs(c.ms).c_str());
      }
    }
    // Speed ratio: > 1 means msld is faster.
    for (size_t i = 1; i < r.cells.size(); ++i)
      std::printf(" %.3fx |", r.cells[i].ms / r.cells[0].ms);
    double s = r.cells[0].ms * 1e-3;
    if (r.flops > 0 && r.bytes == 0)
      std::printf(" %.0f GFLOP/s |", r.flops / s / 1e9);
    else
      std::printf(" %.0f GB/s |", r.bytes / s / 1e9);
    if (r.bandwidthBound) {
      double same = copyGBsAt(r.bytes);
      std::printf(" %.0f%% | %.0f%% | %.0f GB/s | %.0f%% |\n", 100 * r.bytes / s / 1e9 / copyGBs,
                  100 * r.bytes / (r.cells[1].ms * 1e-3) / 1e9 / copyGBs, same, 100 * r.bytes / s / 1e9 / same);
    } else {
      std::printf(" - | - | - | - |\n");
    }
  }
  std::printf("\nratios are speed (nvcc time / msld time): > 1 means msld is faster; rates count the bytes each "
              "kernel must read and write once\n");

  // ---- what Execute does for the copy kernel, directly ----------------------
  if (!copyPtxPath.empty()) {
    CUmodule m = linkPtx(readFile(copyPtxPath));
    CUfunction f = fn(m, "copy_buffer");
    const uint32_t n = 262144; // 1 MiB of floats
    std::vector<float> in(n), out(n);
    for (uint32_t i = 0; i < n; ++i)
      in[i] = float(i) * 0.25f - 1000.0f;
    Dim groups{n / 256}, block{256};
    LaunchBlock lb = launchBlock(groups, block);
    // As CudaDevice::execute: allocate (msld keeps its allocations for the
    // next request of the same sizes: the second variant), copy in
    // (pageable) and zero the output on the stream, events around the
    // launch, synchronize, copy out, free.
    // The host side from pageable memory (`in`, `out`) or, the fastest a
    // direct caller can have, from page-locked memory allocated once.
    float *pinnedIn = nullptr, *pinnedOut = nullptr;
    CK(cuMemAllocHost(reinterpret_cast<void **>(&pinnedIn), n * 4));
    CK(cuMemAllocHost(reinterpret_cast<void **>(&pinnedOut), n * 4));
    std::memcpy(pinnedIn, in.data(), n * 4);
    auto call = [&](bool allocate, CUdeviceptr &di, CUdeviceptr &dout, double &kernelUs, bool pinned = false) {
      const float *src = pinned ? pinnedIn : in.data();
      float *dst = pinned ? pinnedOut : out.data();
      auto t0 = Clock::now();
      if (allocate) {
        CK(cuMemAlloc(&di, n * 4));
        CK(cuMemAlloc(&dout, n * 4));
      }
      CK(cuMemcpyHtoDAsync(di, src, n * 4, stream));
      CK(cuMemsetD8Async(dout, 0, n * 4, stream));
      CUevent e0, e1;
      CK(cuEventCreate(&e0, 0));
      CK(cuEventCreate(&e1, 0));
      void *params[] = {&di, &dout, &lb};
      CK(cuEventRecord(e0, stream));
      CK(cuLaunchKernel(f, groups.x, 1, 1, block.x, 1, 1, 0, stream, params, nullptr));
      CK(cuEventRecord(e1, stream));
      CK(cuStreamSynchronize(stream));
      float ms = 0;
      CK(cuEventElapsedTime(&ms, e0, e1));
      kernelUs = ms * 1e3;
      cuEventDestroy(e0);
      cuEventDestroy(e1);
      CK(cuMemcpyDtoH(dst, dout, n * 4));
      if (allocate) {
        cuMemFree(di);
        cuMemFree(dout);
      }
      double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      if (std::memcmp(dst, in.data(), n * 4) != 0) {
        std::fprintf(stderr, "msl-bench-gpu: copy_buffer output differs\n");
        std::exit(1);
      }
      return us;
    };
    std::map<std::string, double> rpc;
    if (!rpcResultPath.empty()) {
      std::ifstream rf(rpcResultPath);
      std::string key;
      double value;
      while (rf >> key >> value)
        rpc[key] = value;
    }
    std::vector<double> withAlloc, noAlloc, pinnedNoAlloc, kernelA, kernelB, kernelC;
    CUdeviceptr di = 0, dout = 0;
    double k;
    for (int i = 0; i < 10; ++i)
      call(true, di, dout, k);
    for (unsigned i = 0; i < copyCalls; ++i) {
      withAlloc.push_back(call(true, di, dout, k));
      kernelA.push_back(k);
    }
    CK(cuMemAlloc(&di, n * 4));
    CK(cuMemAlloc(&dout, n * 4));
    for (unsigned i = 0; i < copyCalls; ++i) {
      noAlloc.push_back(call(false, di, dout, k));
      kernelB.push_back(k);
    }
    for (unsigned i = 0; i < copyCalls; ++i) {
      pinnedNoAlloc.push_back(call(false, di, dout, k, true));
      kernelC.push_back(k);
    }
    std::printf("\nExecute overhead: copy_buffer (bench/gpu/copy.metal, msld's PTX), 1 MiB in + 1 MiB out, "
                "wall time per call, median of %u\n\n",
                copyCalls);
    std::printf("| what | p50 | kernel p50 (events) |\n|---|---:|---:|\n");
    std::printf("| direct driver API: alloc, HtoD 1 MiB, memset, launch, sync, DtoH 1 MiB, free | %.1f us | %.1f us |\n",
                median(withAlloc), median(kernelA));
    std::printf("| direct driver API, buffers allocated once | %.1f us | %.1f us |\n", median(noAlloc),
                median(kernelB));
    std::printf("| direct driver API, buffers allocated once, host side page-locked (cuMemAllocHost) | %.1f us | "
                "%.1f us |\n",
                median(pinnedNoAlloc), median(kernelC));
    // msl-bench-gpu-exec's keys: TCP unprefixed, the Unix socket "unix_",
    // TCP and the Unix socket with the buffers in a shared region "shared_",
    // "shared_unix_", and with a client that busy-polls "shared_unix_poll_";
    // msld's local socket without gRPC "local_", "local_poll_".
    const std::pair<const char *, const char *> transports[] = {
        {"", "TCP loopback"},
        {"unix_", "Unix socket"},
        {"shared_", "TCP, buffers in a shared region"},
        {"shared_unix_", "Unix socket, buffers in a shared region"},
        {"shared_unix_poll_", "Unix socket, buffers in a shared region, client busy-polls"},
        {"local_", "msld's local socket (no gRPC), buffers in a shared region"},
        {"local_poll_", "msld's local socket (no gRPC), buffers in a shared region, client busy-polls"}};
    auto at = [&](const char *prefix, const char *k) { return rpc[std::string(prefix) + k]; };
    for (auto [prefix, over] : transports)
      if (rpc.count(std::string(prefix) + "rpc_p50_us"))
        std::printf("| msld Execute RPC over %s (msl-bench-gpu-exec, %g calls; p99 %.1f us) | %.1f us | %.1f us |\n",
                    over, at(prefix, "calls"), at(prefix, "rpc_p99_us"), at(prefix, "rpc_p50_us"),
                    at(prefix, "kernel_p50_us"));
    for (auto [prefix, over] : transports)
      if (rpc.count(std::string(prefix) + "rpc_p50_us"))
        std::printf("\nRPC over %s: overhead over the direct launch with the same copies: %.1f us (goal <= 200 "
                    "us); RPC / direct = %.2fx; over the direct launch with buffers allocated once: %.1f us, with "
                    "them page-locked too: %.1f us\n",
                    over, at(prefix, "rpc_p50_us") - median(withAlloc), at(prefix, "rpc_p50_us") / median(withAlloc),
                    at(prefix, "rpc_p50_us") - median(noAlloc), at(prefix, "rpc_p50_us") - median(pinnedNoAlloc));
    cuMemFreeHost(pinnedIn);
    cuMemFreeHost(pinnedOut);
  }
  return allOk ? 0 : 1;
}
