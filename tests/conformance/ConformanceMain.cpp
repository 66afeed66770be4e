//===- ConformanceMain.cpp - msl-conformance: MSL 2.0 chapter 7, measured --===//
//
// Runs every math function with a row in the accuracy tables of MSL 2.0
// section 7.4 through msld's Execute service on a device, compiled with
// -fno-fast-math (precise) and -ffast-math (fast), in float and half, and
// holds each result to its row (Bounds.h) against the exact result
// (Functions.h: double, MPFR where that cannot decide). Prints one Markdown
// table (per function and mode: the largest error in ulp, the bound, the
// worst input, pass or fail), the failures, whether INF and NaN are kept
// without fast math, and whether denormals are kept or flushed (7.1).
// Exit status 1 when a bound is exceeded, 2 when the run itself failed.
//
// The device is only a name passed to Execute (--device cpu, cuda:0, ...);
// without --msld the tool starts its own msld from its own directory (with
// --exec-workers 0 where no msld-exec-worker is beside it, as on a GPU
// machine: scripts/gpu-e2e.sh, scripts/gpu-bench.sh). --compile-only just
// compiles the kernels for the device's target (to record the compiles
// where the GPU is not, for the GPU machine's replaying compile worker).
// --exhaustive-functions and --exhaustive-budget-s limit --exhaustive to
// some functions and to a wall-clock budget, after which the remaining
// functions get the --samples sweep (the report says which were exhaustive).
//
//===----------------------------------------------------------------------===//
#include "BenchSupport.h"
#include "Bounds.h"
#include "Checker.h"
#include "ChunkCheck.h"
#include "Functions.h"
#include "GpuCheck.h"
#include "Inputs.h"

#include "msl/client/Client.h"
#include "msl/client/MslcRun.h"
#include "msl/client/SharedRegion.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <csignal>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <thread>
#include <tuple>

namespace msl::conformance {
extern const char kKernelsSource[]; // conformance.metal (KernelsSource.cpp.in)
}

namespace {

using namespace msl::conformance;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string &message) {
  std::cerr << "msl-conformance: " << message << "\n";
  std::exit(2);
}

struct Args {
  std::string device = "cpu";
  std::string msld;       // HOST:PORT of a running msld; empty: start one
  std::string samples = "2^24";
  bool exhaustive = false;
  std::vector<std::string> exhaustiveFunctions; // empty: all (with --exhaustive)
  double exhaustiveBudgetS = 0;                 // 0: no budget
  double timeLimitS = 0;                        // 0: none; past it, the remaining functions are not run
  bool compileOnly = false;
  std::vector<std::string> msldArgs;
  std::vector<std::string> functions;
  std::vector<std::string> types = {"float", "half"};
  std::vector<std::string> modes = {"precise", "fast"};
  uint64_t chunk = 1u << 18;
  size_t inFlight = 2; // chunks on the device while one is checked
  unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  uint32_t seed = 20170912;
  std::string output;
  std::string gpuChecker;    // GpuChecker.cu's cubin (--device cuda:N), or "host": its code run here
  std::string regionsSocket; // with --msld and --gpu-checker: that msld's --shared-regions-socket
};

// "16777216", "2^24" or "1<<24".
uint64_t parseCount(const std::string &s) {
  try {
    for (const char *op : {"^", "<<"}) {
      auto at = s.find(op);
      if (at == std::string::npos) continue;
      int e = std::stoi(s.substr(at + std::strlen(op)));
      uint64_t base = std::stoull(s.substr(0, at));
      if (base != (op[0] == '^' ? 2u : 1u) || e < 0 || e > 32) break;
      return uint64_t(1) << e;
    }
    if (s.find_first_not_of("0123456789") == std::string::npos) return std::stoull(s);
  } catch (const std::exception &) {
  }
  die("--samples " + s + ": not N, 2^K or 1<<K (K <= 32)");
}

struct Mode {
  MathMode mode;
  msl::v1::CompileRequest compile;
};

// The results of one chunk of a batch: out[mode][result][sample], in
// `inlineResults` or in the chunk's slot of the shared region.
struct ChunkResult {
  const uint32_t *out[kGpuCheckMaxModes][2] = {};
  std::vector<uint32_t> inlineResults[kGpuCheckMaxModes][2];
  int64_t deviceNs = 0;
  std::string error;

