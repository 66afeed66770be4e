#include "ExecuteService.h"

#include "Textures.h"
#include "CudaDevice.h"
#include "DigestProto.h"

#include "msl/compiler/RequestChecks.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <unordered_set>
#include <unistd.h>

namespace msl::service {
namespace {

using grpc::Status;
using grpc::StatusCode;
using compiler::quoteForMessage;
using nlohmann::json;

Status invalid(std::string message) { return Status(StatusCode::INVALID_ARGUMENT, std::move(message)); }
Status cancelledStatus() {
  return Status(StatusCode::CANCELLED, "the client cancelled the execution or its deadline passed");
}

uint32_t orOne(uint32_t v) { return v ? v : 1; }

std::array<uint32_t, 3> dims(const msl::v1::Size3 &s) { return {s.x(), orOne(s.y()), orOne(s.z())}; }

std::string show(const std::array<uint32_t, 3> &d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// The first diagnostics of a failed compile, for an error message.
std::string firstErrors(const msl::v1::CompileResponse &r) {
  std::string out;
  int n = 0;
  for (const auto &d : r.diagnostics()) {
    if (d.severity() < msl::v1::Diagnostic::ERROR)
      continue;
    if (n++ == 3) {
      out += "; ...";
      break;
    }
    out += (out.empty() ? "" : "; ") + d.file() + ":" + std::to_string(d.line()) + ":" +
           std::to_string(d.column()) + ": " + d.message().substr(0, 300);
  }
  return out;
}

using msl::v1::SamplerBinding;
using msl::v1::TextureBinding;

std::string textureWhere(uint32_t index) { return "the texture at [[texture(" + std::to_string(index) + ")]]"; }

// Bytes of a texture binding whose type, format and sizes checkTexture
// accepted.
uint64_t textureBytes(const TextureBinding &t) {
  return uint64_t(t.width()) * std::max(1u, t.height()) * std::max(1u, t.depth()) *
         std::max(1u, t.array_length()) * executor::pixelFormat(t.format())->texelBytes();
}

std::string textureShape(const TextureBinding &t) {
  std::string slices = t.array_length() > 1 ? " (" + std::to_string(t.array_length()) + " slices)" : "";
  return std::to_string(t.width()) + "x" + std::to_string(std::max(1u, t.height())) + "x" +
         std::to_string(std::max(1u, t.depth())) + slices + " " + TextureBinding::PixelFormat_Name(t.format()) + " " +
         TextureBinding::Type_Name(t.type());
}

// A texture binding's type, pixel format, sizes and contents, on their own.
Status checkTexture(const TextureBinding &t, uint64_t maxBytes) {
  const std::string where = textureWhere(t.index()) + ": ";
  if (t.type() < TextureBinding::TEXTURE_1D || t.type() > TextureBinding::TEXTURE_3D)
    return invalid(where + "its type must be TEXTURE_1D, TEXTURE_2D, TEXTURE_2D_ARRAY or TEXTURE_3D, not " +
                   std::to_string(int(t.type())));
  if (!executor::pixelFormat(t.format()))
    return invalid(where + "pixel format " + std::to_string(int(t.format())) +
                   " is not one the cpu device has (R8_UNORM ... RGBA32_UINT)");
  const bool is1d = t.type() == TextureBinding::TEXTURE_1D, is3d = t.type() == TextureBinding::TEXTURE_3D;
  const bool isArray = t.type() == TextureBinding::TEXTURE_2D_ARRAY;
  const uint32_t side = is3d ? executor::kMaxTexture3dSide : executor::kMaxTextureSide;
  struct Size {
    const char *name;
    uint32_t value;
    bool used; // by this type; else 0 or 1
    uint32_t max;
  };
  for (const Size &s : {Size{"width", t.width(), true, side}, Size{"height", t.height(), !is1d, side},
                        Size{"depth", t.depth(), is3d, executor::kMaxTexture3dSide},
                        Size{"array_length", t.array_length(), isArray, executor::kMaxTextureLayers}}) {
    if (!s.used && s.value > 1)
      return invalid(where + "a " + TextureBinding::Type_Name(t.type()) + " has no " + s.name + " (0 or 1), not " +
                     std::to_string(s.value));
    if (s.used && (s.value == 0 || s.value > s.max))
      return invalid(where + "its " + s.name + " is " + std::to_string(s.value) + "; a " +
                     TextureBinding::Type_Name(t.type()) + " takes 1 to " + std::to_string(s.max));
  }
  const uint64_t bytes = textureBytes(t);
  if (bytes > maxBytes)
    return Status(StatusCode::RESOURCE_EXHAUSTED, where + "a " + textureShape(t) + " is " + std::to_string(bytes) +
                                                      " bytes; the device takes at most " + std::to_string(maxBytes));
  const auto &c = t.contents();
  uint64_t given = bytes;
  switch (c.contents_case()) {
  case msl::v1::BufferContents::kInline:
    given = c.inline_().size();
    break;
  case msl::v1::BufferContents::kDigest:
    if (!isValidDigest(c.digest()))
      return invalid(where + "the digest of its contents " + describe(c.digest()) + " is malformed");
    given = uint64_t(c.digest().size_bytes());
    break;
  case msl::v1::BufferContents::kZeros:
    given = c.zeros();
    break;
  case msl::v1::BufferContents::kShared:
    return invalid(where + "its contents are a shared range; a texture's are inline, a digest or zeros");
  default:
    break; // zeros
  }
  if (given != bytes)
    return invalid(where + "its contents are " + std::to_string(given) + " bytes, but a " + textureShape(t) +
                   " has " + std::to_string(bytes) + " (width * height * depth * array_length * " +
                   std::to_string(executor::pixelFormat(t.format())->texelBytes()) + " bytes a texel)");
  return Status::OK;
}

Status checkSampler(const SamplerBinding &s) {
  const std::string where = "the sampler at [[sampler(" + std::to_string(s.index()) + ")]]: ";
  if (!SamplerBinding::Filter_IsValid(s.min_filter()) || !SamplerBinding::Filter_IsValid(s.mag_filter()))
    return invalid(where + "its filters must be NEAREST or LINEAR");
  for (auto mode : {s.s_address(), s.t_address(), s.r_address()})
    if (!SamplerBinding::AddressMode_IsValid(mode))
      return invalid(where + "address mode " + std::to_string(int(mode)) + " is not one of SamplerBinding.AddressMode");
  if (!SamplerBinding::BorderColor_IsValid(s.border_color()))
    return invalid(where + "border color " + std::to_string(int(s.border_color())) +
                   " is not one of SamplerBinding.BorderColor");
  if (!SamplerBinding::CompareFunction_IsValid(s.compare_function()))
    return invalid(where + "compare function " + std::to_string(int(s.compare_function())) +
                   " is not one of SamplerBinding.CompareFunction");
  if (!s.normalized_coordinates()) {
    auto edgeOrZero = [](SamplerBinding::AddressMode m) {
      return m == SamplerBinding::CLAMP_TO_EDGE || m == SamplerBinding::CLAMP_TO_ZERO;
    };
    if (s.min_filter() != s.mag_filter() || !edgeOrZero(s.s_address()) || !edgeOrZero(s.t_address()))
      return invalid(where + "pixel coordinates (normalized_coordinates false) need equal min and mag filters and "
                             "CLAMP_TO_EDGE or CLAMP_TO_ZERO s and t address modes, as in Metal");
  }
  return Status::OK;
}

uint64_t samplerState(const SamplerBinding &s) {
  const uint32_t address[3] = {uint32_t(s.s_address()), uint32_t(s.t_address()), uint32_t(s.r_address())};
  return executor::samplerStateOf(s.normalized_coordinates(), s.min_filter(), s.mag_filter(), address,
                                  s.border_color(), s.compare_function());
}

// Whether texture binding `t` fits the kernel's texture argument `arg`
// (texture type, element type, pixel format); `what` names the argument.
Status textureFits(const json &arg, const TextureBinding &t, const std::string &what) {
  const std::string type = arg.value("type", "");
  const std::string textureType = arg.value("texture_type", type.substr(0, type.find('<')));
  std::string element = arg.value("element_type", "");
  if (element.empty() && type.find('<') != std::string::npos) { // a reflection from before element_type
    size_t open = type.find('<') + 1;
    element = type.substr(open, type.find_first_of(",>", open) - open);
  }
  static const std::map<std::string, TextureBinding::Type> kBinds = {
      {"texture1d", TextureBinding::TEXTURE_1D},       {"texture2d", TextureBinding::TEXTURE_2D},
      {"depth2d", TextureBinding::TEXTURE_2D},         {"texture2d_array", TextureBinding::TEXTURE_2D_ARRAY},
      {"depth2d_array", TextureBinding::TEXTURE_2D_ARRAY}, {"texture3d", TextureBinding::TEXTURE_3D}};
  auto bind = kBinds.find(textureType);
  if (bind == kBinds.end())
    return Status(StatusCode::UNIMPLEMENTED,
                  what + " is a " + textureType + ", which msld's devices do not support (they have texture1d, "
                         "texture2d, texture2d_array, texture3d, depth2d and depth2d_array)");
  if (t.type() != bind->second)
    return invalid(what + " is a " + textureType + ", which takes a " + TextureBinding::Type_Name(bind->second) +
                   " texture, but a " + TextureBinding::Type_Name(t.type()) + " is bound there");
  const executor::PixelFormat format = *executor::pixelFormat(t.format());
  const bool depth = textureType.rfind("depth", 0) == 0;
  bool fits = false;
  std::string takes;
  if (element == "float" || element == "half") {
    fits = !format.isInteger() && (!depth || (format.components == 1 && format.kind != executor::TexelKind::Unorm8));
    takes = depth ? "R16_FLOAT or R32_FLOAT" : "the UNORM and FLOAT formats";
  } else if (element == "int" || element == "short") {
    fits = format.kind == executor::TexelKind::Sint32;
    takes = "the SINT formats";
  } else if (element == "uint" || element == "ushort") {
    fits = format.kind == executor::TexelKind::Uint32;
    takes = "the UINT formats";
  } else {
    return Status(StatusCode::UNIMPLEMENTED, what + " has element type '" + element +
                                                 "', which msld's devices do not support");
  }
  if (!fits)
    return invalid(what + " is a " + textureType + "<" + element + ">, which takes " + takes + ", not " +
                   TextureBinding::PixelFormat_Name(t.format()));
  return Status::OK;
}

// MSLD_EXEC_TIMING=FILE: one line per execution (bench/RESULTS.md): from the
// request to its job queued (compile lookup, checks, binding), waiting for a
// worker, the worker's round trip, building the response, and answering
// (serializing it for gRPC); then the first dispatch's kernel time, and the
// worker's round trip up to its start note (the request's transfer, buffer
// setup and the JIT; all of it when no note came).
FILE *execTimingFile() {
  static FILE *file = [] {
    const char *path = std::getenv("MSLD_EXEC_TIMING");
    return path && *path ? std::fopen(path, "a") : nullptr;
  }();
  return file;
}

std::string readFirstLine(const char *path, const char *key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        size_t start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
      }
    }
  return {};
}

} // namespace

