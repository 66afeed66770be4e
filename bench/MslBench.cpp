//===- MslBench.cpp - msl-bench: msld latency vs. in-process compile -------===//
//
// Starts its own msld (beside this binary) on loopback ports with a fresh
// data directory, then prints one table:
//
//   (a) a no-op gRPC call (FindMissingBlobs with an empty list) beside a
//       cache-hit Compile, p50 and p99 over --hot-calls calls each;
//   (b) for each examples/*.metal kernel: a cold Compile through msld (a
//       unique -D MSL_BENCH_NONCE=<n> per call so the action cache misses)
//       beside msl::compiler::compile() of the same source in this process,
//       p50 of --cold-runs runs each, and their ratio;
//   (e) Execute of a cached 1 MiB-in/1 MiB-out copy kernel on device "cpu":
//       p50/p99 of the RPC's wall time over --exec-calls calls beside the
//       p50 kernel time the response reports (dispatch_time_ns), and the
//       difference (the RPC's overhead over the kernel).
//
// msld is stopped with SIGTERM at the end.
//
//===----------------------------------------------------------------------===//
#include "BenchSupport.h"
#include "ExecCopyTiming.h"
#include "msl/client/Client.h"
#include "msl/compiler/Compiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using msl::bench::percentile;

namespace {

struct Args {
  int hotCalls = 200;
  int coldRuns = 15;
  int workers = 2;
  int execCalls = 100;
  std::string examples = MSLD_SOURCE_DIR "/examples";
  std::string msld; // default: beside /proc/self/exe
  std::vector<std::string> msldArgs; // --msld-arg, appended to msld's flags
  std::string callLog; // --exec-call-log: the Execute calls' times (scripts/exec-stages.py)
};

[[noreturn]] void die(const std::string &message) {
  std::cerr << "msl-bench: " << message << "\n";
  std::exit(1);
}

Args parseArgs(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die("missing value after " + s);
      return argv[++i];
    };
    if (s == "--hot-calls") a.hotCalls = std::stoi(next());
    else if (s == "--cold-runs") a.coldRuns = std::stoi(next());
    else if (s == "--compile-workers") a.workers = std::stoi(next());
    else if (s == "--exec-calls") a.execCalls = std::stoi(next());
    else if (s == "--examples") a.examples = next();
    else if (s == "--msld") a.msld = next();
    else if (s == "--msld-arg") a.msldArgs.push_back(next());
    else if (s == "--exec-call-log") a.callLog = next();
    else if (s == "-h" || s == "--help") {
      std::cout << "usage: msl-bench [--hot-calls N (200)] [--cold-runs N (15)]\n"
                   "                 [--compile-workers N (2)] [--exec-calls N (100)]\n"
                   "                 [--examples DIR] [--msld PATH] [--msld-arg FLAG]...\n"
                   "                 [--exec-call-log FILE]\n";
      std::exit(0);
    } else {
      die("unknown argument '" + s + "' (see --help)");
    }
  }
  if (a.hotCalls < 1 || a.coldRuns < 1 || a.execCalls < 1) die("counts must be >= 1");
  return a;
}

std::string readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) die("cannot read " + p.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

double micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}

std::string fmtMs(double us) {
  char buf[32];
  if (us < 10000) std::snprintf(buf, sizeof buf, "%.3f ms", us / 1000);
  else std::snprintf(buf, sizeof buf, "%.1f ms", us / 1000);
  return buf;
}

std::string machine() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  int processors = 0;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0 && model == "unknown CPU") {
      auto colon = line.find(':');
      if (colon != std::string::npos) model = line.substr(colon + 2);
    }
    if (line.rfind("processor", 0) == 0) ++processors;
  }
  std::string load;
  std::ifstream la("/proc/loadavg");
  std::getline(la, load);
  std::ostringstream s;
  s << model << ", " << processors << " logical CPUs in /proc/cpuinfo, "
    << std::thread::hardware_concurrency() << " usable; loadavg at start: " << load;
  return s.str();
}