  ChunkResult() = default;
  // Moved only: out points into inlineResults, whose buffers a move keeps.
  ChunkResult(ChunkResult &&) = default;
  ChunkResult &operator=(ChunkResult &&) = default;
  ChunkResult(const ChunkResult &) = delete;
  ChunkResult &operator=(const ChunkResult &) = delete;
};

// Where a chunk's results go instead of coming back inline: slot `slot` of
// a shared region, each (mode, result) `chunk` words.
struct ResultSlots {
  msl::client::SharedRegion *region = nullptr;
  uint64_t chunk = 0;
  static constexpr uint64_t kBuffersPerSlot = kGpuCheckMaxModes * 2;
  uint64_t slotBytes() const { return kBuffersPerSlot * chunk * 4; }
  uint64_t offset(size_t slot, size_t mode, int result) const {
    return slot * slotBytes() + (mode * 2 + result) * chunk * 4;
  }
};

class Runner {
public:
  Runner(const msl::client::Client &client, std::string device, std::vector<Mode> modes)
      : client_(client), device_(std::move(device)), modes_(std::move(modes)) {}


  // Every mode's Execute of the chunk at once (msld overlaps their
  // transfers; the device runs them in turn).
  ChunkResult run(const FunctionInfo &fn, const FloatFormat &f, const Batch &b, uint64_t offset, uint32_t count,
                  const ResultSlots *slots = nullptr, size_t slot = 0) const {
    ChunkResult r;
    Params p = chunkParams(b, offset);
    std::string kernel = std::string(f.precision == kBinary32.precision ? "f32_" : "f16_") + fn.name;
    std::vector<int64_t> ns(modes_.size(), 0);
    std::vector<std::string> errors(modes_.size());
    auto one = [&](size_t m) {
      msl::v1::ExecuteRequest req;
      *req.mutable_compile() = modes_[m].compile;
      req.set_kernel(kernel);
      req.set_device(device_);
      for (int k = 0; k < 2; ++k) {
        uint64_t bytes = k == 0 || fn.results == 2 ? uint64_t(count) * 4 : 4;
        if (slots)
          *req.add_buffers()->mutable_shared() = slots->region->range(slots->offset(slot, m, k), bytes);
        else
          req.add_buffers()->set_zeros(bytes);
      }
      if (p.mode == Params::kExplicit)
        req.add_buffers()->set_inline_(std::string(reinterpret_cast<const char *>(b.bits.data() + offset * fn.arity),
                                                   size_t(count) * fn.arity * 4));
      else
        req.add_buffers()->set_zeros(4);
      for (uint32_t i = 0; i < 3; ++i) {
        auto *bind = req.add_buffer_bindings();
        bind->set_index(i);
        bind->set_buffer(i);
      }
      auto *bytes = req.add_bytes();
      bytes->set_index(3);
      bytes->set_data(std::string(reinterpret_cast<const char *>(&p), sizeof p));
      req.mutable_dispatch()->mutable_threads()->set_x(count);
      req.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(std::min<uint32_t>(256, count));
      req.set_timeout_ms(240000);
      auto resp = client_.execute(req);
      if (!resp) {
        errors[m] = kernel + " (" + modeName(modes_[m].mode) + "): " + msl::client::describeStatus(resp.status());
        return;
      }
      for (const auto &buf : resp->buffers()) {
        if (buf.buffer() >= uint32_t(fn.results)) continue;
        int k = int(buf.buffer());
        if (slots && buf.in_shared_region()) {
          r.out[m][k] = reinterpret_cast<const uint32_t *>(slots->region->data() + slots->offset(slot, m, k));
          continue;
        }
        auto &v = r.inlineResults[m][k];
        if (buf.inline_data().size() < uint64_t(count) * 4) continue;
        v.resize(count);
        std::memcpy(v.data(), buf.inline_data().data(), v.size() * 4);
        r.out[m][k] = v.data();
      }
      for (int k = 0; k < fn.results; ++k)
        if (!r.out[m][k]) {
          errors[m] = kernel + ": result buffer " + std::to_string(k) + " is missing or short";
          return;
        }
      for (int64_t t : resp->dispatch_time_ns()) ns[m] += t;
    };
    std::vector<std::future<void>> others;
    for (size_t m = 1; m < modes_.size(); ++m) others.push_back(std::async(std::launch::async, one, m));
    if (!modes_.empty()) one(0);
    for (auto &o : others) o.get();
    for (size_t m = 0; m < modes_.size(); ++m) {
      if (!errors[m].empty()) {
        r.error = errors[m];
        return r;
      }
      r.deviceNs += ns[m];
    }
    return r;
  }

private:
  const msl::client::Client &client_;
  std::string device_;
  std::vector<Mode> modes_;
};