/// One Execute a caller waits for.
class ExecuteService::Call {
public:
  explicit Call(Done done) : done_(std::move(done)) {}
  bool answer(Status status, msl::v1::ExecuteResponse response = {}) {
    if (answered_.exchange(true))
      return false;
    done_(std::move(status), std::move(response));
    return true;
  }
  bool answered() const { return answered_.load(); }

  msl::v1::ExecuteRequest request;
  std::string client;
  std::string kernel;
  // MSLD_EXEC_TIMING: when the RPC reached msld, when the call came and
  // when its job was queued.
  std::chrono::steady_clock::time_point arrived, received = std::chrono::steady_clock::now(), compiled, queued;
  Target *target = nullptr; // the device it runs on
  CancelFlag cancel{false};
  // Its worker writes into a client's shared region: a cancel is answered
  // by the dispatcher once the worker is stopped, not at once.
  std::atomic<bool> writesSharedRegion{false};
  std::mutex mu;                                // guards compileCall
  std::shared_ptr<CompileService::Call> compileCall;

private:
  Done done_;
  std::atomic<bool> answered_{false};
};

/// A checked execution, ready for a worker.
struct ExecuteService::Job {
  ~Job() {
    if (counter)
      *counter -= bytes;
  }
  std::shared_ptr<Call> call;
  std::atomic<uint64_t> *counter = nullptr; // bytesInFlight_, while this job holds `bytes`
  uint64_t bytes = 0;
  msl::internal::ExecWorkerRequest work;
  std::vector<uint32_t> returned; // request buffer positions, in work.buffers order
  std::vector<uint32_t> returnedTextures; // their [[texture(n)]], in work.textures order
  // Per request buffer: whether its bytes lie in a shared region (the
  // worker reads and writes them there).
  std::vector<bool> inSharedRegion;
  // The regions work.host_regions names, in order (their memfds go to the
  // worker). Held, so a region outlives its client's connection until the
  // job is answered.
  std::vector<std::shared_ptr<SharedRegion>> regions;
  std::string symbol;
  bool compileHit = false;
  std::chrono::milliseconds timeout{0};
  std::string cubinKey; // cuda: where the linked module is kept
  std::shared_ptr<const CompiledKernel> kernel; // its module, put in work when the worker needs it
};

/// A device Execute can name: the cpu, or one GPU.
struct ExecuteService::Target {
  explicit Target(FairQueueOptions queueOptions) : queue(queueOptions) {}
  msl::v1::Device device; // as ListDevices shows it
  bool cuda = false;
  WorkerPool *workers = nullptr;
  // Module digests this device's workers were sent (and ran): later
  // requests go without the module, and a worker that lacks it says so
  // (ExecWorkerResponse.module_needed). Bounded: cleared when full.
  std::mutex modulesMu;
  std::unordered_set<std::string> modulesSent;
  bool hasModule(const std::string &digest) {
    std::lock_guard lock(modulesMu);
    return modulesSent.count(digest) > 0;
  }
  void noteModule(const std::string &digest) {
    std::lock_guard lock(modulesMu);
    if (modulesSent.size() >= 4096)
      modulesSent.clear();
    modulesSent.insert(digest);
  }
  FairQueue<Job> queue;
  std::vector<std::thread> dispatchers;
  std::string compileSm;  // cuda: the SM the PTX is compiled for
  CubinKey cubinKeyBase;  // cuda: the cubin key but for the PTX digest
};

