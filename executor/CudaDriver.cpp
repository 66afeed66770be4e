#include "CudaDriver.h"

#include <dlfcn.h>

#include <climits>
#include <cstdlib>
#include <fstream>

namespace msl::executor::cuda {
namespace {

template <typename Fn> bool resolve(void *library, const char *name, Fn &slot, std::string &missing) {
  slot = reinterpret_cast<Fn>(::dlsym(library, name));
  if (!slot)
    missing += std::string(missing.empty() ? "" : ", ") + name;
  return slot != nullptr;
}

// The kernel module's version, for a libcuda whose file name does not say.
std::string kernelModuleVersion() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  std::getline(in, line);
  const std::string marker = "Kernel Module";
  auto at = line.find(marker);
  if (at == std::string::npos)
    return "";
  auto begin = line.find_first_not_of(' ', at + marker.size());
  if (begin == std::string::npos)
    return "";
  auto end = line.find(' ', begin);
  return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

struct Loaded {
  Driver driver{};
  std::string why; // empty when loaded
  bool ok = false;
};

Loaded loadOnce() {
  Loaded l;
  void *library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *e = ::dlerror();
    l.why = std::string("no CUDA driver: cannot load libcuda.so.1 (") + (e ? e : "not found") + ")";
    return l;
  }
  Driver &d = l.driver;
  std::string missing;
  resolve(library, "cuInit", d.cuInit, missing);
  resolve(library, "cuDriverGetVersion", d.cuDriverGetVersion, missing);
  resolve(library, "cuDeviceGetCount", d.cuDeviceGetCount, missing);
  resolve(library, "cuDeviceGet", d.cuDeviceGet, missing);
  resolve(library, "cuDeviceGetName", d.cuDeviceGetName, missing);
  resolve(library, "cuDeviceTotalMem_v2", d.cuDeviceTotalMem, missing);
  resolve(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute, missing);
  resolve(library, "cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain, missing);
  resolve(library, "cuCtxSetCurrent", d.cuCtxSetCurrent, missing);
  resolve(library, "cuCtxSynchronize", d.cuCtxSynchronize, missing);
  resolve(library, "cuModuleLoadData", d.cuModuleLoadData, missing);
  resolve(library, "cuModuleUnload", d.cuModuleUnload, missing);
  resolve(library, "cuModuleGetFunction", d.cuModuleGetFunction, missing);
  resolve(library, "cuLinkCreate_v2", d.cuLinkCreate, missing);
  resolve(library, "cuLinkAddData_v2", d.cuLinkAddData, missing);
  resolve(library, "cuLinkComplete", d.cuLinkComplete, missing);
  resolve(library, "cuLinkDestroy", d.cuLinkDestroy, missing);
  resolve(library, "cuFuncGetAttribute", d.cuFuncGetAttribute, missing);
  resolve(library, "cuFuncSetAttribute", d.cuFuncSetAttribute, missing);
  resolve(library, "cuMemAlloc_v2", d.cuMemAlloc, missing);
  resolve(library, "cuMemFree_v2", d.cuMemFree, missing);
  resolve(library, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD, missing);
  resolve(library, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH, missing);
  resolve(library, "cuMemcpyDtoHAsync_v2", d.cuMemcpyDtoHAsync, missing);
  resolve(library, "cuMemAllocHost_v2", d.cuMemAllocHost, missing);
  resolve(library, "cuMemFreeHost", d.cuMemFreeHost, missing);
  resolve(library, "cuMemHostRegister_v2", d.cuMemHostRegister, missing);
  resolve(library, "cuMemHostUnregister", d.cuMemHostUnregister, missing);
  resolve(library, "cuMemsetD8_v2", d.cuMemsetD8, missing);
  resolve(library, "cuMemcpyHtoDAsync_v2", d.cuMemcpyHtoDAsync, missing);
  resolve(library, "cuMemsetD8Async", d.cuMemsetD8Async, missing);
  resolve(library, "cuStreamCreate", d.cuStreamCreate, missing);
  resolve(library, "cuStreamSynchronize", d.cuStreamSynchronize, missing);
  resolve(library, "cuLaunchKernel", d.cuLaunchKernel, missing);
  resolve(library, "cuEventCreate", d.cuEventCreate, missing);
  resolve(library, "cuEventDestroy_v2", d.cuEventDestroy, missing);
  resolve(library, "cuEventRecord", d.cuEventRecord, missing);
  resolve(library, "cuEventQuery", d.cuEventQuery, missing);
  resolve(library, "cuEventElapsedTime", d.cuEventElapsedTime, missing);
  resolve(library, "cuGetErrorName", d.cuGetErrorName, missing);
  resolve(library, "cuGetErrorString", d.cuGetErrorString, missing);
  if (!missing.empty()) {
    l.why = "the CUDA driver (libcuda.so.1) lacks " + missing + ": too old";
    return l;
  }
  if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
    l.why = r == CUDA_ERROR_NO_DEVICE ? "no CUDA device: the driver sees no GPU" : "cuInit failed: " + d.describe(r);
    return l;
  }
  d.cuDriverGetVersion(&d.cudaVersion);
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void *>(d.cuInit), &info) && info.dli_fname) {
    char resolved[PATH_MAX];
    if (::realpath(info.dli_fname, resolved))
      d.build = driverBuildFromPath(resolved);
  }
  if (d.build.empty())
    d.build = kernelModuleVersion();
  l.ok = true;
  return l;
}

} // namespace

std::string Driver::describe(CUresult r) const {
  const char *name = nullptr, *text = nullptr;
  if (cuGetErrorName)
    cuGetErrorName(r, &name);
  if (cuGetErrorString)
    cuGetErrorString(r, &text);
  std::string out = name ? name : "CUDA error " + std::to_string(r);
  if (text)
    out += std::string(" (") + text + ")";
  return out;
}

std::string driverBuildFromPath(const std::string &path) {
  const std::string marker = ".so.";
  auto at = path.rfind("libcuda.so.");
  if (at == std::string::npos)
    return "";
  std::string version = path.substr(at + std::string("libcuda").size() + marker.size());
  if (version.empty() || version == "1" || version.find_first_not_of("0123456789.") != std::string::npos)
    return "";
  return version;
}

const Driver *load(std::string &why) {
  static const Loaded loaded = loadOnce();
  why = loaded.why;
  return loaded.ok ? &loaded.driver : nullptr;
}

} // namespace msl::executor::cuda