struct RowKey {
  Fn fn;
  const FloatFormat *format;
  MathMode mode;
};
struct Row {
  RowKey key;
  RowStats stats;
  double seconds = 0;
};

std::string inputText(const FunctionInfo &fn, const FloatFormat &f, const SampleRecord &s) {
  std::string t;
  for (int j = 0; j < fn.arity; ++j) {
    if (j) t += ", ";
    t += fn.intSecondArg && j == 1 ? std::to_string(intArg(s.in[j])) : formatValue(f, valueOf(f, s.in[j]));
  }
  return t;
}
std::string resultText(const FunctionInfo &fn, const FloatFormat &f, int k, uint32_t bits) {
  return fn.intResult[k] ? std::to_string(int32_t(bits)) : formatValue(f, valueOf(f, bits));
}
// Three digits; more right next to 0.5, where a correctly rounded row fails.
std::string fmtUlps(double u) {
  if (std::isinf(u)) return "inf";
  char b[32];
  std::snprintf(b, sizeof b, u > 0.4999 && u < 0.5001 && u != 0.5 ? "%.7f" : u < 1e4 ? "%.3g" : "%.3e", u);
  return b;
}

std::string ulpsExactly(double u) {
  char b[32];
  std::snprintf(b, sizeof b, "%.9g", u);
  return b;
}

// 7.1: are denormal inputs and results kept or flushed? x * 1 of a subnormal
// x, and a product and a difference of normals whose exact result is
// subnormal, all exact.
std::string probeDenormals(const Runner &runner, const FloatFormat &f, size_t m) {
  double sub = f.minNormal() / 64;
  double root = std::sqrt(sub); // sub = root * root, root normal
  Batch b;
  b.params.mode = Params::kExplicit;
  b.bits = {bitsOf(f, sub), bitsOf(f, 1.0), bitsOf(f, root), bitsOf(f, root)};
  b.count = 2;
  ChunkResult mul = runner.run(info(Fn::Mul), f, b, 0, 2);
  Batch d = b;
  d.bits = {bitsOf(f, 1.5 * f.minNormal()), bitsOf(f, f.minNormal())};
  d.count = 1;
  ChunkResult diff = runner.run(info(Fn::Sub), f, d, 0, 1);
  if (!mul.error.empty() || !diff.error.empty()) return "probe failed: " + mul.error + diff.error;
  auto kind = [&](uint32_t bits, double want) {
    double v = valueOf(f, bits);
    return v == want ? "kept" : v == 0 ? "flushed to zero" : "wrong";
  };
  std::string in = kind(mul.out[m][0][0], sub);
  std::string out1 = kind(mul.out[m][0][1], sub), out2 = kind(diff.out[m][0][0], 0.5 * f.minNormal());
  return "inputs " + in + ", results " + (out1 == out2 ? out1 : out1 + " (x*y) / " + out2 + " (x-y)");
}

} // namespace