namespace {
// The newest SM the compiler (LLVM 19) targets; PTX for it runs on newer
// GPUs through the driver's JIT.
constexpr int kNewestCompilerSm = 90;

std::string compileSmFor(const std::string &architecture) {
  int sm = 0;
  if (architecture.rfind("sm_", 0) == 0 && architecture.size() <= 6 &&
      architecture.find_first_not_of("0123456789", 3) == std::string::npos)
    sm = std::stoi(architecture.substr(3));
  return sm > 0 && sm <= kNewestCompilerSm ? architecture : "sm_" + std::to_string(kNewestCompilerSm);
}
} // namespace

ExecuteService::ExecuteService(cache::ContentStore &store, CompileService &compiler, WorkerPool *cpuWorkers,
                               ServiceMetrics &metrics, ExecuteServiceOptions options, CudaDevices *cuda)
    : store_(store), compiler_(compiler), metrics_(metrics), options_(options), cuda_(cuda) {
  if (cpuWorkers) {
    auto t = std::make_unique<Target>(options_.queue);
    t->workers = cpuWorkers;
    t->device = cpuDevice();
    targets_.push_back(std::move(t));
  }
  if (cuda)
    for (CudaGpu &gpu : cuda->gpus()) {
      auto t = std::make_unique<Target>(options_.queue);
      t->cuda = true;
      t->workers = gpu.workers.get();
      t->device = gpu.device;
      t->device.set_max_buffer_bytes(std::min(options_.maxBufferBytes, gpu.device.memory_bytes()));
      t->compileSm = compileSmFor(gpu.device.architecture());
      t->cubinKeyBase = {"", gpu.device.architecture(), cuda->driverBuild(), cuda->cudaVersion(),
                         cuda->jitIdentity()};
      targets_.push_back(std::move(t));
    }
  for (auto &t : targets_) {
    int n = std::max(1, t->workers->options().workers);
    for (int i = 0; i < n; ++i)
      t->dispatchers.emplace_back([this, target = t.get()] { dispatch(*target); });
  }
}

ExecuteService::~ExecuteService() { shutdown(); }

void ExecuteService::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopped_)
      return;
    stopped_ = true;
  }
  for (auto &target : targets_) {
    for (auto &job : target->queue.close())
      job->call->answer(Status(StatusCode::UNAVAILABLE, "msld is shutting down; the kernel did not run"));
    for (auto &t : target->dispatchers)
      t.join();
    target->dispatchers.clear();
  }
}

msl::v1::Device ExecuteService::cpuDevice() const {
  msl::v1::Device d;
  d.set_name("cpu");
  d.set_kind(msl::v1::Device::CPU);
  std::string model = readFirstLine("/proc/cpuinfo", "model name");
  std::string flags = readFirstLine("/proc/cpuinfo", "flags");
  std::string isa = flags.find("avx512f") != std::string::npos ? "avx512f"
                    : flags.find("avx2") != std::string::npos  ? "avx2"
                                                               : "sse2";
  d.set_description((model.empty() ? std::string("x86-64 CPU") : model) + " (x86-64, " + isa + ")");
  d.set_architecture("x86-64 (" + isa + ")");
  d.set_compute_units(std::max(1u, std::thread::hardware_concurrency()));
  d.set_memory_bytes(uint64_t(::sysconf(_SC_PHYS_PAGES)) * uint64_t(::sysconf(_SC_PAGESIZE)));
  d.set_max_threads_per_threadgroup(options_.maxThreadsPerThreadgroup);
  d.set_max_threadgroup_memory_bytes(options_.maxThreadgroupMemoryBytes);
  // 32 consecutive work-items, as on Apple GPUs (executor/WorkGroupFunction.h).
  d.set_simd_width(32);
  d.set_max_buffer_bytes(options_.maxBufferBytes);
  return d;
}

Status ExecuteService::listDevices(const msl::v1::ListDevicesRequest &, msl::v1::ListDevicesResponse &response) {
  for (const auto &t : targets_)
    *response.add_devices() = t->device;
  return Status::OK;
}

Status ExecuteService::findTarget(const std::string &device, Target *&target) const {
  const std::string name = device.empty() ? "cpu" : device;
  for (const auto &t : targets_)
    if (t->device.name() == name) {
      target = t.get();
      return Status::OK;
    }
  if (name == "cpu")
    return Status(StatusCode::FAILED_PRECONDITION, "this msld runs no execution workers (--exec-workers 0)");
  if (name.rfind("cuda:", 0) == 0 && name.size() > 5 && name.size() <= 9 &&
      name.find_first_not_of("0123456789", 5) == std::string::npos) {
    std::string have;
    for (const auto &t : targets_)
      if (t->cuda)
        have += (have.empty() ? "" : ", ") + t->device.name();
    if (have.empty())
      return Status(StatusCode::FAILED_PRECONDITION,
                    "device " + quoteForMessage(device) + ": no CUDA device is present on this msld (" +
                        (cuda_ && !cuda_->unavailable().empty() ? cuda_->unavailable() : std::string("none found")) +
                        "; ListDevices lists the devices it has)");
    return Status(StatusCode::FAILED_PRECONDITION,
                  "device " + quoteForMessage(device) + " is not present on this msld; its CUDA devices are " + have);
  }
  return invalid("unknown device " + quoteForMessage(device) + ": use \"cpu\" or \"cuda:N\"");
}

