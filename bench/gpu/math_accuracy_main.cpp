// Measures the accuracy of msld's math functions on an NVIDIA GPU: runs the
// PTX that msld compiled from math_accuracy.metal over millions of inputs
// per function (precise:: and fast::), compares each result with the host's
// double-precision libm, and prints the largest error in ulp per function.
// Exits 1 if a precise:: function exceeds the Metal specification's bound.
// Built and run by bench/gpu/math-accuracy.sh where a CUDA driver exists.
#include <cuda.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Function {
  const char *name;
  double (*reference)(double, double);
  double preciseBound; // ulp (MSL 2.0 table of single-precision accuracy)
  float lo, hi;        // y's range for the two-argument functions
};

double rsqrtRef(double x, double) { return 1.0 / std::sqrt(x); }
// The *pi references reduce exactly first (fmod is exact), and give the exact
// zeros and poles that M_PI's rounding would miss.
double sinpiRef(double x, double) {
  double r = std::fmod(x, 2.0);
  return r == std::floor(r) ? 0.0 : std::sin(M_PI * r);
}
double cospiRef(double x, double) {
  double r = std::fmod(x, 2.0);
  return r - std::floor(r) == 0.5 ? 0.0 : std::cos(M_PI * r);
}
double tanpiRef(double x, double) {
  double r = std::fmod(x, 1.0);
  if (r == 0.0)
    return 0.0;
  if (std::fabs(r) == 0.5)
    return INFINITY; // a pole: either sign (ulpError)
  return std::tan(M_PI * r);
}
double powrRef(double x, double y) { return x < 0 ? NAN : std::pow(x, y); }
double divideRef(double x, double y) { return x / y; }
double exp10Ref(double x, double) { return std::pow(10.0, x); }
#define REF1(F) [](double x, double) { return std::F(x); }

// In math_accuracy.metal's switch order.
const Function kFunctions[] = {
    {"sin", REF1(sin), 4}, {"cos", REF1(cos), 4}, {"tan", REF1(tan), 6},
    {"asin", REF1(asin), 4}, {"acos", REF1(acos), 4}, {"atan", REF1(atan), 5},
    {"sinh", REF1(sinh), 4}, {"cosh", REF1(cosh), 4}, {"tanh", REF1(tanh), 6},
    {"asinh", REF1(asinh), 4}, {"acosh", REF1(acosh), 4}, {"atanh", REF1(atanh), 5},
    {"exp", REF1(exp), 4}, {"exp2", REF1(exp2), 4}, {"exp10", exp10Ref, 4},
    {"log", REF1(log), 4}, {"log2", REF1(log2), 4}, {"log10", REF1(log10), 4},
    {"sqrt", REF1(sqrt), 0.5}, {"rsqrt", rsqrtRef, 2},
    {"sinpi", sinpiRef, 4}, {"cospi", cospiRef, 4}, {"tanpi", tanpiRef, 6},
    {"pow", [](double x, double y) { return std::pow(x, y); }, 16, -8, 8},
    {"powr", powrRef, 16, 0, 8},
    {"atan2", [](double x, double y) { return std::atan2(x, y); }, 6, -1e3f, 1e3f},
    {"divide", divideRef, 0.5, -1e6f, 1e6f},
};
constexpr unsigned kCount = sizeof(kFunctions) / sizeof(kFunctions[0]);

// Error of `got` against the real `want`, in units of the spacing of floats
// at want (the spec's ulp). NaN for NaN and an infinity for a result beyond
// the float range count 0 (the sign of infinities and the special values
// are tested exactly on the host: tests/compiler/LibmAccuracyTest.cpp); so
// does a zero for a result below the normal range (the GPU may flush those).
double ulpError(float got, double want) {
  if (std::isnan(want))
    return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want) || std::fabs(want) > FLT_MAX)
    return std::isinf(got) ? 0 : INFINITY;
  if (std::fabs(want) < FLT_MIN && got == 0.0f)
    return 0;
  int e;
  std::frexp(std::max(std::fabs(want), (double)FLT_MIN), &e);
  double ulp = std::ldexp(1.0, e - 24);
  return std::fabs((double)got - want) / ulp;
}

