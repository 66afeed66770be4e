//===- GpuCheck.cpp - The GPU checker, driven from msl-conformance --------===//
#include "GpuCheck.h"

#include "CudaDriver.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>

namespace msl::conformance {

using namespace msl::executor::cuda;

namespace {
// Samples listed for the host per chunk before it judges the whole chunk.
constexpr uint32_t kListedCapacity = 1u << 20;
} // namespace

struct GpuChecker::Impl {
  const Driver *d = nullptr;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  CUfunction kernel = nullptr;
  uint32_t maxChunk = 0;
  CUdeviceptr got = 0; // [mode][result][maxChunk]
  CUdeviceptr counts = 0, best = 0, listed = 0, listedCount = 0;
  std::vector<char *> pinned;

  bool ok(CUresult r, const char *what, std::string &why) const {
    if (r == CUDA_SUCCESS) return true;
    why = std::string(what) + ": " + d->describe(r);
    return false;
  }
  ~Impl() {
    if (!d) return;
    d->cuCtxSetCurrent(context);
    for (char *p : pinned) d->cuMemHostUnregister(p);
    for (CUdeviceptr p : {got, counts, best, listed, listedCount})
      if (p) d->cuMemFree(p);
    if (module) d->cuModuleUnload(module);
  }
};

GpuChecker::GpuChecker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GpuChecker::~GpuChecker() = default;

std::unique_ptr<GpuChecker> GpuChecker::open(const std::string &cubinPath, int ordinal, uint32_t maxChunk,
                                             std::string &why) {
  std::ifstream file(cubinPath, std::ios::binary);
  if (!file) {
    why = "cannot read " + cubinPath;
    return nullptr;
  }
  std::string cubin((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto impl = std::make_unique<Impl>();
  impl->d = load(why);
  if (!impl->d) return nullptr;
  const Driver &d = *impl->d;
  CUdevice device;
  if (!impl->ok(d.cuDeviceGet(&device, ordinal), "cuDeviceGet", why) ||
      !impl->ok(d.cuDevicePrimaryCtxRetain(&impl->context, device), "cuDevicePrimaryCtxRetain", why) ||
      !impl->ok(d.cuCtxSetCurrent(impl->context), "cuCtxSetCurrent", why) ||
      !impl->ok(d.cuModuleLoadData(&impl->module, cubin.data()), ("loading " + cubinPath).c_str(), why) ||
      !impl->ok(d.cuModuleGetFunction(&impl->kernel, impl->module, kGpuCheckKernel),
                    (cubinPath + " has no " + kGpuCheckKernel + " (built from other sources?)").c_str(), why))
    return nullptr;
  impl->maxChunk = maxChunk;
  size_t gotBytes = size_t(kGpuCheckMaxModes) * 2 * maxChunk * 4;
  if (!impl->ok(d.cuMemAlloc(&impl->got, gotBytes), "cuMemAlloc (results)", why) ||
      !impl->ok(d.cuMemAlloc(&impl->counts, sizeof(GpuCheckCounts) * kGpuCheckMaxModes), "cuMemAlloc", why) ||
      !impl->ok(d.cuMemAlloc(&impl->best, sizeof(GpuCheckBest) * kGpuCheckBlocks * kGpuCheckMaxModes), "cuMemAlloc",
                why) ||
      !impl->ok(d.cuMemAlloc(&impl->listed, size_t(kListedCapacity) * 4), "cuMemAlloc", why) ||
      !impl->ok(d.cuMemAlloc(&impl->listedCount, 8), "cuMemAlloc", why))
    return nullptr;
  return std::unique_ptr<GpuChecker>(new GpuChecker(std::move(impl)));
}

bool GpuChecker::pin(char *base, uint64_t size, std::string &why) {
  Impl &s = *impl_;
  if (!s.ok(s.d->cuCtxSetCurrent(s.context), "cuCtxSetCurrent", why) ||
      !s.ok(s.d->cuMemHostRegister(base, size, 0), "cuMemHostRegister", why))
    return false;
  s.pinned.push_back(base);
  return true;
}

bool GpuChecker::check(const FunctionInfo &fn, const FloatFormat &f, const Params &params, uint32_t count,
                       const std::vector<MathMode> &modes, ChunkResults &got, GpuChunkVerdict &out,
                       std::string &why) {
  Impl &s = *impl_;
  const Driver &d = *s.d;
  auto started = std::chrono::steady_clock::now();
  if (count > s.maxChunk) {
    why = "GPU checker: a chunk of " + std::to_string(count) + " samples (at most " + std::to_string(s.maxChunk) + ")";
    return false;
  }
  GpuCheckArgs a;
  if (!gpuCheckArgs(fn, f, params, count, modes, a, why)) return false;
  if (!s.ok(d.cuCtxSetCurrent(s.context), "cuCtxSetCurrent", why)) return false;
  for (size_t m = 0; m < modes.size(); ++m) {
    for (int k = 0; k < fn.results; ++k) {
      CUdeviceptr dst = s.got + (CUdeviceptr(m * 2 + k) * s.maxChunk) * 4;
      if (!s.ok(d.cuMemcpyHtoD(dst, got[m][k], size_t(count) * 4), "cuMemcpyHtoD (results)", why)) return false;
      a.got[m][k] = reinterpret_cast<const uint32_t *>(dst);
    }
  }
  a.counts = reinterpret_cast<GpuCheckCounts *>(s.counts);
  a.best = reinterpret_cast<GpuCheckBest *>(s.best);
  a.listed = reinterpret_cast<uint32_t *>(s.listed);
  a.listedCount = reinterpret_cast<unsigned long long *>(s.listedCount);
  a.listedCapacity = kListedCapacity;
  if (!s.ok(d.cuMemsetD8(s.counts, 0, sizeof(GpuCheckCounts) * kGpuCheckMaxModes), "cuMemsetD8", why) ||
      !s.ok(d.cuMemsetD8(s.listedCount, 0, 8), "cuMemsetD8", why))
    return false;
  void *params_[] = {&a};
  if (!s.ok(d.cuLaunchKernel(s.kernel, kGpuCheckBlocks, 1, 1, kGpuCheckThreads, 1, 1, 0, nullptr, params_, nullptr),
            "cuLaunchKernel (GPU checker)", why) ||
      !s.ok(d.cuCtxSynchronize(), "the GPU checker's kernel", why))
    return false;
  unsigned long long listed = 0;
  out.best.resize(size_t(kGpuCheckBlocks) * modes.size());
  if (!s.ok(d.cuMemcpyDtoH(out.counts, s.counts, sizeof(GpuCheckCounts) * modes.size()), "cuMemcpyDtoH", why) ||
      !s.ok(d.cuMemcpyDtoH(out.best.data(), s.best, sizeof(GpuCheckBest) * out.best.size()), "cuMemcpyDtoH", why) ||
      !s.ok(d.cuMemcpyDtoH(&listed, s.listedCount, 8), "cuMemcpyDtoH", why))
    return false;
  out.overflowed = listed > kListedCapacity;
  out.listed.resize(out.overflowed ? 0 : size_t(listed));
  if (!out.listed.empty() &&
      !s.ok(d.cuMemcpyDtoH(out.listed.data(), s.listed, out.listed.size() * 4), "cuMemcpyDtoH", why))
    return false;
  std::sort(out.listed.begin(), out.listed.end());
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return true;
}

} // namespace msl::conformance