Status ExecuteService::checkRequest(const msl::v1::ExecuteRequest &r, Target *&target) const {
  if (Status s = findTarget(r.device(), target); !s.ok())
    return s;
  if (r.kernel().empty())
    return invalid("ExecuteRequest.kernel is required: the kernel's function name or [[host_name]]");
  if (r.kernel().size() > 1024)
    return invalid("the kernel name is " + std::to_string(r.kernel().size()) + " bytes; at most 1024");
  if (r.kernel_source_case() == msl::v1::ExecuteRequest::KERNEL_SOURCE_NOT_SET)
    return invalid("ExecuteRequest needs the kernel: a compile request or a compiled kernel's digests");
  auto bounded = [&](const char *what, int n) -> Status {
    if (size_t(n) > options_.maxBindings)
      return invalid(std::string("the request has ") + std::to_string(n) + " " + what + "; at most " +
                     std::to_string(options_.maxBindings));
    return Status::OK;
  };
  for (auto s : {bounded("buffers", r.buffers_size()), bounded("buffer bindings", r.buffer_bindings_size()),
                 bounded("setBytes bindings", r.bytes_size()),
                 bounded("threadgroup memory bindings", r.threadgroup_memory_size())})
    if (!s.ok())
      return s;
  if (size_t(r.textures_size()) > options_.maxTextureBindings ||
      size_t(r.samplers_size()) > options_.maxSamplerBindings)
    return invalid("the request has " + std::to_string(r.textures_size()) + " textures and " +
                   std::to_string(r.samplers_size()) + " samplers; at most " +
                   std::to_string(options_.maxTextureBindings) + " and " + std::to_string(options_.maxSamplerBindings));
  std::set<uint32_t> textureIndices, samplerIndices;
  for (const auto &t : r.textures()) {
    if (t.index() >= options_.maxTextureBindings)
      return invalid(textureWhere(t.index()) + ": the index is above Metal's " +
                     std::to_string(options_.maxTextureBindings - 1));
    if (!textureIndices.insert(t.index()).second)
      return invalid("[[texture(" + std::to_string(t.index()) + ")]] is bound twice");
  }
  for (const auto &s : r.samplers()) {
    if (s.index() >= options_.maxSamplerBindings)
      return invalid("the sampler at [[sampler(" + std::to_string(s.index()) + ")]]: the index is above Metal's " +
                     std::to_string(options_.maxSamplerBindings - 1));
    if (!samplerIndices.insert(s.index()).second)
      return invalid("[[sampler(" + std::to_string(s.index()) + ")]] is bound twice");
    if (Status st = checkSampler(s); !st.ok())
      return st;
  }
  uint64_t total = 0;
  for (int i = 0; i < r.buffers_size(); ++i) {
    const auto &b = r.buffers(i);
    uint64_t size = b.has_digest() ? uint64_t(std::max<int64_t>(0, b.digest().size_bytes()))
                    : b.contents_case() == msl::v1::BufferContents::kZeros  ? b.zeros()
                    : b.contents_case() == msl::v1::BufferContents::kShared ? b.shared().length()
                                                                              : b.inline_().size();
    if (size > target->device.max_buffer_bytes())
      return Status(StatusCode::RESOURCE_EXHAUSTED, "buffer " + std::to_string(i) + " is " + std::to_string(size) +
                                                        " bytes; the device takes at most " +
                                                        std::to_string(target->device.max_buffer_bytes()));
    total += size;
  }
  for (const auto &t : r.textures()) {
    if (Status s = checkTexture(t, options_.maxBufferBytes); !s.ok())
      return s;
    total += textureBytes(t);
  }
  if (total > options_.maxExecuteBytes)
    return Status(StatusCode::RESOURCE_EXHAUSTED, "the buffers and textures total " + std::to_string(total) +
                                                      " bytes; one Execute takes at most " +
                                                      std::to_string(options_.maxExecuteBytes));
  for (const auto &b : r.bytes())
    if (b.data().size() > options_.maxBytesBinding)
      return invalid("setBytes data at [[buffer(" + std::to_string(b.index()) + ")]] is " +
                     std::to_string(b.data().size()) + " bytes; at most " + std::to_string(options_.maxBytesBinding) +
                     " (use a buffer)");
  for (const auto &b : r.buffer_bindings())
    if (b.buffer() >= uint32_t(r.buffers_size()))
      return invalid("the binding at [[buffer(" + std::to_string(b.index()) + ")]] names buffer " +
                     std::to_string(b.buffer()) + ", but the request has " + std::to_string(r.buffers_size()));

  const auto &d = r.dispatch();
  auto tg = dims(d.threads_per_threadgroup());
  if (tg[0] == 0)
    return invalid("dispatch.threads_per_threadgroup.x must be at least 1");
  uint64_t threads = uint64_t(tg[0]) * tg[1] * tg[2];
  if (threads > target->device.max_threads_per_threadgroup())
    return invalid("threads per threadgroup " + show(tg) + " = " + std::to_string(threads) + " is above " +
                   target->device.name() + "'s limit of " +
                   std::to_string(target->device.max_threads_per_threadgroup()));
  if (d.grid_case() == msl::v1::Dispatch::GRID_NOT_SET)
    return invalid("dispatch needs a grid: threads (dispatchThreads) or threadgroups (dispatchThreadgroups)");
  bool inThreads = d.grid_case() == msl::v1::Dispatch::kThreads;
  auto grid = dims(inThreads ? d.threads() : d.threadgroups());
  if (grid[0] == 0)
    return invalid("dispatch grid x must be at least 1");
  if (!inThreads)
    for (int c = 0; c < 3; ++c)
      if (uint64_t(grid[c]) * tg[c] > UINT32_MAX)
        return invalid("the grid " + show(grid) + " threadgroups of " + show(tg) +
                       " threads overflows 32-bit thread positions");
  if (r.repeat() > options_.maxRepeat)
    return invalid("repeat " + std::to_string(r.repeat()) + " is above " + std::to_string(options_.maxRepeat));
  if (r.timeout_ms() > options_.maxTimeoutMs)
    return invalid("timeout_ms " + std::to_string(r.timeout_ms()) + " is above msld's limit of " +
                   std::to_string(options_.maxTimeoutMs));
  return Status::OK;
}

std::shared_ptr<ExecuteService::Call> ExecuteService::execute(msl::v1::ExecuteRequest requestIn,
                                                              const std::string &client, Done done,
                                                              std::chrono::steady_clock::time_point arrived) {
  auto call = std::make_shared<Call>(std::move(done));
  call->arrived = arrived;
  if (Status s = checkRequest(requestIn, call->target); !s.ok()) {
    call->answer(s);
    return call;
  }
  const bool cuda = call->target->cuda;
  call->request = std::move(requestIn);
  call->client = client;
  call->kernel = call->request.kernel();
  const auto &request = call->request;

  if (request.has_compiled()) {
    const auto &k = request.compiled();
    if (!isValidDigest(k.module()) || !isValidDigest(k.reflection())) {
      call->answer(invalid("the compiled kernel's digests are malformed: " + describe(k.module()) + ", " +
                           describe(k.reflection())));
      return call;
    }
    auto module = store_.get(fromProto(k.module()));
    auto reflection = store_.get(fromProto(k.reflection()));
    if (!module || !reflection) {
      call->answer(Status(StatusCode::FAILED_PRECONDITION,
                          "the compiled kernel's " + std::string(!module ? "module" : "reflection") +
                              " is not in the store: compile it again or upload it"));
      return call;
    }
    auto kernel = std::make_shared<CompiledKernel>();
    kernel->module = module.take();
    kernel->moduleDigest = k.module().hash();
    kernel->reflection = json::parse(reflection.take(), nullptr, /*allow_exceptions=*/false);
    prepare(call, kernel, true);
    return call;
  }

  // Compile for the device through the action cache: bitcode for the cpu,
  // PTX for the GPU's SM.
  msl::v1::CompileRequest compile = request.compile();
  const msl::v1::ArtifactKind moduleKind = cuda ? msl::v1::PTX : msl::v1::LLVM_BITCODE;
  compile.mutable_target()->set_arch(cuda ? msl::v1::Target::NVPTX64 : msl::v1::Target::X86_64);
  if (cuda)
    compile.mutable_target()->set_cpu(call->target->compileSm);
  else
    compile.mutable_target()->clear_cpu();
  compile.clear_outputs();
  compile.add_outputs(moduleKind);
  compile.add_outputs(msl::v1::REFLECTION);
  // Run before with these very compile bytes: the kernel is in hand.
  std::string compileKey;
  {
    google::protobuf::io::StringOutputStream stream(&compileKey);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    compile.SerializeToCodedStream(&coded);
  }
  if (auto kept = compiled_.find(compileKey)) {
    prepare(call, kept, true);
    return call;
  }
  std::weak_ptr<Call> weak = call;
  auto compileCall = compiler_.compile(compile, client, [this, weak, moduleKind,
                                                         compileKey = std::move(compileKey)](CompileReply reply) {
    auto call = weak.lock();
    if (!call || call->answered())
      return;
    if (!reply.status.ok()) {
      call->answer(reply.status);
      return;
    }
    const auto &r = reply.response;
    if (!r.success()) {
      call->answer(invalid("the kernel's source does not compile: " + firstErrors(r)));
      return;
    }
    auto kernel = std::make_shared<CompiledKernel>();
    std::string reflection;
    for (const auto &a : r.artifacts()) {
      std::string bytes = a.inline_data();
      if (bytes.empty() && a.digest().size_bytes() > 0) {
        auto blob = store_.get(fromProto(a.digest()));
        if (!blob) {
          call->answer(Status(StatusCode::UNAVAILABLE, "the compiled kernel left the store; retry"));
          return;
        }
        bytes = blob.take();
      }
      if (a.kind() == moduleKind) {
        kernel->module = std::move(bytes);
        kernel->moduleDigest = a.digest().hash();
      } else if (a.kind() == msl::v1::REFLECTION) {
        reflection = std::move(bytes);
      }
    }
    kernel->reflection = json::parse(reflection, nullptr, /*allow_exceptions=*/false);
    if (!kernel->reflection.is_discarded())
      compiled_.keep(compileKey, kernel);
    prepare(call, kernel, r.cache_hit());
  });
  std::lock_guard lock(call->mu);
  call->compileCall = std::move(compileCall);
  return call;
}