void check(CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    const char *msg = nullptr;
    cuGetErrorString(r, &msg);
    std::fprintf(stderr, "%s: %s\n", what, msg ? msg : "?");
    std::exit(2);
  }
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s KERNELS.ptx [STRIDE]\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1]);
  std::stringstream ptx;
  ptx << in.rdbuf();
  const uint32_t stride = argc > 2 ? std::stoul(argv[2]) : 1021;

  check(cuInit(0), "cuInit");
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  check(cuModuleLoadData(&mod, ptx.str().c_str()), "cuModuleLoadData");
  CUfunction kernels[2];
  check(cuModuleGetFunction(&kernels[0], mod, "eval_precise"), "eval_precise");
  check(cuModuleGetFunction(&kernels[1], mod, "eval_fast"), "eval_fast");
  char device[128];
  cuDeviceGetName(device, sizeof device, dev);

  // x: every stride-th bit pattern of the finite floats, both signs.
  std::vector<float> xs;
  for (uint64_t b = 0; b < 0x100000000ull; b += stride) {
    float f;
    uint32_t u = uint32_t(b);
    std::memcpy(&f, &u, 4);
    if (std::isfinite(f))
      xs.push_back(f);
  }
  const uint32_t n = uint32_t(xs.size());
  std::vector<float> ys(n), out(n);
  CUdeviceptr dx, dy, dout, dfn, dn;
  check(cuMemAlloc(&dx, n * 4), "alloc");
  check(cuMemAlloc(&dy, n * 4), "alloc");
  check(cuMemAlloc(&dout, n * 4), "alloc");
  check(cuMemAlloc(&dfn, 4), "alloc");
  check(cuMemAlloc(&dn, 4), "alloc");
  check(cuMemcpyHtoD(dx, xs.data(), n * 4), "copy x");
  check(cuMemcpyHtoD(dn, &n, 4), "copy n");

  std::printf("device: %s; %u inputs per function (every %u-th finite float)\n\n", device, n, stride);
  std::printf("| function | precise max ulp | worst x (precise) | bound | fast max ulp |\n");
  std::printf("|---|---:|---|---:|---:|\n");
  bool ok = true;
  std::mt19937 rng(12345);
  for (uint32_t fn = 0; fn < kCount; ++fn) {
    const Function &f = kFunctions[fn];
    if (f.lo != f.hi) {
      std::uniform_real_distribution<float> d(f.lo, f.hi);
      for (auto &y : ys)
        y = d(rng);
    }
    check(cuMemcpyHtoD(dy, ys.data(), n * 4), "copy y");
    check(cuMemcpyHtoD(dfn, &fn, 4), "copy fn");
    double worst[2] = {0, 0};
    float worstX[2] = {0, 0};
    for (int variant = 0; variant < 2; ++variant) {
      // The entry's launch block (compiler/EntryPoints.h): origin 0, 256
      // threads per threadgroup, the grid in threads and in threadgroups.
      const uint32_t groups = (n + 255) / 256;
      uint32_t launch[12] = {0, 0, 0, 256, 1, 1, groups * 256, 1, 1, groups, 1, 1};
      void *params[] = {&dx, &dy, &dout, &dfn, &dn, launch};
      check(cuLaunchKernel(kernels[variant], groups, 1, 1, 256, 1, 1, 0, nullptr, params,
                           nullptr),
            "launch");
      check(cuCtxSynchronize(), "sync");
      check(cuMemcpyDtoH(out.data(), dout, n * 4), "copy out");
      // The reference in double on every core.
      unsigned threads = std::max(1u, std::thread::hardware_concurrency());
      std::vector<double> partWorst(threads, 0);
      std::vector<float> partX(threads, 0);
      std::vector<std::thread> pool;
      for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          for (uint32_t i = t; i < n; i += threads) {
            double want = f.reference(xs[i], ys[i]);
            double e = ulpError(out[i], want);
            if (e > partWorst[t]) {
              partWorst[t] = e;
              partX[t] = xs[i];
            }
          }
        });
      for (auto &th : pool)
        th.join();
      for (unsigned t = 0; t < threads; ++t)
        if (partWorst[t] > worst[variant]) {
          worst[variant] = partWorst[t];
          worstX[variant] = partX[t];
        }
    }
    bool pass = worst[0] <= f.preciseBound;
    ok &= pass;
    std::printf("| %s | %.3g%s | %a | %g | %.3g |\n", f.name, worst[0], pass ? "" : " FAIL",
                worstX[0], f.preciseBound, worst[1]);
  }
  std::printf("\n%s\n", ok ? "precise: every function within its bound" : "precise: BOUND EXCEEDED");
  return ok ? 0 : 1;
}
