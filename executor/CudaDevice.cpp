#include "CudaDevice.h"

#include "Textures.h"
#include "CudaDriver.h"
#include "WorkerProtocol.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>
#include <list>
#include <map>

namespace msl::executor {
namespace {

using namespace cuda;
using msl::internal::ExecSlot;
using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;
using Clock = std::chrono::steady_clock;

// Shared memory every block may use without opting in.
constexpr uint32_t kDefaultSharedBytes = 48u << 10;
// The PTX entry's launch block (compiler/EntryPoints.h).
constexpr unsigned kLaunchWords = 12;
// What a JIT log keeps for an error message.
constexpr size_t kJitLogBytes = 8192;

struct Limits {
  int maxThreadsPerBlock = 0, warpSize = 32, smCount = 0, major = 0, minor = 0;
  int maxBlock[3] = {}, maxGrid[3] = {};
  int sharedPerBlock = 0, sharedOptin = 0;
  size_t memory = 0;
  std::string name;
};

bool readLimits(const Driver &d, CUdevice dev, Limits &l, std::string &why) {
  char name[256] = {};
  auto attr = [&](int a, int &out) { return d.cuDeviceGetAttribute(&out, a, dev) == CUDA_SUCCESS; };
  bool ok = d.cuDeviceGetName(name, sizeof name - 1, dev) == CUDA_SUCCESS &&
            d.cuDeviceTotalMem(&l.memory, dev) == CUDA_SUCCESS && attr(kMaxThreadsPerBlock, l.maxThreadsPerBlock) &&
            attr(kWarpSize, l.warpSize) && attr(kMultiprocessorCount, l.smCount) &&
            attr(kComputeCapabilityMajor, l.major) && attr(kComputeCapabilityMinor, l.minor) &&
            attr(kMaxBlockDimX, l.maxBlock[0]) && attr(kMaxBlockDimY, l.maxBlock[1]) &&
            attr(kMaxBlockDimZ, l.maxBlock[2]) && attr(kMaxGridDimX, l.maxGrid[0]) &&
            attr(kMaxGridDimY, l.maxGrid[1]) && attr(kMaxGridDimZ, l.maxGrid[2]) &&
            attr(kMaxSharedMemoryPerBlock, l.sharedPerBlock) && attr(kMaxSharedMemoryPerBlockOptin, l.sharedOptin);
  if (!ok) {
    why = "cannot read the GPU's properties";
    return false;
  }
  l.name = name;
  return true;
}

std::string smOf(const Limits &l) { return "sm_" + std::to_string(l.major) + std::to_string(l.minor); }

std::string driverVersionOf(const Driver &d) {
  std::string cuda = std::to_string(d.cudaVersion / 1000) + "." + std::to_string(d.cudaVersion % 1000 / 10);
  return (d.build.empty() ? std::string("unknown build") : d.build) + " (CUDA " + cuda + ")";
}

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

[[noreturn]] void exitOnFault(const std::string &what) {
  std::string line = "msld-cuda-worker: " + what + "\n";
  ssize_t ignored = ::write(2, line.data(), line.size());
  (void)ignored;
  ::_exit(msl::service::kWorkerKernelFaultExitCode);
}

} // namespace

const std::map<std::string, std::string> &generatedTextureLibrary(); // EmbeddedTexturePtx.cpp

const std::string &cudaTextureLibraryPtx() { return generatedTextureLibrary().at("texture-hooks.ptx"); }

std::string cudaJitIdentity() {
  // FNV-1a of the library: a version tag inside a key that is hashed with
  // SHA-256 (service/CubinCache.cpp), not a digest that must resist forgery.
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : cudaTextureLibraryPtx())
    h = (h ^ c) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string(kCudaJitOptions) + " textures=" + hex;
}