void ExecuteService::prepare(const std::shared_ptr<Call> &call, const std::shared_ptr<const CompiledKernel> &kernel,
                             bool compileHit) {
  // A CompiledKernel's reflection comes from the store, i.e. possibly from a
  // client: any shape it has must end in an error, never in a throw.
  try {
    prepareChecked(call, kernel, compileHit);
  } catch (const std::exception &e) {
    call->answer(invalid(std::string("the kernel's reflection is malformed: ") + e.what()));
  }
}

void ExecuteService::prepareChecked(const std::shared_ptr<Call> &call,
                                    const std::shared_ptr<const CompiledKernel> &kernelIn, bool compileHit) {
  const CompiledKernel &compiled = *kernelIn;
  call->compiled = std::chrono::steady_clock::now();
  const auto &r = call->request;
  // The request is this call's own (its bytes leave it below); `r` reads it.
  msl::v1::ExecuteRequest &owned = call->request;
  Target &target = *call->target;
  const std::string &deviceName = target.device.name();
  const json &reflection = compiled.reflection;
  const std::string &module = compiled.module, &moduleDigest = compiled.moduleDigest;
  if (reflection.is_discarded() || !reflection.is_object() || !reflection.contains("functions")) {
    call->answer(invalid("the kernel's reflection is not msld's reflection JSON"));
    return;
  }
  const json *kernel = nullptr;
  std::string kernels;
  for (const auto &f : reflection["functions"]) {
    if (f.value("stage", "") != "kernel")
      continue;
    kernels += (kernels.empty() ? "" : ", ") + f.value("name", "");
    if (f.value("name", "") == r.kernel() || f.value("symbol", "") == r.kernel())
      kernel = &f;
  }
  if (!kernel) {
    call->answer(invalid("unknown kernel " + quoteForMessage(r.kernel()) + ": the source's kernels are " +
                         (kernels.empty() ? std::string("none") : kernels)));
    return;
  }
  const std::string name = kernel->value("name", "");
  auto job = std::make_shared<Job>();
  job->call = call;
  job->symbol = kernel->value("symbol", name);
  job->compileHit = compileHit;
  job->inSharedRegion.resize(size_t(r.buffers_size()));
  auto &work = job->work;

  // Limits the kernel sets for itself.
  auto tg = dims(r.dispatch().threads_per_threadgroup());
  uint64_t threads = uint64_t(tg[0]) * tg[1] * tg[2];
  if (kernel->contains("attributes"))
    for (const auto &a : (*kernel)["attributes"]) {
      std::string attr = a.is_string() ? a.get<std::string>() : "";
      const std::string prefix = "max_total_threads_per_threadgroup:";
      if (attr.rfind(prefix, 0) == 0 && threads > std::stoull(attr.substr(prefix.size()))) {
        call->answer(invalid("threads per threadgroup " + show(tg) + " = " + std::to_string(threads) +
                             " is above kernel '" + name + "''s [[max_total_threads_per_threadgroup(" +
                             attr.substr(prefix.size()) + ")]]"));
        return;
      }
    }

  // The request's buffers, then its setBytes data as buffers of their own.
  uint64_t bytesIn = 0;
  for (int i = 0; i < r.buffers_size(); ++i) {
    const auto &b = r.buffers(i);
    auto *out = work.add_buffers();
    switch (b.contents_case()) {
    case msl::v1::BufferContents::kInline:
      // Moved, not copied: the request is dropped once the job is built.
      out->set_length(b.inline_().size());
      out->mutable_data()->swap(*owned.mutable_buffers(i)->mutable_inline_());
      break;
    case msl::v1::BufferContents::kDigest: {
      if (!isValidDigest(b.digest())) {
        call->answer(invalid("buffer " + std::to_string(i) + "'s digest " + describe(b.digest()) + " is malformed"));
        return;
      }
      auto blob = store_.get(fromProto(b.digest()));
      if (!blob) {
        call->answer(Status(StatusCode::FAILED_PRECONDITION,
                            "buffer " + std::to_string(i) + "'s blob " + describe(b.digest()) +
                                " is not in the store: upload it with BatchUpdateBlobs first"));
        return;
      }
      out->set_length(blob->size());
      out->set_data(blob.take());
      break;
    }
    case msl::v1::BufferContents::kZeros:
      out->set_length(b.zeros());
      break;
    case msl::v1::BufferContents::kShared: {
      const auto &range = b.shared();
      auto region = sharedRegions_ ? sharedRegions_->find(range.region()) : nullptr;
      if (!region) {
        call->answer(invalid("buffer " + std::to_string(i) + " names shared region '" +
                             range.region().substr(0, 64) + "', which msld does not have" +
                             (sharedRegions_ ? " (a region lives while its client's connection to "
                                               "--shared-regions-socket stays open)"
                                             : " (it serves none: --shared-regions-socket)")));
        return;
      }
      if (range.offset() > region->size || range.length() > region->size - range.offset()) {
        call->answer(invalid("buffer " + std::to_string(i) + ": " + std::to_string(range.length()) +
                             " bytes from offset " + std::to_string(range.offset()) +
                             " are past the end of its shared region (" + std::to_string(region->size) +
                             " bytes)"));
        return;
      }
      // The worker reads the range in place: no copy here.
      size_t at = 0;
      while (at < job->regions.size() && job->regions[at] != region)
        ++at;
      if (at == job->regions.size()) {
        if (at == kMaxDescriptorsPerMessage) {
          call->answer(invalid("the buffers name more than " + std::to_string(kMaxDescriptorsPerMessage) +
                               " shared regions"));
          return;
        }
        auto *named = work.add_host_regions();
        named->set_serial(region->serial);
        named->set_size(region->size);
        job->regions.push_back(region);
      }
      out->set_length(range.length());
      out->mutable_host()->set_region(uint32_t(at));
      out->mutable_host()->set_offset(range.offset());
      out->mutable_host()->set_length(range.length());
      job->inSharedRegion[size_t(i)] = true;
      call->writesSharedRegion = true;
      break;
    }
    default:
      out->set_length(0);
    }
    bytesIn += out->length();
  }
  std::map<uint32_t, std::pair<uint32_t, uint64_t>> bufferAt; // [[buffer(n)]] -> (buffer, offset)
  for (const auto &b : r.buffer_bindings())
    if (!bufferAt.emplace(b.index(), std::make_pair(b.buffer(), b.offset())).second) {
      call->answer(invalid("[[buffer(" + std::to_string(b.index()) + ")]] is bound twice"));
      return;
    }
  for (const auto &b : r.bytes()) {
    auto *out = work.add_buffers();
    out->set_data(b.data());
    out->set_length(b.data().size());
    if (!bufferAt.emplace(b.index(), std::make_pair(uint32_t(work.buffers_size() - 1), 0)).second) {
      call->answer(invalid("[[buffer(" + std::to_string(b.index()) + ")]] is bound twice"));
      return;
    }
  }
  std::map<uint32_t, uint32_t> threadgroupAt;
  for (const auto &t : r.threadgroup_memory())
    threadgroupAt[t.index()] = t.length();
  std::map<uint32_t, int> textureAt, samplerAt; // [[texture(n)]], [[sampler(n)]] -> position in the request
  for (int i = 0; i < r.textures_size(); ++i)
    textureAt[r.textures(i).index()] = i;
  for (int i = 0; i < r.samplers_size(); ++i)
    samplerAt[r.samplers(i).index()] = i;

  // Each slot of the entry's args[], as the reflection lists them.
  std::map<std::string, const json *> argByBinding;
  for (const auto &a : (*kernel)["arguments"])
    if (a.contains("index"))
      argByBinding[a.value("kind", "") + ":" + std::to_string(a.value("index", 0))] = &a;
  uint64_t threadgroupBytes = kernel->value("threadgroup_memory_bytes", uint64_t(0));
  std::vector<bool> returned(size_t(work.buffers_size()), false);
  for (const auto &param : (*kernel)["entry"]["params"]) {
    std::string p = param.get<std::string>();
    auto colon = p.find(':');
    std::string kind = p.substr(0, colon);
    if (kind == "threadgroup_offset") // [[threadgroup(n)]]: memory the runtime provides
      kind = "threadgroup";
    std::string digits = p.substr(colon + 1);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 6) {
      call->answer(Status(StatusCode::UNIMPLEMENTED, "kernel '" + name + "''s argument " + quoteForMessage(p) +
                                                         " is not supported by the " + deviceName + " device yet"));
      return;
    }
    if (kind == "launch" && target.cuda)
      continue; // the PTX entry's launch block: the CUDA device fills it in
    uint32_t index = uint32_t(std::stoul(digits));
    std::string key = kind + ":" + digits;
    const json *arg = argByBinding.count(key) ? argByBinding[key] : nullptr;
    std::string argName = arg ? "'" + arg->value("name", "") + "' " : "";
    auto *slot = work.add_slots();
    const bool handle = kind == "texture" || kind == "sampler";
    const unsigned arrayLength = arg ? arg->value("array_length", 0u) : 0u;
    if (arg && !arg->value("present", true) && handle) {
      // Absent (its function constant is false): null handles (the entry
      // still copies an array's).
      slot->set_kind(msl::internal::ExecSlot::HANDLE);
      slot->set_handle_array(arrayLength > 0);
      for (unsigned k = 0; k < std::min<unsigned>(arrayLength, unsigned(options_.maxTextureBindings)); ++k)
        slot->add_handles()->set_sampler_state(0);
      continue;
    }
    if (arg && !arg->value("present", true)) {
      // [[function_constant(name)]] with that constant false: the argument
      // does not exist and needs no binding; an empty buffer of its own
      // stands in (any access lands in its guard pages).
      slot->set_kind(msl::internal::ExecSlot::BUFFER);
      slot->set_buffer(uint32_t(work.buffers_size()));
      work.add_buffers()->set_length(0);
      continue;
    }
    if (kind == "buffer") {
      auto it = bufferAt.find(index);
      if (it == bufferAt.end()) {
        call->answer(invalid("kernel '" + name + "''s argument " + argName + "at [[buffer(" + std::to_string(index) +
                             ")]] has no binding"));
        return;
      }
      auto [buffer, offset] = it->second;
      uint64_t length = work.buffers(int(buffer)).length();
      uint64_t need = arg ? arg->value("type_size", uint64_t(0)) : 0;
      if (offset > length || length - offset < need) {
        call->answer(invalid("kernel '" + name + "''s argument " + argName + "at [[buffer(" + std::to_string(index) +
                             ")]] needs at least " + std::to_string(std::max<uint64_t>(need, offset)) +
                             " bytes (its type" + (offset ? " after the binding offset" : std::string()) +
                             "), but the buffer bound there has " + std::to_string(length - std::min(length, offset))));
        return;
      }
      slot->set_kind(msl::internal::ExecSlot::BUFFER);
      slot->set_buffer(buffer);
      slot->set_offset(offset);
      bool writable = arg && (arg->contains("writable") ? arg->value("writable", false)
                                                        : arg->value("access", "read") != "read");
      if (writable && buffer < uint32_t(r.buffers_size()))
        returned[buffer] = true;
    } else if (kind == "threadgroup") {
      auto it = threadgroupAt.find(index);
      if (it == threadgroupAt.end() || it->second == 0) {
        call->answer(invalid("kernel '" + name + "''s argument " + argName + "at [[threadgroup(" +
                             std::to_string(index) + ")]] has no threadgroup memory length"));
        return;
      }
      slot->set_kind(msl::internal::ExecSlot::THREADGROUP);
      slot->set_length(it->second);
      threadgroupBytes += (uint64_t(it->second) + 15) / 16 * 16;
    } else if (handle) {
      if (!arg) {
        call->answer(invalid("the kernel's reflection has no argument for its entry parameter " + quoteForMessage(p)));
        return;
      }
      // One handle, or a metal::array of them at consecutive indices.
      slot->set_kind(msl::internal::ExecSlot::HANDLE);
      slot->set_handle_array(arrayLength > 0);
      if (arrayLength > options_.maxTextureBindings) {
        call->answer(invalid("kernel '" + name + "''s argument " + argName + "is an array of " +
                             std::to_string(arrayLength) + "; at most " + std::to_string(options_.maxTextureBindings)));
        return;
      }
      for (uint32_t k = 0; k < std::max(1u, arrayLength); ++k) {
        const std::string binding = "[[" + kind + "(" + std::to_string(uint64_t(index) + k) + ")]]";
        const std::string what = "kernel '" + name + "''s argument " + argName + "at " + binding;
        const auto &bound = kind == "texture" ? textureAt : samplerAt;
        auto it = bound.find(index + k);
        if (it == bound.end()) {
          call->answer(invalid(what + " has no binding"));
          return;
        }
        if (kind == "sampler") {
          slot->add_handles()->set_sampler_state(samplerState(r.samplers(it->second)));
          continue;
        }
        const TextureBinding &t = r.textures(it->second);
        if (Status fits = textureFits(*arg, t, what); !fits.ok()) {
          call->answer(fits);
          return;
        }
        slot->add_handles()->set_texture(uint32_t(work.textures_size()));
        auto *out = work.add_textures();
        out->set_type(t.type());
        out->set_format(t.format());
        out->set_width(t.width());
        out->set_height(t.height());
        out->set_depth(t.depth());
        out->set_array_length(t.array_length());
        out->set_index(t.index());
        if (t.contents().has_digest()) {
          auto blob = store_.get(fromProto(t.contents().digest()));
          if (!blob) {
            call->answer(Status(StatusCode::FAILED_PRECONDITION,
                                textureWhere(t.index()) + ": its blob " + describe(t.contents().digest()) +
                                    " is not in the store: upload it with BatchUpdateBlobs first"));
            return;
          }
          out->set_data(blob.take());
        } else if (t.contents().contents_case() == msl::v1::BufferContents::kInline) {
          out->set_data(t.contents().inline_());
        }
        const std::string access = arg->value("access", "sample");
        if (access == "write" || access == "read_write") {
          out->set_returned(true);
          job->returnedTextures.push_back(t.index());
        }
        bytesIn += textureBytes(t);
      }
    } else {
      call->answer(Status(StatusCode::UNIMPLEMENTED, "kernel '" + name + "''s " + kind +
                                                         " arguments are not supported by the " + deviceName +
                                                         " device yet"));
      return;
    }
  }
  if (threadgroupBytes > target.device.max_threadgroup_memory_bytes()) {
    call->answer(invalid("kernel '" + name + "' needs " + std::to_string(threadgroupBytes) +
                         " bytes of threadgroup memory; " + deviceName + " has " +
                         std::to_string(target.device.max_threadgroup_memory_bytes())));
    return;
  }
  for (uint32_t i = 0; i < returned.size(); ++i)
    if (returned[i]) {
      work.mutable_buffers(int(i))->set_returned(true);
      job->returned.push_back(i);
    }

  // The dispatch: threadgroups in the grid, and for dispatchThreads the grid.
  const auto &d = r.dispatch();
  bool inThreads = d.grid_case() == msl::v1::Dispatch::kThreads;
  auto grid = dims(inThreads ? d.threads() : d.threadgroups());
  for (int c = 0; c < 3; ++c) {
    work.add_threads_per_threadgroup(tg[c]);
    work.add_threadgroups(inThreads ? (grid[c] + tg[c] - 1) / tg[c] : grid[c]);
    if (inThreads)
      work.add_grid_threads(grid[c]);
  }
  if (target.cuda) {
    // A cubin linked earlier from this PTX for this GPU and driver skips the JIT.
    CubinKey key = target.cubinKeyBase;
    key.ptxDigest = moduleDigest.empty() ? cache::Digest::of(module).hash : moduleDigest;
    job->cubinKey = cubinCacheKey(key);
  }
  // The module (and cubin) go in at dispatch, only to a worker without it.
  job->kernel = kernelIn;
  work.set_module_digest(moduleDigest);
  work.set_symbol(job->symbol);
  work.set_repeat(std::max(1u, r.repeat()));
  job->timeout = std::chrono::milliseconds(r.timeout_ms() ? r.timeout_ms() : options_.defaultTimeoutMs);
  // The job holds its own copy of every byte now; the request's may go.
  call->request = msl::v1::ExecuteRequest();
  metrics_.executeBytesIn.Increment(double(bytesIn));

  if (call->answered())
    return; // cancelled meanwhile
  uint64_t held = bytesIn + module.size();
  if (bytesInFlight_.fetch_add(held) + held > options_.maxBytesInFlight) {
    bytesInFlight_ -= held;
    call->answer(Status(StatusCode::RESOURCE_EXHAUSTED,
                        "msld holds " + std::to_string(options_.maxBytesInFlight) +
                            " bytes of buffers and textures for executions already; retry later"));
    return;
  }
  job->counter = &bytesInFlight_;
  job->bytes = held;
  call->queued = std::chrono::steady_clock::now();
  switch (target.queue.push(call->client, job)) {
  case FairQueue<Job>::Push::Ok:
    return;
  case FairQueue<Job>::Push::Full:
  case FairQueue<Job>::Push::ClientFull:
    call->answer(Status(StatusCode::RESOURCE_EXHAUSTED, "the execution queue is full; retry later"));
    return;
  }
}