msl::v1::CompileRequest serviceRequest(const std::string &path, const std::string &source,
                                       const std::vector<std::string> &options) {
  msl::v1::CompileRequest r;
  r.set_main_path(path);
  r.mutable_main_source()->set_inline_(source);
  for (const auto &o : options) r.add_options(o);
  r.mutable_target()->set_arch(msl::v1::Target::X86_64);
  // Outputs: empty = the x86_64 defaults (LLVM bitcode + reflection), the
  // same as msl::compiler::defaultOutputs(X86_64) used in-process below.
  return r;
}

msl::compiler::CompileJob inProcessJob(const std::string &path, const std::string &source,
                                       const std::vector<std::string> &options) {
  msl::compiler::CompileJob job;
  job.mainPath = path;
  job.mainSource = source;
  job.options = options;
  job.target.arch = msl::compiler::Arch::X86_64;
  return job;
}

std::vector<std::string> nonceOptions(long nonce) {
  return {"-D", "MSL_BENCH_NONCE=" + std::to_string(nonce)};
}

void checkCompile(const msl::client::Result<msl::v1::CompileResponse> &r, const std::string &what,
                  std::optional<bool> wantHit) {
  if (!r.ok()) die(what + ": " + msl::client::describeStatus(r.status()));
  if (!r->success()) {
    std::string first = r->diagnostics_size() ? r->diagnostics(0).message() : "(no diagnostics)";
    die(what + ": compile failed: " + first);
  }
  if (wantHit && r->cache_hit() != *wantHit)
    die(what + ": expected cache_hit=" + (*wantHit ? "true" : "false"));
}

struct Row {
  std::string name, a, b, c, d, e;
};