msl::internal::CudaProbeResponse probeCudaDevices() {
  msl::internal::CudaProbeResponse out;
  std::string why;
  const Driver *d = load(why);
  if (!d) {
    out.set_unavailable(why);
    return out;
  }
  out.set_driver_build(d->build);
  out.set_cuda_version(d->cudaVersion);
  out.set_jit_identity(cudaJitIdentity());
  int count = 0;
  if (CUresult r = d->cuDeviceGetCount(&count); r != CUDA_SUCCESS || count <= 0) {
    out.set_unavailable(r == CUDA_SUCCESS ? "no CUDA device: the driver sees no GPU"
                                          : "cuDeviceGetCount failed: " + d->describe(r));
    return out;
  }
  for (int i = 0; i < count; ++i) {
    CUdevice dev;
    Limits l;
    if (d->cuDeviceGet(&dev, i) != CUDA_SUCCESS || !readLimits(*d, dev, l, why))
      continue;
    auto *device = out.add_devices();
    device->set_name("cuda:" + std::to_string(i));
    device->set_kind(msl::v1::Device::CUDA);
    device->set_description(l.name + " (" + smOf(l) + ", " + std::to_string(l.smCount) + " SMs, " +
                            std::to_string(l.memory >> 20) + " MiB)");
    device->set_architecture(smOf(l));
    device->set_compute_units(uint32_t(l.smCount));
    device->set_memory_bytes(l.memory);
    device->set_max_threads_per_threadgroup(uint32_t(l.maxThreadsPerBlock));
    device->set_max_threadgroup_memory_bytes(uint64_t(l.sharedOptin));
    device->set_shared_memory_per_block_bytes(uint64_t(l.sharedPerBlock));
    device->set_simd_width(uint32_t(l.warpSize));
    device->set_max_buffer_bytes(l.memory);
    device->set_driver_version(driverVersionOf(*d));
  }
  if (out.devices_size() == 0)
    out.set_unavailable("no CUDA device could be queried");
  return out;
}

std::vector<CudaLaunch> planCudaLaunches(const uint32_t threadgroups[3], const uint32_t tpg[3],
                                         const uint32_t *gridThreads) {
  if (!gridThreads)
    return {CudaLaunch{{0, 0, 0}, {threadgroups[0], threadgroups[1], threadgroups[2]}, {tpg[0], tpg[1], tpg[2]}}};
  // Per dimension: (origin, count, block) of the whole threadgroups and of
  // the partial one.
  struct Part {
    uint32_t origin, count, block;
  };
  std::vector<Part> parts[3];
  for (int c = 0; c < 3; ++c) {
    uint32_t whole = gridThreads[c] / tpg[c], rest = gridThreads[c] % tpg[c];
    if (whole)
      parts[c].push_back({0, whole, tpg[c]});
    if (rest)
      parts[c].push_back({whole, 1, rest});
  }
  std::vector<CudaLaunch> out;
  for (const Part &z : parts[2])
    for (const Part &y : parts[1])
      for (const Part &x : parts[0])
        out.push_back({{x.origin, y.origin, z.origin}, {x.count, y.count, z.count}, {x.block, y.block, z.block}});
  return out;
}

struct CudaDevice::Impl {
  StageTimes stageTimes; // of the last execute()
  const Driver *d = nullptr;
  CudaDeviceOptions options;
  int ordinal = 0;
  std::string name, identity;
  Limits limits;
  CUcontext context = nullptr;
  CUstream stream = nullptr;

  struct Module {
    std::string digest;
    CUmodule module = nullptr;
    std::map<std::string, CUfunction> functions;
    std::map<CUfunction, int> dynamicSharedSet; // the opt-in already made
  };
  std::list<Module> modules; // most recently used first

  // Device memory of finished requests, kept for the next one of the same
  // sizes (cuMemAlloc and cuMemFree cost tens of microseconds each, and
  // cuMemFree synchronizes): exact sizes, at most kPoolBytes in all.
  static constexpr uint64_t kPoolBytes = 256ull << 20;
  std::multimap<size_t, CUdeviceptr> pool;
  uint64_t pooledBytes = 0;
  CUresult allocate(CUdeviceptr &p, size_t bytes) {
    if (auto it = pool.find(bytes); it != pool.end()) {
      p = it->second;
      pool.erase(it);
      pooledBytes -= bytes;
      return CUDA_SUCCESS;
    }
    CUresult r = d->cuMemAlloc(&p, bytes);
    if (r != CUDA_SUCCESS && !pool.empty()) { // full: give the pool back, then again
      releasePool();
      r = d->cuMemAlloc(&p, bytes);
    }
    return r;
  }
  void release(CUdeviceptr p, size_t bytes) {
    if (bytes <= kPoolBytes) {
      while (pooledBytes + bytes > kPoolBytes && !pool.empty()) {
        auto last = std::prev(pool.end()); // the largest
        pooledBytes -= last->first;
        d->cuMemFree(last->second);
        pool.erase(last);
      }
      pool.emplace(bytes, p);
      pooledBytes += bytes;
    } else {
      d->cuMemFree(p);
    }
  }
  // Page-locked host memory the returned buffers come back through: from
  // device to pageable memory the driver copies through small staging
  // buffers of its own (1 MiB in ~330 us on the H200's host,
  // bench/RESULTS.md), into pinned memory the DMA runs at the link's speed
  // and one memcpy moves the bytes on. Grown to the largest request's
  // returned bytes up to kStagingBytes; beyond it, or when the driver
  // cannot pin more, the copies go straight to pageable memory.
  static constexpr size_t kStagingBytes = 256ull << 20;
  void *staging = nullptr;
  size_t stagingBytes = 0;
  char *stagingFor(size_t bytes) {
    if (bytes > kStagingBytes)
      return nullptr;
    if (bytes > stagingBytes) {
      // A request that failed after queuing its copies in may have left
      // some reading the old buffer: they finish before it goes.
      if (staging) {
        d->cuStreamSynchronize(stream);
        d->cuMemFreeHost(staging);
      }
      staging = nullptr;
      stagingBytes = 0;
      const size_t want = std::min(kStagingBytes, (bytes + (1u << 20) - 1) & ~size_t((1u << 20) - 1));
      if (d->cuMemAllocHost(&staging, want) != CUDA_SUCCESS) {
        staging = nullptr;
        return nullptr;
      }
      stagingBytes = want;
    }
    return static_cast<char *>(staging);
  }
  void releasePool() {
    for (auto &[bytes, p] : pool)
      d->cuMemFree(p);
    pool.clear();
    pooledBytes = 0;
  }