void ExecuteService::cancel(const std::shared_ptr<Call> &call) {
  call->cancel = true; // a running kernel's worker is killed
  std::shared_ptr<CompileService::Call> compileCall;
  {
    std::lock_guard lock(call->mu);
    compileCall = call->compileCall;
  }
  if (compileCall)
    compiler_.cancel(compileCall);
  // A job whose worker writes into a shared region is answered once the
  // worker is stopped (dispatch), so nothing is written after the answer.
  if (!call->writesSharedRegion)
    call->answer(cancelledStatus());
}

void ExecuteService::dispatch(Target &target) {
  // A client that runs kernels in a loop sends the next one a few hundred
  // microseconds after its answer: the dispatcher looks for it that long
  // before it sleeps (waking a core costs tens of microseconds).
  constexpr std::chrono::microseconds kNextJobSpin{500};
  while (std::shared_ptr<Job> job = target.queue.pop(kNextJobSpin)) {
    auto &call = *job->call;
    if (call.answered())
      continue; // cancelled while it waited
    if (call.cancel) {
      call.answer(cancelledStatus()); // cancelled while it waited, answered here
      continue;
    }
    msl::internal::ExecWorkerResponse result;
    // Split frames: the buffers go to the worker and come back raw, with no
    // serializing, parsing or copying on either side but the pipe's.
    static const WorkerPool::SplitFraming kFraming{execRequestPayloads, execResponsePayloads};
    // Two deadlines: the JIT's (with the request's transfer) until the
    // worker's start note, then the kernel's own from its first dispatch.
    const WorkerPool::StartNote startNote{std::chrono::milliseconds(options_.jitTimeoutMs), isDispatchStartNote};
    const auto runStart = std::chrono::steady_clock::now();
    // The regions msld still has: the worker drops its mappings of others.
    job->work.clear_live_host_regions();
    if (sharedRegions_)
      for (uint64_t serial : sharedRegions_->serials())
        job->work.add_live_host_regions(serial);
    std::vector<int> regionFds;
    for (const auto &region : job->regions)
      regionFds.push_back(region->fd);
    auto withModule = [&] {
      job->work.set_module(job->kernel->module);
      if (target.cuda)
        job->work.set_cubin(findCubin(store_, job->cubinKey));
    };
    const std::string &digest = job->work.module_digest();
    if (digest.empty() || !target.hasModule(digest))
      withModule();
    WorkerPool::Outcome outcome =
        target.workers->run(job->work, result, kFraming, &call.cancel, job->timeout, &startNote, regionFds);
    if (outcome.kind == WorkerPool::Outcome::Kind::Ok && result.module_needed() && job->work.module().empty()) {
      withModule(); // this worker has not seen it (replaced, or its cache dropped it): once more, with it
      result.Clear();
      outcome = target.workers->run(job->work, result, kFraming, &call.cancel, job->timeout, &startNote, regionFds);
    }
    if (outcome.kind == WorkerPool::Outcome::Kind::Ok && result.module_needed())
      outcome = {WorkerPool::Outcome::Kind::Unavailable, "the execution worker asked for the module it was sent"};
    else if (outcome.kind == WorkerPool::Outcome::Kind::Ok && result.error().empty() && !digest.empty())
      target.noteModule(digest);
    const auto runEnd = std::chrono::steady_clock::now();
    const std::string what = "kernel '" + call.kernel + "' on " + target.device.name();
    if (outcome.kind == WorkerPool::Outcome::Kind::Ok && target.cuda) {
      metrics_.observeCudaModuleLoad(int(result.module_source()), double(result.module_load_ns()) * 1e-9);
      // The worker linked the PTX: keep the cubin for the next run.
      if (!result.cubin().empty() && !keepCubin(store_, job->cubinKey, result.cubin()))
        std::cerr << "msld: could not keep the cubin of " << what << "\n";
    }
    Status status;
    switch (outcome.kind) {
    case WorkerPool::Outcome::Kind::Ok:
      if (!result.error().empty())
        status = Status(StatusCode::FAILED_PRECONDITION, what + ": " + result.error());
      break;
    case WorkerPool::Outcome::Kind::Faulted:
      metrics_.kernelFaults.Increment();
      status = Status(StatusCode::ABORTED, what + " faulted: " + outcome.detail +
                                               "; nothing it wrote is returned, and its worker was replaced");
      break;
    case WorkerPool::Outcome::Kind::TimedOut:
      metrics_.execWorkerTimeouts.Increment();
      if (!outcome.started)
        status = Status(StatusCode::DEADLINE_EXCEEDED,
                        "the JIT of " + what + " (" +
                            (target.cuda ? "linking its PTX and loading the module"
                                         : "compiling its module for the CPU") +
                            ", before its first dispatch) ran past msld's " + std::to_string(options_.jitTimeoutMs) +
                            " ms limit (--exec-jit-timeout-ms) and its worker was replaced; the kernel did not run "
                            "(its timeout_ms counts from its first dispatch)");
      else
        status = Status(StatusCode::DEADLINE_EXCEEDED,
                        what + ": it ran past its " + std::to_string(job->timeout.count()) +
                            " ms time limit (timeout_ms, from its first dispatch) and was stopped; its worker was "
                            "replaced");
      break;
    case WorkerPool::Outcome::Kind::OutOfMemory:
      status = Status(StatusCode::RESOURCE_EXHAUSTED, what + ": " + outcome.detail + " (msld --exec-memory-mb)");
      break;
    case WorkerPool::Outcome::Kind::TooLarge:
      status = Status(StatusCode::RESOURCE_EXHAUSTED, what + ": " + outcome.detail);
      break;
    case WorkerPool::Outcome::Kind::Cancelled:
      status = Status(StatusCode::CANCELLED, what + ": " + outcome.detail);
      break;
    case WorkerPool::Outcome::Kind::Crashed:
      metrics_.execWorkerCrashes.Increment();
      status = Status(StatusCode::INTERNAL, what + ": " + outcome.detail + "; the worker was replaced");
      break;
    case WorkerPool::Outcome::Kind::Unavailable:
      status = Status(StatusCode::UNAVAILABLE, outcome.detail);
      break;
    }
    msl::v1::ExecuteResponse response;
    if (status.ok()) {
      if (size_t(result.buffers_size()) != job->returned.size() ||
          size_t(result.textures_size()) != job->returnedTextures.size()) {
        status = Status(StatusCode::INTERNAL, what + ": the execution worker returned " +
                                                  std::to_string(result.buffers_size()) + " buffers and " +
                                                  std::to_string(result.textures_size()) + " textures, not " +
                                                  std::to_string(job->returned.size()) + " and " +
                                                  std::to_string(job->returnedTextures.size()));
      } else {
        response.set_device(target.device.name());
        response.set_symbol(job->symbol);
        response.set_compile_cache_hit(job->compileHit);
        for (int64_t ns : result.dispatch_time_ns()) {
          response.add_dispatch_time_ns(ns);
          metrics_.observeKernelTime(target.device.name(), double(ns) * 1e-9);
        }
        // Inline while small and the response has room; else by digest.
        size_t budget = options_.inlineResponseBytes;
        auto place = [&](std::string &bytes, auto *out) {
          metrics_.executeBytesOut.Increment(double(bytes.size()));
          if (bytes.size() <= options_.inlineBufferBytes && bytes.size() <= budget) {
            budget -= bytes.size();
            out->set_inline_data(std::move(bytes));
            return;
          }
          auto digest = store_.putBytes(bytes);
          if (!digest) {
            status = Status(StatusCode::INTERNAL, "storing a result failed: " + digest.status().toString());
            return;
          }
          toProto(*digest, *out->mutable_digest());
        };
        for (size_t i = 0; i < job->returned.size() && status.ok(); ++i) {
          auto *out = response.add_buffers();
          const uint32_t buffer = job->returned[i];
          out->set_buffer(buffer);
          if (job->inSharedRegion[buffer])
            out->set_in_shared_region(true); // the worker wrote it back
          else
            place(*result.mutable_buffers(int(i)), out);
        }
        for (size_t i = 0; i < job->returnedTextures.size() && status.ok(); ++i) {
          auto *out = response.add_textures();
          out->set_index(job->returnedTextures[i]);
          place(*result.mutable_textures(int(i)), out);
        }
      }
    }
    const auto built = std::chrono::steady_clock::now();
    call.answer(status, status.ok() ? std::move(response) : msl::v1::ExecuteResponse());
    if (FILE *timing = execTimingFile()) {
      auto us = [](auto d) { return std::chrono::duration<double, std::micro>(d).count(); };
      // Absolute (CLOCK_MONOTONIC, shared by the host's processes): a client
      // on this host lines its own send and receive times up with them.
      auto ns = [](auto t) {
        return static_cast<long long>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
      };
      const auto answered = std::chrono::steady_clock::now();
      std::fprintf(timing,
                   "exec_timing prepare_us %.1f queue_us %.1f worker_us %.1f response_us %.1f answer_us %.1f "
                   "kernel_us %.1f jit_us %.1f total_us %.1f compile_us %.1f arrival_us %.1f arrived_at_ns %lld "
                   "answered_at_ns %lld\n",
                   us(call.queued - call.received), us(runStart - call.queued), us(runEnd - runStart),
                   us(built - runEnd), us(answered - built),
                   result.dispatch_time_ns_size() ? double(result.dispatch_time_ns(0)) / 1000 : 0.0,
                   outcome.started ? us(outcome.untilStart) : us(runEnd - runStart), us(answered - call.received),
                   us(call.compiled - call.received), us(call.received - call.arrived),
                   ns(call.arrived), ns(answered));
      std::fflush(timing);
    }
  }
}

} // namespace msl::service
