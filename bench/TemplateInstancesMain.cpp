//===- msl-bench-templates: compile time vs. explicit kernel instantiations -===//
//
//   msl-bench-templates [--counts 75,150,300,600] [--reps 3]
//                       [--outputs full|reflection] [--target x86_64|nvptx64]
//                       [--plain] [--plain-only N] [--dump N FILE]
//
// Generates one MSL file with one kernel template
//
//   template <typename T, int N> kernel void f(device const T *in [[buffer(0)]], ...)
//
// (the same body for every N but for a constant: each instance costs the
// same) and N explicit instantiations, one a line,
//
//   template [[host_name("f_i")]] kernel void f<float, i>(device const float *, ...);
//
// (PyTorch's and MLX's style), compiles it in-process with
// msl::compiler::compile() (target x86_64, outputs LLVM bitcode +
// reflection; or nvptx64, outputs PTX + reflection; or reflection only),
// and prints for each N the median of
// --reps compiles: compile ms, ms per instance and the ratio to the first
// N. Linear growth keeps ms per instance about constant (ratio = N / N0).
// Times are the process's CPU time (the compile is single-threaded), with
// the wall time beside them: on a shared machine CPU time varies less.
// --plain adds, for comparison, the same N kernels written out as N plain
// (non-template) kernels, which need no source repair. Each compile gets a
// fresh `-D` so that nothing can be reused. One warm-up compile first
// (one-time initialisation: the precompiled stdlib, LLVM's targets).
//
//===----------------------------------------------------------------------===//
#include "msl/compiler/Compiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <time.h>

namespace {

using msl::compiler::CompileJob;
using msl::compiler::CompileResult;
using msl::compiler::OutputKind;

std::string templateSource(int n) {
  std::ostringstream s;
  s << "#include <metal_stdlib>\nusing namespace metal;\n\n"
       "template <typename T, int N>\n"
       "kernel void f(device const T *in [[buffer(0)]], device T *out [[buffer(1)]],\n"
       "              constant uint &count [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n"
       "  if (i >= count)\n"
       "    return;\n"
       "  T x = in[i];\n"
       "  out[i] = x * T(0.5) + T(N) * x * x;\n"
       "}\n\n";
  for (int i = 1; i <= n; ++i)
    s << "template [[host_name(\"f_" << i << "\")]] kernel void f<float, " << i
      << ">(device const float *, device float *, constant uint &, uint);\n";
  return s.str();
}

std::string plainSource(int n) {
  std::ostringstream s;
  s << "#include <metal_stdlib>\nusing namespace metal;\n\n";
  for (int i = 1; i <= n; ++i)
    s << "kernel void f_" << i
      << "(device const float *in [[buffer(0)]], device float *out [[buffer(1)]], "
         "constant uint &count [[buffer(2)]], uint i [[thread_position_in_grid]]) {\n"
         "  if (i >= count)\n    return;\n  float x = in[i];\n  out[i] = x * 0.5f + float("
      << i << ") * x * x;\n}\n";
  return s.str();
}

long nonce = 0;
bool nvptx = false; // --target nvptx64

/// CPU time of this process (the compile runs on the calling thread): less
/// disturbed than wall time by other work on a shared machine.
double cpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/// Compile ms (CPU time; `wallMs` gets the wall time), failing loudly when
/// it does not compile.
double compileMs(const std::string &source, bool full, CompileResult *out = nullptr, double *wallMs = nullptr) {
  CompileJob job;
  job.mainPath = "instances.metal";
  job.mainSource = source;
  job.options = {"-std=metal3.1", "-D", "MSL_BENCH_NONCE=" + std::to_string(++nonce)};
  job.target.arch = nvptx ? msl::compiler::Arch::NVPTX64 : msl::compiler::Arch::X86_64;
  OutputKind code = nvptx ? OutputKind::PTX : OutputKind::LLVMBitcode;
  job.outputs = full ? std::vector<OutputKind>{code, OutputKind::Reflection}
                     : std::vector<OutputKind>{OutputKind::Reflection};
  auto t0 = std::chrono::steady_clock::now();
  double c0 = cpuMs();
  CompileResult r = msl::compiler::compile(job);
  double ms = cpuMs() - c0;
  if (wallMs)
    *wallMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!r.success) {
    std::fprintf(stderr, "msl-bench-templates: the generated file does not compile:\n");
    for (size_t i = 0; i < r.diagnostics.size() && i < 10; ++i)
      std::fprintf(stderr, "  %s:%u:%u: %s\n", r.diagnostics[i].file.c_str(), r.diagnostics[i].line,
                   r.diagnostics[i].column, r.diagnostics[i].message.c_str());
    std::exit(1);
  }
  if (out)
    *out = std::move(r);
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int usage() {
  std::fprintf(stderr, "usage: msl-bench-templates [--counts 75,150,300,600] [--reps 3] "
                       "[--outputs full|reflection] [--target x86_64|nvptx64] [--plain] [--plain-only N] "
                       "[--dump N FILE]\n");
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int> counts = {75, 150, 300, 600};
  int reps = 3;
  bool full = true, plain = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char * { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--counts") {
      const char *v = value();
      if (!v)
        return usage();
      counts.clear();
      std::stringstream ss(v);
      for (std::string item; std::getline(ss, item, ',');)
        counts.push_back(std::atoi(item.c_str()));
    } else if (a == "--reps") {
      const char *v = value();
      if (!v)
        return usage();
      reps = std::max(1, std::atoi(v));
    } else if (a == "--outputs") {
      const char *v = value();
      if (!v)
        return usage();
      full = std::string(v) == "full";
    } else if (a == "--target") {
      const char *v = value();
      if (!v || (std::string(v) != "x86_64" && std::string(v) != "nvptx64"))
        return usage();
      nvptx = std::string(v) == "nvptx64";
    } else if (a == "--plain") {
      plain = true;
    } else if (a == "--plain-only") { // (for profiling the plain kernels alone)
      const char *v = value();
      if (!v)
        return usage();
      std::string src = plainSource(std::atoi(v));
      std::printf("%d plain kernels: %.1f ms\n", std::atoi(v), compileMs(src, full));
      return 0;
    } else if (a == "--dump") {
      const char *n = value(), *file = value();
      if (!n || !file)
        return usage();
      std::ofstream(file) << templateSource(std::atoi(n));
      return 0;
    } else {
      return usage();
    }
  }
  if (counts.empty() || counts[0] <= 0)
    return usage();