void printTable(const std::vector<Row> &rows) {
  std::vector<size_t> w(6, 0);
  for (const auto &r : rows) {
    const std::string *cells[] = {&r.name, &r.a, &r.b, &r.c, &r.d, &r.e};
    for (int i = 0; i < 6; ++i) w[i] = std::max(w[i], cells[i]->size());
  }
  for (size_t k = 0; k < rows.size(); ++k) {
    const auto &r = rows[k];
    const std::string *cells[] = {&r.name, &r.a, &r.b, &r.c, &r.d, &r.e};
    std::string line = "|";
    for (int i = 0; i < 6; ++i) {
      std::string c = *cells[i];
      if (i == 0) line += " " + c + std::string(w[i] - c.size(), ' ') + " |";
      else line += " " + std::string(w[i] - c.size(), ' ') + c + " |";
    }
    std::cout << line << "\n";
    if (k == 0) {
      std::string sep = "|";
      for (int i = 0; i < 6; ++i)
        sep += (i == 0 ? std::string(w[i] + 2, '-') : std::string(w[i] + 1, '-') + ":") + "|";
      std::cout << sep << "\n";
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  Args args = parseArgs(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  if (args.msld.empty()) {
    args.msld = msl::bench::besideSelf("msld").string();
    if (args.msld.empty()) die("cannot read /proc/self/exe");
  }
  if (!fs::exists(args.msld)) die(args.msld + " not found (build the msld target)");
  if (fs::path w = fs::path(args.msld).parent_path() / "msld-exec-worker"; !fs::exists(w))
    die(w.string() + " not found (build the msld-exec-worker target)");

  std::vector<fs::path> sources;
  for (const char *name : {"saxpy", "reduce", "histogram"}) {
    fs::path p = fs::path(args.examples) / (std::string(name) + ".metal");
    if (!fs::exists(p)) die(p.string() + " not found (see --examples)");
    sources.push_back(p);
  }

  std::cout << "machine: " << machine() << "\n";
  std::cout << "msld: " << args.msld << " --compile-workers " << args.workers
            << " (--exec-workers 1 by default); hot calls: " << args.hotCalls
            << "; cold runs: " << args.coldRuns << "; exec calls: " << args.execCalls
            << "; target x86_64, default outputs (LLVM bitcode + reflection)\n";

  msl::bench::DaemonProcess daemon;
  msl::bench::DaemonOptions dopts;
  dopts.msld = args.msld;
  dopts.compileWorkers = args.workers;
  dopts.listenUnix = true;
  dopts.sharedRegions = true;
  dopts.extraArgs = args.msldArgs;
  if (std::string error; !daemon.start(dopts, &error)) die(error);
  std::cout << "msld started: pid " << daemon.pid() << ", gRPC 127.0.0.1:" << daemon.grpcPort()
            << ", metrics 127.0.0.1:" << daemon.metricsPort() << "\n" << std::flush;

  msl::client::Client client("127.0.0.1:" + std::to_string(daemon.grpcPort()));
  if (auto h = client.waitUntilHealthy(std::chrono::seconds(30)); !h.ok())
    die("msld not healthy: " + msl::client::describeStatus(h.status()));

  std::vector<Row> rows;
  std::string execOverheadNote;
  rows.push_back({"what", "calls", "p50", "p99", "p50 in-process", "service / in-process"});

  // (a) no-op call vs. cache-hit Compile.
  {
    // Client::findMissingBlobs({}) answers an empty list without a call, so
    // the no-op goes through the CAS stub on the client's channel, with the
    // same per-call deadline the client sets on Compile.
    auto cas = msl::v1::ContentAddressableStorage::NewStub(client.channel());
    auto noopCall = [&] {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + client.options().call_deadline);
      msl::v1::FindMissingBlobsRequest req;
      msl::v1::FindMissingBlobsResponse resp;
      grpc::Status s = cas->FindMissingBlobs(&ctx, req, &resp);
      if (!s.ok()) die("FindMissingBlobs: " + msl::client::describeStatus(s));
    };
    for (int i = 0; i < 20; ++i) noopCall(); // warm the channel
    std::vector<double> noop;
    for (int i = 0; i < args.hotCalls; ++i) {
      auto t0 = Clock::now();
      noopCall();
      noop.push_back(micros(Clock::now() - t0));
    }
    std::string src = readFile(sources[0]);
    auto req = serviceRequest("saxpy.metal", src, {});
    checkCompile(client.compile(req), "priming compile", std::nullopt);
    for (int i = 0; i < 5; ++i) checkCompile(client.compile(req), "warm-up hit", true);
    std::vector<double> hit;
    for (int i = 0; i < args.hotCalls; ++i) {
      auto t0 = Clock::now();
      auto r = client.compile(req);
      hit.push_back(micros(Clock::now() - t0));
      checkCompile(r, "cache-hit compile", true);
    }
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "hit/no-op p50 %.1fx", percentile(hit, .5) / percentile(noop, .5));
    rows.push_back({"no-op RPC (FindMissingBlobs, empty)", std::to_string(args.hotCalls),
                    fmtMs(percentile(noop, .5)), fmtMs(percentile(noop, .99)), "-", "-"});
    rows.push_back({"Compile, action-cache hit (saxpy)", std::to_string(args.hotCalls),
                    fmtMs(percentile(hit, .5)), fmtMs(percentile(hit, .99)), "-", ratio});
  }

  // (e) Execute's overhead over the kernel: a copy kernel, 1 MiB in (inline)
  // and 1 MiB out (returned inline: msld inlines buffers up to 1 MiB), on
  // "cpu". Warm-up calls make the compile an action-cache hit and let the
  // execution worker JIT the kernel; every measured call is checked to be a
  // cache hit with the output equal to the input. Sent through the Executor
  // stub on the client's channel with the client's per-call deadline
  // (Client::execute would also read digest-returned buffers from the store).
  {
    constexpr uint32_t kFloats = 262144; // 1 MiB of floats
    const std::string copySource =
        "kernel void copy_buffer(const device float* in [[buffer(0)]],\n"
        "                        device float* out [[buffer(1)]],\n"
        "                        uint i [[thread_position_in_grid]]) { out[i] = in[i]; }\n";
    std::string input(kFloats * sizeof(float), '\0');
    for (uint32_t i = 0; i < kFloats; ++i) {
      float v = static_cast<float>(i) * 0.25f - 1000.0f;
      std::memcpy(input.data() + i * sizeof(float), &v, sizeof v);
    }
    msl::v1::ExecuteRequest req;
    *req.mutable_compile() = serviceRequest("copy.metal", copySource, {});
    req.set_kernel("copy_buffer");
    req.set_device("cpu");
    req.add_buffers()->set_inline_(input);
    req.add_buffers()->set_zeros(input.size());
    for (uint32_t b = 0; b < 2; ++b) {
      auto *bind = req.add_buffer_bindings();
      bind->set_index(b);
      bind->set_buffer(b);
    }
    req.mutable_dispatch()->mutable_threads()->set_x(kFloats);
    req.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(256);
    req.set_repeat(1);

    // The same calls over TCP loopback, msld's Unix socket and TCP with the
    // buffers in a shared region, alternated call by call.
    std::vector<msl::bench::CopyCall> calls;
    auto transports = msl::bench::timeCopyTransports(client, daemon.unixAddress(), daemon.sharedRegionsSocket(), req,
                                                     input, args.execCalls, &calls);
    if (!args.callLog.empty())
      msl::bench::writeCallLog(args.callLog, calls);
    double tcp50 = 0;
    for (auto &t : transports) {
      double rpc50 = percentile(t.rpc, .5), kernel50 = percentile(t.kernel, .5);
      char kernelCell[48], overhead[96];
      std::snprintf(kernelCell, sizeof kernelCell, "kernel %s", fmtMs(kernel50).c_str());
      std::snprintf(overhead, sizeof overhead, "overhead %.0f us = %.1fx kernel", rpc50 - kernel50,
                    (rpc50 - kernel50) / kernel50);
      rows.push_back({"Execute copy 1 MiB in + 1 MiB out, cpu, cached, " + t.name,
                      std::to_string(args.execCalls), fmtMs(rpc50), fmtMs(percentile(t.rpc, .99)), kernelCell,
                      overhead});
      execOverheadNote += "Execute over " + t.name + ": RPC p50 " + fmtMs(rpc50) + " - kernel p50 " +
                          fmtMs(kernel50) + " (dispatch_time_ns) = overhead " + fmtMs(rpc50 - kernel50) +
                          "; RPC p50 / kernel p50 = " + std::to_string(rpc50 / kernel50).substr(0, 5) + "x";
      if (tcp50 == 0)
        tcp50 = rpc50;
      else
        execOverheadNote += "; RPC p50 " + t.name + " / TCP = " + std::to_string(rpc50 / tcp50).substr(0, 5);
      execOverheadNote += "\n";
    }
    execOverheadNote += "output == input checked on every call";
  }

  // (b) cold compiles: service vs. in-process.
  long nonce = static_cast<long>(getpid()) * 1000000;
  for (const auto &path : sources) {
    std::string name = path.stem().string();
    std::string file = path.filename().string();
    std::string src = readFile(path);
    // Warm-up (not measured): every worker process and this process compile
    // once, so one-time initialisation is not counted as a cold compile.
    for (int i = 0; i < args.workers; ++i)
      checkCompile(client.compile(serviceRequest(file, src, nonceOptions(++nonce))),
                   name + " warm-up", false);
    if (auto r = msl::compiler::compile(inProcessJob(file, src, nonceOptions(++nonce))); !r.success)
      die(name + ": in-process compile failed");

    std::vector<double> service, local, serverReported;
    for (int i = 0; i < args.coldRuns; ++i) {
      auto req = serviceRequest(file, src, nonceOptions(++nonce));
      auto t0 = Clock::now();
      auto r = client.compile(req);
      service.push_back(micros(Clock::now() - t0));
      checkCompile(r, name + " cold compile", false);
      serverReported.push_back(static_cast<double>(r->compile_time_us()));

      auto job = inProcessJob(file, src, nonceOptions(++nonce));
      t0 = Clock::now();
      auto l = msl::compiler::compile(job);
      local.push_back(micros(Clock::now() - t0));
      if (!l.success) die(name + ": in-process compile failed");
    }
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", percentile(service, .5) / percentile(local, .5));
    rows.push_back({"cold Compile " + name + " (worker reports " +
                        fmtMs(percentile(serverReported, .5)) + ")",
                    std::to_string(args.coldRuns), fmtMs(percentile(service, .5)),
                    fmtMs(percentile(service, .99)), fmtMs(percentile(local, .5)), ratio});
  }

  // In-process compiles of source variants, alternating per run after one
  // warm-up compile each (which also builds the precompiled stdlib of its
  // configuration); each row's ratio is against the first variant.
  auto compareVariants = [&](const std::vector<std::pair<std::string, std::string>> &variants,
                             const std::string &against, msl::compiler::Arch arch) {
    std::vector<std::vector<double>> times(variants.size());
    auto job = [&](const std::string &source) {
      auto j = inProcessJob("k.metal", source, nonceOptions(++nonce));
      j.target.arch = arch;
      if (arch == msl::compiler::Arch::NVPTX64)
        j.outputs = {msl::compiler::OutputKind::PTX};
      return j;
    };
    for (size_t v = 0; v < variants.size(); ++v)
      if (!msl::compiler::compile(job(variants[v].second)).success)
        die(variants[v].first + ": in-process compile failed");
    for (int i = 0; i < args.coldRuns; ++i)
      for (size_t v = 0; v < variants.size(); ++v) {
        auto j = job(variants[v].second);
        auto t0 = Clock::now();
        auto r = msl::compiler::compile(j);
        times[v].push_back(micros(Clock::now() - t0));
        if (!r.success) die(variants[v].first + ": in-process compile failed");
      }
    for (size_t v = 0; v < variants.size(); ++v) {
      char ratio[64];
      std::snprintf(ratio, sizeof ratio, "%.2fx %s", percentile(times[v], .5) / percentile(times[0], .5),
                    against.c_str());
      rows.push_back({variants[v].first, std::to_string(args.coldRuns), "-", "-",
                      fmtMs(percentile(times[v], .5)), v == 0 ? "-" : ratio});
    }
  };

  // (c) what #include <metal_stdlib> costs a trivial kernel, in-process.
  // "precompiled": the include comes first, so the per-process precompiled
  // stdlib serves it; "parsed": a #define before the include makes the
  // compiler parse the headers from source.
  const std::string trivial =
      "kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) "
      "{ a[i] = a[i] * 2.0f; }\n";
  compareVariants({{"trivial kernel, no #include", trivial},
                   {"+ #include <metal_stdlib> (precompiled)", "#include <metal_stdlib>\n" + trivial},
                   {"+ #include <metal_stdlib> (parsed)", "#define MSL_BENCH 1\n#include <metal_stdlib>\n" + trivial}},
                  "the trivial kernel", msl::compiler::Arch::X86_64);

  // (d) what precise:: math costs a compile (its accurate kernels are
  // inlined and built without fast-math) against fast::, to PTX.
  auto mathKernel = [](const std::string &ns) {
    return "#include <metal_stdlib>\nusing namespace metal;\n"
           "kernel void k(device float4* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
           "  float4 x = a[i];\n  a[i] = " + ns + "sin(x) + " + ns + "exp(x) + " + ns + "pow(x, 2.5f) + " +
           ns + "atan2(x, x + 1.0f);\n}\n";
  };
  compareVariants({{"math kernel, fast:: (PTX)", mathKernel("fast::")},
                   {"math kernel, precise:: (PTX)", mathKernel("precise::")}},
                  "the fast:: compile", msl::compiler::Arch::NVPTX64);

  std::cout << "\n";
  printTable(rows);
  if (!execOverheadNote.empty()) std::cout << "\n" << execOverheadNote << "\n";
  std::cout << "\nmsld stopped (SIGTERM): " << daemon.stop() << "\n";
  return 0;
}