  [[noreturn]] void fault(const std::string &symbol, CUresult r) {
    options.onFault("kernel " + symbol + " faulted: " + d->describe(r));
    std::abort(); // onFault must not return
  }

  /// The module of `req`, loaded (from the cache, the cubin or the PTX); null
  /// with `error` set.
  Module *moduleFor(const ExecWorkerRequest &req, ExecWorkerResponse &resp, std::string &error);
  bool link(const std::string &ptx, std::string &cubin, std::string &error);
};

CudaDevice::CudaDevice(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CudaDevice::~CudaDevice() {
  // The context is the process's primary one and ends with it; modules and
  // memory go with it.
}

const std::string &CudaDevice::identity() const { return impl_->identity; }
const std::string &CudaDevice::name() const { return impl_->name; }

std::unique_ptr<CudaDevice> CudaDevice::open(int ordinal, std::string &why, CudaDeviceOptions options) {
  const Driver *d = load(why);
  if (!d)
    return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->d = d;
  impl->options = std::move(options);
  if (!impl->options.onFault)
    impl->options.onFault = exitOnFault;
  impl->ordinal = ordinal;
  impl->name = "cuda:" + std::to_string(ordinal);
  int count = 0;
  d->cuDeviceGetCount(&count);
  CUdevice dev;
  if (ordinal < 0 || ordinal >= count || d->cuDeviceGet(&dev, ordinal) != CUDA_SUCCESS) {
    why = "no CUDA device " + impl->name + ": the driver shows " + std::to_string(count);
    return nullptr;
  }
  if (!readLimits(*d, dev, impl->limits, why))
    return nullptr;
  if (CUresult r = d->cuDevicePrimaryCtxRetain(&impl->context, dev); r != CUDA_SUCCESS) {
    why = "cannot create a context on " + impl->name + ": " + d->describe(r);
    return nullptr;
  }
  if (CUresult r = d->cuCtxSetCurrent(impl->context); r != CUDA_SUCCESS) {
    why = "cannot use the context of " + impl->name + ": " + d->describe(r);
    return nullptr;
  }
  // Non-blocking: no implicit synchronization with the legacy stream.
  if (CUresult r = d->cuStreamCreate(&impl->stream, 1); r != CUDA_SUCCESS) {
    why = "cannot create a stream on " + impl->name + ": " + d->describe(r);
    return nullptr;
  }
  impl->identity = impl->name + " " + impl->limits.name + " " + smOf(impl->limits) + " driver/" + driverVersionOf(*d);
  return std::unique_ptr<CudaDevice>(new CudaDevice(std::move(impl)));
}

bool CudaDevice::Impl::link(const std::string &ptx, std::string &cubin, std::string &error) {
  std::string errorLog(kJitLogBytes, '\0');
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes, kJitOptimizationLevel};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(uintptr_t(errorLog.size() - 1)),
                    reinterpret_cast<void *>(uintptr_t(4))}; // kCudaJitOptions
  CUlinkState state = nullptr;
  if (CUresult r = d->cuLinkCreate(3, options, values, &state); r != CUDA_SUCCESS) {
    error = "cuLinkCreate failed: " + d->describe(r);
    return false;
  }
  std::string text = ptx; // the JIT wants it NUL-terminated
  text.push_back('\0');
  CUresult r = d->cuLinkAddData(state, kJitInputPtx, text.data(), text.size(), "kernel.ptx", 0, nullptr, nullptr);
  // A kernel that uses a texture calls the hooks (.extern .func): the
  // texture library defines them.
  if (r == CUDA_SUCCESS && ptx.find(".extern .func") != std::string::npos &&
      ptx.find("__msl_texture_") != std::string::npos) {
    const std::string &library = cudaTextureLibraryPtx();
    r = d->cuLinkAddData(state, kJitInputPtx, const_cast<char *>(library.c_str()), library.size() + 1,
                         "msl-texture-hooks.ptx", 0, nullptr, nullptr);
  }
  void *image = nullptr;
  size_t size = 0;
  if (r == CUDA_SUCCESS)
    r = d->cuLinkComplete(state, &image, &size);
  if (r == CUDA_SUCCESS)
    cubin.assign(static_cast<const char *>(image), size); // owned by the link state
  d->cuLinkDestroy(state);
  if (r != CUDA_SUCCESS) {
    errorLog.resize(std::strlen(errorLog.c_str()));
    error = "the driver cannot link the kernel's PTX: " + d->describe(r) + (errorLog.empty() ? "" : ": " + errorLog);
    return false;
  }
  return true;
}