  compileMs(templateSource(2), full); // warm-up
  std::printf("one kernel template + N `template [[host_name]] kernel` instantiations, in-process "
              "compile (%s, %s), median of %d\n\n",
              nvptx ? "nvptx64" : "x86_64",
              !full ? "reflection only" : nvptx ? "PTX + reflection" : "LLVM bitcode + reflection", reps);
  std::printf("| N | source KiB | compile ms (CPU) | ms per instance | ratio to N=%d | (linear: %s) | wall ms |",
              counts[0], "N/N0");
  if (plain)
    std::printf(" N plain kernels, ms (CPU) | ms per kernel |");
  std::printf("\n|---:|---:|---:|---:|---:|---:|---:|%s\n", plain ? "---:|---:|" : "");
  double base = 0;
  for (int n : counts) {
    std::string src = templateSource(n);
    std::vector<double> t, wall;
    CompileResult last;
    for (int r = 0; r < reps; ++r) {
      double w = 0;
      t.push_back(compileMs(src, full, &last, &w));
      wall.push_back(w);
    }
    double ms = median(t);
    // Every instance is a kernel: the last one's host name is reflected.
    const std::string &refl = last.artifacts[OutputKind::Reflection];
    if (refl.find("\"f_" + std::to_string(n) + "\"") == std::string::npos ||
        refl.find("\"f_1\"") == std::string::npos) {
      std::fprintf(stderr, "msl-bench-templates: the reflection of N=%d lacks f_1 or f_%d\n", n, n);
      return 1;
    }
    if (base == 0)
      base = ms;
    std::printf("| %d | %.1f | %.1f | %.3f | %.2f | %.2f | %.1f |", n, src.size() / 1024.0, ms, ms / n, ms / base,
                double(n) / counts[0], median(wall));
    if (plain) {
      std::string p = plainSource(n);
      std::vector<double> tp;
      for (int r = 0; r < reps; ++r)
        tp.push_back(compileMs(p, full));
      double pms = median(tp);
      std::printf(" %.1f | %.3f |", pms, pms / n);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