int main(int argc, char **argv) {
  Args args;
  CLI::App app{"msl-conformance: the numerical compliance tables of MSL 2.0 chapter 7, measured through msld's "
               "Execute"};
  app.add_option("--device", args.device, "Execute's device: cpu, cuda:0, ...")->capture_default_str();
  app.add_option("--msld", args.msld, "HOST:PORT of a running msld (default: start one from this binary's directory)");
  app.add_option("--samples", args.samples, "bulk samples per function: N or 2^K")->capture_default_str();
  app.add_flag("--exhaustive", args.exhaustive, "every float of unary functions, every pair of half ones");
  app.add_option("--exhaustive-functions", args.exhaustiveFunctions,
                 "with --exhaustive: only these functions exhaustively, the rest sampled")
      ->delimiter(',');
  app.add_option("--exhaustive-budget-s", args.exhaustiveBudgetS,
                 "with --exhaustive: once this many seconds have passed, sample the remaining functions");
  app.add_option("--time-limit-s", args.timeLimitS,
                 "once this many seconds have passed, run no further function (the report names them)");
  app.add_flag("--compile-only", args.compileOnly,
               "compile the kernels for --device's target and exit (no device needed: records compiles)");
  app.add_option("--msld-arg", args.msldArgs, "an extra flag for the msld this tool starts (repeatable)");
  app.add_option("--functions", args.functions, "only these (kernel names: sin, add, ...)")->delimiter(',');
  app.add_option("--types", args.types, "float, half")->delimiter(',')->capture_default_str();
  app.add_option("--modes", args.modes, "precise (-fno-fast-math), fast (-ffast-math)")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--chunk", args.chunk, "samples per Execute (results of 2^18 floats stay inline)")
      ->capture_default_str();
  app.add_option("--jobs", args.jobs, "checking threads")->capture_default_str();
  app.add_option("--in-flight", args.inFlight, "chunks sent ahead while one is checked")->capture_default_str();
  app.add_option("--seed", args.seed, "of the random samples")->capture_default_str();
  app.add_option("--output", args.output, "also write the report to this file");
  app.add_option("--gpu-checker", args.gpuChecker,
                 "with --device cuda:N: judge the generated samples (sweeps, random) on that GPU with this cubin "
                 "of GpuChecker.cu (nvcc; scripts/gpu-bench.sh builds it), 2^24 per Execute unless --chunk says; "
                 "'host': the same path with the checker's code run here (tests it without a GPU)");
  app.add_option("--regions-socket", args.regionsSocket,
                 "with --msld and --gpu-checker: that msld's --shared-regions-socket (results travel through it)");
  CLI11_PARSE(app, argc, argv);
  std::signal(SIGPIPE, SIG_IGN);

  PlanOptions plan;
  plan.samples = parseCount(args.samples);
  plan.exhaustive = args.exhaustive;
  plan.seed = args.seed;
  if (args.chunk == 0 || args.chunk > (1u << 24)) die("--chunk must be in [1, 2^24]");
  // Explicit samples (edge cases, focused) travel inline: their chunks stay
  // small; the GPU checker's come through a shared region, in large ones.
  const uint64_t inlineChunk = args.chunk;
  const uint64_t gpuChunk = app.count("--chunk") ? args.chunk : 1u << 24;
  int gpuOrdinal = -1;
  if (!args.gpuChecker.empty() && args.gpuChecker != "host") {
    if (args.device.rfind("cuda:", 0) != 0 || args.device.size() == 5 ||
        args.device.find_first_not_of("0123456789", 5) != std::string::npos)
      die("--gpu-checker needs --device cuda:N");
    gpuOrdinal = std::stoi(args.device.substr(5));
  }
  if (!args.gpuChecker.empty() && !args.msld.empty() && args.regionsSocket.empty())
    die("--gpu-checker with --msld needs --regions-socket");
  args.jobs = std::max(1u, args.jobs);
  args.inFlight = std::max<size_t>(1, args.inFlight);

  std::vector<const FloatFormat *> formats;
  for (const auto &t : args.types) {
    if (t == "float") formats.push_back(&kBinary32);
    else if (t == "half") formats.push_back(&kBinary16);
    else die("--types: unknown type " + t);
  }
  std::vector<MathMode> modeList;
  for (const auto &m : args.modes) {
    if (m == "precise") modeList.push_back(MathMode::Precise);
    else if (m == "fast") modeList.push_back(MathMode::Fast);
    else die("--modes: unknown mode " + m);
  }
  if (modeList.size() > size_t(kGpuCheckMaxModes) ||
      (modeList.size() == 2 && modeList[0] == modeList[1]))
    die("--modes: precise, fast, or both once each");
  std::vector<const FunctionInfo *> functions;
  for (const auto &fn : allFunctions())
    if (args.functions.empty() || std::find(args.functions.begin(), args.functions.end(), fn.name) != args.functions.end())
      functions.push_back(&fn);
  if (functions.empty()) die("--functions: none of these exist");
  // With a budget, the functions to sweep whole go first, in the order
  // given (the report keeps the table's order).
  if (args.exhaustive && !args.exhaustiveFunctions.empty()) {
    auto rank = [&](const FunctionInfo *fn) {
      auto at = std::find(args.exhaustiveFunctions.begin(), args.exhaustiveFunctions.end(), fn->name);
      return at - args.exhaustiveFunctions.begin();
    };
    std::stable_sort(functions.begin(), functions.end(),
                     [&](const FunctionInfo *a, const FunctionInfo *b) { return rank(a) < rank(b); });
  }

  // msld: ours, or the one given.
  msl::bench::DaemonProcess daemon;
  std::string address = args.msld;
  if (address.empty()) {
    msl::bench::DaemonOptions o;
    o.msld = msl::bench::besideSelf("msld").string();
    o.tempPrefix = "msl-conformance";
    if (o.msld.empty() || !fs::exists(o.msld)) die("msld not found beside this binary (build the msld target)");
    if (!fs::exists(fs::path(o.msld).parent_path() / "msld-exec-worker")) {
      // A GPU machine carries no CPU device: msld runs without one.
      if (args.device == "cpu" && !args.compileOnly)
        die("msld-exec-worker not found beside msld (build it): no device to run kernels");
      o.extraArgs = {"--exec-workers", "0"};
    }
    o.extraArgs.insert(o.extraArgs.end(), args.msldArgs.begin(), args.msldArgs.end());
    o.sharedRegions = !args.gpuChecker.empty();
    if (std::string error; !daemon.start(o, &error)) die(error);
    address = "127.0.0.1:" + std::to_string(daemon.grpcPort());
    args.regionsSocket = daemon.sharedRegionsSocket();
  }
  msl::client::ClientOptions copts;
  copts.address = address;
  copts.call_deadline = std::chrono::seconds(300);
  msl::client::Client client(copts);
  if (auto h = client.waitUntilHealthy(std::chrono::seconds(60)); !h.ok())
    die(address + " not healthy: " + msl::client::describeStatus(h.status()));
  std::string deviceText;
  if (!args.compileOnly) {
    auto devices = client.listDevices();
    if (!devices) die("ListDevices: " + msl::client::describeStatus(devices.status()));
    for (const auto &d : devices->devices())
      if (d.name() == args.device)
        deviceText = d.description() + " [" + d.architecture() + "]" +
                     (d.driver_version().empty() ? "" : ", driver " + d.driver_version());
    if (deviceText.empty()) die("msld at " + address + " has no device " + args.device);
  }

  // The kernels, compiled once per mode (the Executes then hit the action cache).
  std::vector<Mode> modes;
  for (MathMode m : modeList) {
    std::vector<std::string> options = {m == MathMode::Precise ? "-fno-fast-math" : "-ffast-math"};
    auto req = client.prepareCompileRequest("conformance.metal", kKernelsSource, {}, options,
                                            msl::client::mslc::targetForDevice(args.device),
                                            msl::client::mslc::outputsForDevice(args.device));
    if (!req) die("compile request: " + msl::client::describeStatus(req.status()));
    auto compiled = client.compile(*req);
    if (!compiled) die("Compile: " + msl::client::describeStatus(compiled.status()));
    if (!compiled->success()) {
      std::string text;
      for (const auto &d : compiled->diagnostics())
        text += d.file() + ":" + std::to_string(d.line()) + ": " + d.message() + "\n";
      die("conformance.metal does not compile with " + options[0] + ":\n" + text);
    }
    modes.push_back({m, *req});
  }
  if (args.compileOnly) {
    std::cout << "compiled conformance.metal for " << args.device << " (" << modes.size() << " modes)\n";
    if (daemon.pid() > 0) daemon.stop();
    return 0;
  }
  Runner runner(client, args.device, modes);

  // With the GPU checker: a slot of the shared region per chunk in flight,
  // and one for the chunk being judged.
  // The region first: it is unmapped after the checker unpins it.
  std::unique_ptr<msl::client::SharedRegion> region;
  std::unique_ptr<TallyChecker> gpu;
  ResultSlots slots;
  const size_t slotCount = args.inFlight + 1;
  double gpuSeconds = 0;
  bool gpuFailed = false; // a CUDA error in the checker: the host judges the rest
  if (!args.gpuChecker.empty()) {
    std::string why;
    if (args.gpuChecker == "host") gpu = std::make_unique<HostTally>();
    else gpu = GpuChecker::open(args.gpuChecker, gpuOrdinal, uint32_t(gpuChunk), why);
    if (!gpu) die("--gpu-checker: " + why);
    slots.chunk = gpuChunk;
    auto opened = msl::client::SharedRegion::open(args.regionsSocket, slotCount * slots.slotBytes());
    if (!opened)
      die("shared region of " + std::to_string(slotCount * slots.slotBytes() >> 20) + " MiB at " + args.regionsSocket +
          ": " + msl::client::describeStatus(opened.status()) +
          " (fewer --in-flight, a smaller --chunk, or msld's --shared-region-max-mb)");
    region = std::move(*opened);
    slots.region = region.get();
    if (!gpu->pin(region->data(), region->size(), why)) std::cerr << "msl-conformance: " << why << " (copies not pinned)\n";
  }

  auto started = Clock::now();
  std::vector<std::string> exhaustiveRows; // "sin float", ...
  std::vector<std::string> notRun;         // past --time-limit-s
  std::vector<Row> rows;
  int64_t deviceNs = 0;
  for (const FloatFormat *f : formats) {
    for (const FunctionInfo *fn : functions) {
      bool any = false;
      for (const auto &m : modes) any |= hasRow(fn->fn, *f, m.mode);
      if (!any) continue;
      auto fnStarted = Clock::now();
      if (args.timeLimitS > 0 && std::chrono::duration<double>(fnStarted - started).count() > args.timeLimitS) {
        notRun.push_back(fn->name + std::string(" ") + f->name);
        continue;
      }
      std::vector<RowStats> stats(modes.size());
      PlanOptions fnPlan = plan;
      if (plan.exhaustive) {
        bool listed = args.exhaustiveFunctions.empty() ||
                      std::find(args.exhaustiveFunctions.begin(), args.exhaustiveFunctions.end(), fn->name) !=
                          args.exhaustiveFunctions.end();
        bool inBudget = args.exhaustiveBudgetS <= 0 ||
                        std::chrono::duration<double>(fnStarted - started).count() < args.exhaustiveBudgetS;
        fnPlan.exhaustive = listed && inBudget;
        // Only a unary float function (or a pair of halves) is swept whole.
        if (fnPlan.exhaustive && (fn->arity == 1 ? f == &kBinary32 : fn->arity == 2 && f == &kBinary16))
          exhaustiveRows.push_back(fn->name + std::string(" ") + f->name);
      }
      for (const Batch &b : planSamples(*fn, *f, fnPlan)) {
        std::vector<std::pair<uint64_t, uint32_t>> chunks;
        const bool onGpu = gpu && b.params.mode != Params::kExplicit;
        const uint64_t chunk = onGpu ? gpuChunk : inlineChunk;
        for (uint64_t at = 0; at < b.count; at += chunk)
          chunks.push_back({at, uint32_t(std::min<uint64_t>(chunk, b.count - at))});
        // The device runs the next --in-flight chunks while the host checks this one.
        auto launch = [&](size_t c) {
          return std::async(std::launch::async, [&, c] {
            return runner.run(*fn, *f, b, chunks[c].first, chunks[c].second, onGpu ? &slots : nullptr, c % slotCount);
          });
        };
        std::deque<std::future<ChunkResult>> pending;
        size_t launched = 0;
        for (; launched < chunks.size() && launched < args.inFlight; ++launched) pending.push_back(launch(launched));
        for (size_t c = 0; c < chunks.size(); ++c) {
          ChunkResult r = pending.front().get();
          pending.pop_front();
          if (!r.error.empty()) die("Execute " + r.error);
          if (launched < chunks.size()) pending.push_back(launch(launched++));
          deviceNs += r.deviceNs;
          GpuChunkVerdict verdict;
          std::string why;
          if (onGpu && !gpuFailed &&
              !gpu->check(*fn, *f, chunkParams(b, chunks[c].first), chunks[c].second, modeList, r.out, verdict, why)) {
            // The results are in hand: the host judges them, this chunk and the rest.
            std::cerr << "msl-conformance: the GPU checker failed (" << why << "); judging on the host from here\n";
            gpuFailed = true;
          }
          if (!onGpu || gpuFailed) {
            checkChunk(*fn, *f, b, chunks[c].first, chunks[c].second, r.out, modeList, args.jobs, stats);
            continue;
          }
          gpuSeconds += verdict.seconds;
          mergeGpuVerdict(*fn, *f, b, chunks[c].first, chunks[c].second, r.out, modeList, args.jobs, verdict, stats);
        }
      }
      double seconds = std::chrono::duration<double>(Clock::now() - fnStarted).count();
      for (size_t m = 0; m < modes.size(); ++m) {
        if (!hasRow(fn->fn, *f, modes[m].mode)) continue;
        stats[m].finish();
        rows.push_back({{fn->fn, f, modes[m].mode}, stats[m], seconds});
        const RowStats &s = stats[m];
        std::cerr << fn->name << " " << f->name << " " << modeName(modes[m].mode) << ": max "
                  << fmtUlps(s.haveMax ? s.max.ulps : 0) << " ulp" << (s.haveMaxAbs ? " / abs " + std::to_string(s.maxAbs.ulps) : "") << " over " << s.checked << ", "
                  << (s.failures ? std::to_string(s.failures) + " FAILED" : "pass") << " (" << int(seconds)
                  << " s, " << s.mpfr << " by MPFR)\n";
      }
    }
  }
  double totalSeconds = std::chrono::duration<double>(Clock::now() - started).count();
  // The table's order: format, then allFunctions(), then mode.
  auto position = [&](const Row &r) {
    size_t fi = std::find(formats.begin(), formats.end(), r.key.format) - formats.begin();
    size_t fn = 0;
    while (fn < allFunctions().size() && allFunctions()[fn].fn != r.key.fn) ++fn;
    return std::make_tuple(fi, fn, int(r.key.mode));
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Row &a, const Row &b) { return position(a) < position(b); });

  // The report.
  std::ostringstream out;
  out << "device: " << args.device << " = " << deviceText << "\n";
  out << "samples per function: " << args.samples
      << " in bulk, plus edge cases (and focused samples for two- and three-argument functions); seed "
      << args.seed << "\n";
  if (args.exhaustive) {
    out << "exhaustive (every bit pattern) for " << exhaustiveRows.size() << ":";
    for (const auto &r : exhaustiveRows) out << " " << r;
    out << (exhaustiveRows.empty() ? " none" : "") << "\n";
  }
  if (!notRun.empty()) {
    out << "NOT RUN (past --time-limit-s):";
    for (const auto &r : notRun) out << " " << r;
    out << "\n";
  }
  out << "time: " << int(totalSeconds) << " s, of which kernels " << int(deviceNs / 1000000000) << " s";
  if (gpu)
    out << "; generated samples judged " << (args.gpuChecker == "host" ? "by the GPU checker's code on the host" : "on the GPU")
        << " (--gpu-checker), " << int(gpuSeconds) << " s of copies and checks there"
        << (gpuFailed ? " until it failed, then on the host" : "");
  out << "\n\n";
  out << "| function | type | mode | max error (ulp) | bound | worst input | samples | result |\n";
  out << "|---|---|---|---:|---|---|---:|---|\n";
  bool allPass = true;
  for (const Row &row : rows) {
    const FunctionInfo &fn = info(row.key.fn);
    const RowStats &s = row.stats;
    std::string result;
    if (s.checked == 0) {
      result = "no bound";
    } else if (s.failures) {
      result = "**FAIL** (" + std::to_string(s.failures) + ")";
      allPass = false;
    } else {
      result = "pass";
    }
    std::string notes;
    if (s.flushed) notes += "; " + std::to_string(s.flushed) + " flushed";
    if (s.towardZero)
      notes += "; " + std::to_string(s.towardZero) + " toward zero" + (s.nearestOnly ? " (mixed with to nearest)" : "");
    // The largest error in ulp; and where the bound is absolute (fast sin,
    // log in [0.5, 2], ...) the largest absolute error.
    std::string maxText, worst;
    auto addWorst = [&](const SampleRecord &r) {
      if (!worst.empty()) worst += "; ";
      worst += inputText(fn, *row.key.format, r);
      if (fn.fn == Fn::Sincos) worst += r.result ? " (cos)" : " (sin)";
    };
    if (s.haveMax || !s.haveMaxAbs) {
      maxText = fmtUlps(s.haveMax ? s.max.ulps : 0);
      if (s.haveMax) addWorst(s.max);
    }
    if (s.haveMaxAbs) {
      char b[48];
      std::snprintf(b, sizeof b, "abs %.3g", s.maxAbs.ulps);
      maxText += (maxText.empty() ? "" : ", ") + std::string(b);
      addWorst(s.maxAbs);
    }
    std::string bound = boundText(row.key.fn, *row.key.format, row.key.mode);
    if (s.haveMax && bound.rfind("<= ", 0) != 0 && bound.rfind("abs", 0) != 0 && s.max.allowed > 0 &&
        bound != "correctly rounded")
      bound += " (here " + fmtUlps(s.max.allowed) + " ulp)";
    out << "| " << fn.display << " | " << row.key.format->name << " | " << modeName(row.key.mode) << " | "
        << maxText << " | " << bound << " | " << worst << " | " << s.checked
        << (s.skipped ? " (+" + std::to_string(s.skipped) + " unbounded)" : "") << " | " << result << notes
        << " |\n";
  }

  out << "\n## Failures\n\n";
  bool anyFailure = false;
  for (const Row &row : rows) {
    const FunctionInfo &fn = info(row.key.fn);
    const FloatFormat &f = *row.key.format;
    if (!row.stats.failures) continue;
    anyFailure = true;
    out << "- " << fn.display << " (" << f.name << ", " << modeName(row.key.mode) << "): " << row.stats.failures
        << " of " << row.stats.checked << ", bound " << boundText(fn.fn, f, row.key.mode) << ", e.g.\n";
    for (const auto &s : row.stats.failed)
      out << "  - " << fn.name << "(" << inputText(fn, f, s) << ")" << (fn.results == 2 ? (s.result ? "[1]" : "[0]") : "")
          << " = " << resultText(fn, f, s.result, s.got) << ", exact " << formatValue(f, s.exact) << ": "
          << ulpsExactly(s.ulps) << " ulp\n";
  }
  if (!anyFailure) out << "none\n";

  out << "\n## INF and NaN without fast math (7.1)\n\n";
  for (const FloatFormat *f : formats) {
    uint64_t specials = 0, wrong = 0;
    std::string which;
    for (const Row &row : rows) {
      if (row.key.format != f || row.key.mode != MathMode::Precise) continue;
      specials += row.stats.specials;
      wrong += row.stats.specialFailures;
      if (row.stats.specialFailures) which += std::string(which.empty() ? "" : ", ") + info(row.key.fn).name;
    }
    if (std::find(modeList.begin(), modeList.end(), MathMode::Precise) == modeList.end()) continue;
    out << "- " << f->name << ": " << specials << " results whose exact value is INF or NaN; "
        << (wrong ? std::to_string(wrong) + " not kept (" + which + ")" : "all kept") << "\n";
  }

  out << "\n## Denormals (7.1: kept or flushed, both allowed)\n\n";
  for (const FloatFormat *f : formats)
    for (size_t m = 0; m < modes.size(); ++m) {
      uint64_t flushed = 0;
      std::string which;
      for (const Row &row : rows)
        if (row.key.format == f && row.key.mode == modes[m].mode && row.stats.flushed) {
          flushed += row.stats.flushed;
          which += std::string(which.empty() ? "" : ", ") + info(row.key.fn).name;
        }
      out << "- " << f->name << ", " << modeName(modes[m].mode) << ": " << probeDenormals(runner, *f, m)
          << "; results accepted only as flushed: " << (flushed ? std::to_string(flushed) + " (" + which + ")" : "none")
          << "\n";
    }

  std::cout << out.str() << std::flush;
  if (!args.output.empty()) {
    std::ofstream file(args.output);
    file << out.str();
    if (!file) die("cannot write " + args.output);
  }
  if (daemon.pid() > 0) daemon.stop();
  return allPass ? 0 : 1;
}