CudaDevice::Impl::Module *CudaDevice::Impl::moduleFor(const ExecWorkerRequest &req, ExecWorkerResponse &resp,
                                                      std::string &error) {
  const std::string &digest = req.module_digest();
  for (auto it = modules.begin(); it != modules.end(); ++it)
    if (!digest.empty() && it->digest == digest) {
      modules.splice(modules.begin(), modules, it);
      resp.set_module_source(msl::internal::MODULE_LOADED_ALREADY);
      return &modules.front();
    }
  auto start = Clock::now();
  CUmodule module = nullptr;
  if (!req.cubin().empty() && d->cuModuleLoadData(&module, req.cubin().data()) == CUDA_SUCCESS) {
    resp.set_module_source(msl::internal::MODULE_FROM_CUBIN);
  } else {
    module = nullptr; // a cubin the driver refuses (another build): link the PTX
    std::string cubin;
    if (req.module().empty() && req.cubin().empty() && !digest.empty()) {
      resp.set_module_needed(true); // msld sends it again, with the PTX
      return nullptr;
    }
    if (req.module().empty()) {
      error = "the request has no PTX";
      return nullptr;
    }
    if (!link(req.module(), cubin, error))
      return nullptr;
    if (CUresult r = d->cuModuleLoadData(&module, cubin.data()); r != CUDA_SUCCESS) {
      error = "the driver cannot load the linked kernel: " + d->describe(r);
      return nullptr;
    }
    resp.set_module_source(msl::internal::MODULE_LINKED_FROM_PTX);
    resp.set_cubin(std::move(cubin));
  }
  resp.set_module_load_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
  while (modules.size() >= std::max(1u, options.moduleCacheEntries)) {
    d->cuModuleUnload(modules.back().module);
    modules.pop_back();
  }
  modules.push_front(Module{digest, module, {}, {}});
  return &modules.front();
}

namespace {

// Device memory of one request, back to the device's pool when it ends.
template <typename Device> struct Allocations {
  Device *device;
  std::vector<CUdeviceptr> pointers;
  std::vector<size_t> sizes;
  ~Allocations() {
    for (size_t i = 0; i < pointers.size(); ++i)
      if (pointers[i])
        device->release(pointers[i], sizes[i]);
  }
};

struct Events {
  const Driver *d;
  std::vector<CUevent> events;
  ~Events() {
    for (CUevent e : events)
      d->cuEventDestroy(e);
  }
};

} // namespace

bool CudaDevice::registerHostMemory(char *base, size_t size) {
  return impl_->d->cuMemHostRegister(base, size, 0) == CUDA_SUCCESS;
}

void CudaDevice::unregisterHostMemory(char *base) { (void)impl_->d->cuMemHostUnregister(base); }

ExecWorkerResponse CudaDevice::execute(const ExecWorkerRequest &req, const std::function<void()> &beforeFirstDispatch,
                                       const HostBuffers *host) {
  Impl &s = *impl_;
  // A buffer's bytes in a mapped shared region (DMA straight from and to
  // it), or empty: in the request.
  auto hostOf = [&](int i) { return host && size_t(i) < host->size() ? (*host)[size_t(i)] : std::span<char>(); };
  const Driver &d = *s.d;
  ExecWorkerResponse resp;
  auto fail = [&](std::string message) {
    ExecWorkerResponse r;
    r.set_error(std::move(message));
    return r;
  };
  if (req.threadgroups_size() != 3 || req.threads_per_threadgroup_size() != 3 ||
      (req.grid_threads_size() != 0 && req.grid_threads_size() != 3))
    return fail("the dispatch needs 3 threadgroup counts and sizes");
  uint32_t groups[3], tpg[3], grid[3];
  for (int c = 0; c < 3; ++c) {
    groups[c] = req.threadgroups(c);
    tpg[c] = req.threads_per_threadgroup(c);
    grid[c] = req.grid_threads_size() ? req.grid_threads(c) : groups[c] * tpg[c];
    if (groups[c] == 0 || tpg[c] == 0)
      return fail("the dispatch has an empty dimension");
    if (tpg[c] > uint32_t(s.limits.maxBlock[c]))
      return fail("threads per threadgroup in " + std::string(1, char('x' + c)) + " are " + std::to_string(tpg[c]) +
                  "; " + s.limits.name + " takes at most " + std::to_string(s.limits.maxBlock[c]));
    if (groups[c] > uint32_t(s.limits.maxGrid[c]))
      return fail("threadgroups per grid in " + std::string(1, char('x' + c)) + " are " + std::to_string(groups[c]) +
                  "; " + s.limits.name + " takes at most " + std::to_string(s.limits.maxGrid[c]));
  }
  const uint64_t threads = uint64_t(tpg[0]) * tpg[1] * tpg[2];

  using StageClock = std::chrono::steady_clock;
  auto stageStart = StageClock::now();
  s.stageTimes = {};
  auto stage = [&](double &field) {
    auto now = StageClock::now();
    field = std::chrono::duration<double, std::micro>(now - stageStart).count();
    stageStart = now;
  };
  std::string error;
  Impl::Module *module = s.moduleFor(req, resp, error);
  if (!module && resp.module_needed())
    return resp;
  if (!module)
    return fail(error);
  CUfunction function = nullptr;
  if (auto it = module->functions.find(req.symbol()); it != module->functions.end()) {
    function = it->second;
  } else {
    if (CUresult r = d.cuModuleGetFunction(&function, module->module, req.symbol().c_str()); r != CUDA_SUCCESS)
      return fail("the module has no kernel '" + req.symbol() + "': " + d.describe(r));
    module->functions[req.symbol()] = function;
  }
  int maxThreads = 0, staticShared = 0;
  d.cuFuncGetAttribute(&maxThreads, kFuncMaxThreadsPerBlock, function);
  d.cuFuncGetAttribute(&staticShared, kFuncSharedSizeBytes, function);
  if (maxThreads > 0 && threads > uint64_t(maxThreads))
    return fail("kernel '" + req.symbol() + "' runs at most " + std::to_string(maxThreads) +
                " threads per threadgroup on " + s.limits.name + " (its registers), not " + std::to_string(threads));

  stage(s.stageTimes.module_us);
  // Parameters: one value per slot, then the launch block. Threadgroup
  // arguments are offsets into dynamic shared memory, 16-byte aligned.
  std::vector<uint64_t> pointerValues;
  std::vector<uint32_t> offsetValues;
  pointerValues.reserve(size_t(req.slots_size()));
  offsetValues.reserve(size_t(req.slots_size()));
  std::vector<void *> params;
  uint64_t dynamicShared = 0;
  Allocations<Impl> memory{&s, std::vector<CUdeviceptr>(size_t(req.buffers_size()), 0),
                           std::vector<size_t>(size_t(req.buffers_size()), 0)};
  // The buffers' bytes go in through the page-locked staging buffer too
  // (one memcpy, then DMA; a pageable cuMemcpyHtoDAsync stages through the
  // driver's small buffers: 131 us for 1 MiB on the H200's host). The copies
  // back use it from the start too, queued behind the kernels on the same
  // stream; where it must grow for them, stagingFor first waits for the
  // copies in that read it.
  uint64_t inBytes = 0;
  for (const auto &b : req.buffers())
    inBytes += b.data().size();
  for (const auto &t : req.textures())
    inBytes += t.data().size();
  char *stagingIn = s.stagingFor(inBytes);
  size_t stagedAt = 0;
  // `data` into device memory `p` of `length` bytes, zero-filled past it.
  // On the kernels' stream: the plain cuMemcpyHtoD and cuMemsetD8 run on
  // the legacy stream, which a non-blocking stream does not wait for (a
  // pageable copy returns once staged; a memset may still be running), so
  // a kernel could read a buffer before its data or zeros landed.
  auto copyIn = [&](CUdeviceptr p, std::string_view data, uint64_t length, bool direct = false) {
    const char *from = data.data();
    if (stagingIn && !data.empty() && !direct) {
      std::memcpy(stagingIn + stagedAt, from, data.size());
      from = stagingIn + stagedAt;
      stagedAt += data.size();
    }
    CUresult r = data.empty() ? CUDA_SUCCESS : d.cuMemcpyHtoDAsync(p, from, data.size(), s.stream);
    if (r == CUDA_SUCCESS && data.size() < length)
      r = d.cuMemsetD8Async(p + data.size(), 0, length - data.size(), s.stream);
    return r;
  };
  for (int i = 0; i < req.buffers_size(); ++i) {
    const auto &b = req.buffers(i);
    const std::span<char> inHost = hostOf(i);
    const std::string_view initial =
        inHost.empty() ? std::string_view(b.data()) : std::string_view(inHost.data(), inHost.size());
    if (initial.size() > b.length())
      return fail("buffer " + std::to_string(i) + " has more data than its length");
    if (b.length() == 0)
      continue;
    CUdeviceptr &p = memory.pointers[size_t(i)];
    if (CUresult r = s.allocate(p, b.length()); r != CUDA_SUCCESS) {
      p = 0;
      return fail("cannot allocate " + std::to_string(b.length()) + " bytes for buffer " + std::to_string(i) +
                  " on " + s.name + ": " + d.describe(r));
    }
    memory.sizes[size_t(i)] = b.length();
    if (CUresult r = copyIn(p, initial, b.length(), !inHost.empty()); r != CUDA_SUCCESS)
      return fail("cannot copy buffer " + std::to_string(i) + " to " + s.name + ": " + d.describe(r));
  }
  // Textures: texels in device memory, and one block holding the
  // dispatch's usage word, the textures' descriptions (TextureOps.h; a
  // texture's handle is its description's device address) and the handles
  // of metal::array arguments.
  std::vector<TextureView> views(size_t(req.textures_size()));
  size_t arrayHandles = 0;
  for (const auto &slot : req.slots())
    if (slot.kind() == ExecSlot::HANDLE && slot.handle_array())
      arrayHandles += size_t(slot.handles_size());
  const size_t viewsAt = sizeof(uint64_t), arraysAt = viewsAt + views.size() * sizeof(TextureView);
  std::vector<char> block;
  CUdeviceptr blockOnDevice = 0;
  if (!views.empty() || arrayHandles) {
    block.assign(arraysAt + arrayHandles * sizeof(uint64_t), 0);
    if (CUresult r = s.allocate(blockOnDevice, block.size()); r != CUDA_SUCCESS)
      return fail("cannot allocate the textures' descriptions on " + s.name + ": " + d.describe(r));
    memory.pointers.push_back(blockOnDevice);
    memory.sizes.push_back(block.size());
  }
  for (size_t i = 0; i < views.size(); ++i) {
    const auto &in = req.textures(int(i));
    if (std::string e = describeTexture(in, views[i]); !e.empty())
      return fail("texture " + std::to_string(i) + " ([[texture(" + std::to_string(in.index()) + ")]]): " + e);
    CUdeviceptr texels = 0;
    if (CUresult r = s.allocate(texels, views[i].bytes()); r != CUDA_SUCCESS)
      return fail("cannot allocate " + std::to_string(views[i].bytes()) + " bytes for texture " +
                  std::to_string(i) + " on " + s.name + ": " + d.describe(r));
    memory.pointers.push_back(texels);
    memory.sizes.push_back(views[i].bytes());
    if (CUresult r = copyIn(texels, in.data(), views[i].bytes()); r != CUDA_SUCCESS)
      return fail("cannot copy texture " + std::to_string(i) + " to " + s.name + ": " + d.describe(r));
    views[i].texels = reinterpret_cast<char *>(uintptr_t(texels));
    views[i].usage = reinterpret_cast<uint64_t *>(uintptr_t(blockOnDevice));
  }
  if (!views.empty())
    std::memcpy(block.data() + viewsAt, views.data(), views.size() * sizeof(TextureView));
  size_t nextArrayHandle = 0;
  stage(s.stageTimes.copy_in_us); // allocations, copies and zero fills queued
  for (const auto &slot : req.slots()) {
    switch (slot.kind()) {
    case ExecSlot::BUFFER: {
      if (slot.buffer() >= uint32_t(req.buffers_size()))
        return fail("a slot names buffer " + std::to_string(slot.buffer()) + " of " +
                    std::to_string(req.buffers_size()));
      const auto &b = req.buffers(int(slot.buffer()));
      if (slot.offset() > b.length())
        return fail("a binding offset is past its buffer");
      CUdeviceptr base = memory.pointers[slot.buffer()];
      pointerValues.push_back(base ? base + slot.offset() : 0);
      params.push_back(&pointerValues.back());
      break;
    }
    case ExecSlot::THREADGROUP:
      offsetValues.push_back(uint32_t(dynamicShared));
      params.push_back(&offsetValues.back());
      dynamicShared += alignUp(slot.length(), 16);
      if (dynamicShared > uint64_t(s.limits.sharedOptin))
        return fail("the threadgroup memory lengths total more than " + s.limits.name + "'s " +
                    std::to_string(s.limits.sharedOptin) + " bytes");
      break;
    case ExecSlot::HANDLE: {
      // A texture's description's address or a sampler's packed state.
      std::vector<uint64_t> handles;
      for (const auto &h : slot.handles()) {
        if (h.has_texture() && h.texture() >= views.size())
          return fail("a slot names texture " + std::to_string(h.texture()) + " of " + std::to_string(views.size()));
        handles.push_back(h.has_texture() ? blockOnDevice + viewsAt + h.texture() * sizeof(TextureView)
                                          : h.sampler_state());
      }
      if (slot.handle_array()) {
        const size_t at = arraysAt + nextArrayHandle * sizeof(uint64_t);
        if (!handles.empty())
          std::memcpy(block.data() + at, handles.data(), handles.size() * sizeof(uint64_t));
        nextArrayHandle += handles.size();
        pointerValues.push_back(blockOnDevice + at);
      } else if (handles.size() > 1) {
        return fail("a slot has " + std::to_string(handles.size()) + " handles and is not an array");
      } else {
        pointerValues.push_back(handles.empty() ? 0 : handles[0]);
      }
      params.push_back(&pointerValues.back());
      break;
    }
    default:
      return fail("a slot is of an unknown kind");
    }
  }
  if (blockOnDevice)
    if (CUresult r = d.cuMemcpyHtoDAsync(blockOnDevice, block.data(), block.size(), s.stream); r != CUDA_SUCCESS)
      return fail("cannot copy the textures' descriptions to " + s.name + ": " + d.describe(r));
  if (uint64_t(staticShared) + dynamicShared > uint64_t(s.limits.sharedOptin))
    return fail("kernel '" + req.symbol() + "' needs " + std::to_string(staticShared) +
                " bytes of threadgroup memory and its arguments " + std::to_string(dynamicShared) + "; " +
                s.limits.name + " has " + std::to_string(s.limits.sharedOptin) + " per threadgroup");
  // Above 48 KiB a block needs the function's opt-in.
  if (uint64_t(staticShared) + dynamicShared > kDefaultSharedBytes) {
    int &set = module->dynamicSharedSet[function];
    if (set < int(dynamicShared)) {
      if (CUresult r = d.cuFuncSetAttribute(function, kFuncMaxDynamicSharedSizeBytes, int(dynamicShared));
          r != CUDA_SUCCESS)
        return fail("cannot give kernel '" + req.symbol() + "' " + std::to_string(dynamicShared) +
                    " bytes of dynamic shared memory: " + d.describe(r));
      set = int(dynamicShared);
    }
  }
  uint32_t launchBlock[kLaunchWords] = {0, 0, 0, tpg[0], tpg[1], tpg[2], grid[0], grid[1], grid[2],
                                        groups[0], groups[1], groups[2]};
  params.push_back(launchBlock);

  const auto launches = planCudaLaunches(groups, tpg, req.grid_threads_size() ? grid : nullptr);
  const uint32_t repeat = std::max(1u, req.repeat());
  Events events{&d, {}};
  events.events.reserve(size_t(repeat) * 2);
  for (uint32_t i = 0; i < repeat * 2; ++i) {
    CUevent e;
    if (CUresult r = d.cuEventCreate(&e, 0); r != CUDA_SUCCESS)
      return fail("cannot create a CUDA event: " + d.describe(r));
    events.events.push_back(e);
  }
  if (beforeFirstDispatch)
    beforeFirstDispatch(); // the module is ready (the JIT done): the kernel's own time starts
  for (uint32_t i = 0; i < repeat; ++i) {
    if (CUresult r = d.cuEventRecord(events.events[2 * i], s.stream); r != CUDA_SUCCESS)
      s.fault(req.symbol(), r);
    for (const CudaLaunch &l : launches) {
      std::memcpy(launchBlock, l.origin, sizeof l.origin); // read by the driver at the launch
      CUresult r = d.cuLaunchKernel(function, l.groups[0], l.groups[1], l.groups[2], l.block[0], l.block[1],
                                    l.block[2], unsigned(dynamicShared), s.stream, params.data(), nullptr);
      if (r != CUDA_SUCCESS) {
        if (i == 0 && &l == &launches.front())
          return fail("cannot launch kernel '" + req.symbol() + "': " + d.describe(r));
        s.fault(req.symbol(), r);
      }
    }
    if (CUresult r = d.cuEventRecord(events.events[2 * i + 1], s.stream); r != CUDA_SUCCESS)
      s.fault(req.symbol(), r);
  }
  // What comes back: the returned buffers and textures, and the textures'
  // usage word, queued behind the kernels: one synchronize for all (a
  // direct caller's launch-and-copy), not one for the kernels and one for
  // the copies.
  struct Back {
    CUdeviceptr from;
    size_t bytes;
    std::string *to;
  };
  std::vector<Back> back;
  // Buffers in a shared region go back into it, by DMA when registered.
  std::vector<std::pair<CUdeviceptr, std::span<char>>> backToHost;
  for (int i = 0; i < req.buffers_size(); ++i)
    if (req.buffers(i).returned()) {
      std::string *entry = resp.add_buffers();
      if (const std::span<char> to = hostOf(i); !to.empty())
        backToHost.push_back({memory.pointers[size_t(i)], to.first(std::min<size_t>(to.size(), req.buffers(i).length()))});
      else
        back.push_back({memory.pointers[size_t(i)], req.buffers(i).length(), entry});
    }
  for (size_t i = 0; i < views.size(); ++i)
    if (req.textures(int(i)).returned())
      back.push_back({uintptr_t(views[i].texels), size_t(views[i].bytes()), resp.add_textures()});
  std::string usage;
  if (!views.empty())
    back.push_back({blockOnDevice, sizeof(uint64_t), &usage});
  for (const auto &[from, to] : backToHost)
    if (CUresult r = d.cuMemcpyDtoHAsync(to.data(), from, to.size(), s.stream); r != CUDA_SUCCESS)
      s.fault(req.symbol(), r);
  uint64_t returnedBytes = 0;
  for (const Back &b : back)
    returnedBytes += b.bytes;
  // Where the staging buffer must grow, stagingFor waits for the copies in
  // that read the old one first.
  char *staging = s.stagingFor(returnedBytes);
  if (staging) {
    size_t at = 0;
    for (const Back &b : back) {
      if (b.bytes == 0)
        continue;
      if (CUresult r = d.cuMemcpyDtoHAsync(staging + at, b.from, b.bytes, s.stream); r != CUDA_SUCCESS)
        s.fault(req.symbol(), r);
      at += b.bytes;
    }
  }
  stage(s.stageTimes.launch_us);
  // msld bounds this wait: past the time limit it kills the worker.
  if (CUresult r = d.cuStreamSynchronize(s.stream); r != CUDA_SUCCESS)
    s.fault(req.symbol(), r);
  stage(s.stageTimes.sync_us);
  for (uint32_t i = 0; i < repeat; ++i) {
    float ms = 0;
    if (CUresult r = d.cuEventElapsedTime(&ms, events.events[2 * i], events.events[2 * i + 1]); r != CUDA_SUCCESS)
      s.fault(req.symbol(), r);
    resp.add_dispatch_time_ns(int64_t(double(ms) * 1e6));
  }
  if (staging) {
    size_t at = 0;
    for (const Back &b : back) {
      b.to->assign(staging + at, b.bytes);
      at += b.bytes;
    }
  } else {
    // Too large for the staging buffer: straight to pageable memory, after
    // the stream (the legacy stream's copies do not wait for it).
    for (const Back &b : back) {
      b.to->resize(b.bytes);
      if (b.bytes == 0)
        continue;
      if (CUresult r = d.cuMemcpyDtoH(b.to->data(), b.from, b.bytes); r != CUDA_SUCCESS)
        s.fault(req.symbol(), r);
    }
  }
  if (usage.size() == sizeof(uint64_t)) {
    uint64_t word;
    std::memcpy(&word, usage.data(), sizeof word);
    if (word)
      return fail("kernel " + req.symbol() + ": " + describeTextureUsage(word, "cuda"));
  }
  stage(s.stageTimes.copy_out_us);
  return resp;
}

const CudaDevice::StageTimes &CudaDevice::lastStageTimes() const { return impl_->stageTimes; }

} // namespace msl::executor
