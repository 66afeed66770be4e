// compile(): the effect of each option, the examples on both targets,
// reflection, errors and the sandboxed file system.
#include "TestUtil.h"

#include "msl/compiler/Compiler.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>
#include <unistd.h>

namespace msl::compiler {
namespace {

using namespace test;
using json = nlohmann::json;

// A kernel that stores the integer value of VALUE (when defined) or -1.
const char *kDefineSource = R"(
kernel void k(device int* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
#ifdef VALUE
  out[gid] = VALUE;
#else
  out[gid] = -1;
#endif
}
)";

// ---- 2. Each option's effect through compile() ------------------------------------

TEST(CompileOptionsTest, DefineSelectsCodeAndValueReachesIR) {
  CompileResult without = compileIR(kDefineSource);
  ASSERT_TRUE(without.success) << dump(without);
  EXPECT_NE(without.artifacts[OutputKind::LLVMIR].find("store i32 -1"), std::string::npos);

  CompileResult with = compileIR(kDefineSource, {"-D", "VALUE=1234"});
  ASSERT_TRUE(with.success) << dump(with);
  const std::string &ir = with.artifacts[OutputKind::LLVMIR];
  EXPECT_NE(ir.find("store i32 1234"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("store i32 -1"), std::string::npos) << "#ifdef VALUE not taken";
}

TEST(CompileOptionsTest, DefineWithoutValueIsOne) {
  for (const auto &opts : {std::vector<std::string>{"-D", "VALUE"}, {"-DVALUE"}}) {
    CompileResult r = compileIR(kDefineSource, opts);
    ASSERT_TRUE(r.success) << dump(r);
    EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 1,"), std::string::npos);
  }
}

TEST(CompileOptionsTest, DefinesAreProcessedInOrderLastWins) {
  // Spec 6.1: processed as #define directives in command-line order, so a
  // redefinition replaces the earlier one (Clang warns, like a repeated
  // #define with a different body).
  CompileResult r = compileIR(kDefineSource, {"-DVALUE=11", "-D", "VALUE=22"});
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 22"), std::string::npos);
  EXPECT_EQ(r.artifacts[OutputKind::LLVMIR].find("store i32 11"), std::string::npos);
  bool warned = false;
  for (const auto &w : warningsOf(r))
    warned |= w.message.find("'VALUE' macro redefined") != std::string::npos;
  EXPECT_TRUE(warned) << dump(r);

  CompileResult reversed = compileIR(kDefineSource, {"-DVALUE=22", "-DVALUE=11"});
  ASSERT_TRUE(reversed.success) << dump(reversed);
  EXPECT_NE(reversed.artifacts[OutputKind::LLVMIR].find("store i32 11"), std::string::npos);
}

TEST(CompileOptionsTest, DefineCanReferToEarlierDefine) {
  CompileResult r = compileIR(kDefineSource, {"-DBASE=40", "-DVALUE=(BASE+2)"});
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 42"), std::string::npos);
}

TEST(CompileOptionsTest, DefineValueCannotInjectDirectives) {
  // GCC/Clang semantics: a definition ends at the first newline.
  CompileResult r = compileIR(kDefineSource, {"-DVALUE=7\n#error injected"});
  EXPECT_TRUE(r.success) << dump(r);
  EXPECT_EQ(dump(r).find("injected"), std::string::npos) << dump(r);
}

const char *kIncludeUser = R"(#include "util.h"
kernel void k(device int* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  out[gid] = UTIL_VALUE;
}
)";

TEST(CompileOptionsTest, IncludeDirFindsRequestHeader) {
  for (const auto &opts : {std::vector<std::string>{"-I", "inc"}, {"-Iinc"}}) {
    CompileJob job = makeJob(kIncludeUser, opts);
    job.files["inc/util.h"] = "#define UTIL_VALUE 777\n";
    CompileResult r = compile(job);
    ASSERT_TRUE(r.success) << dump(r);
    EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 777"), std::string::npos);
  }
}

TEST(CompileOptionsTest, IncludeDirsSearchedInOrder) {
  CompileJob job = makeJob(kIncludeUser, {"-Ib", "-Ia"});
  job.files["a/util.h"] = "#define UTIL_VALUE 1001\n";
  job.files["b/util.h"] = "#define UTIL_VALUE 2002\n";
  CompileResult r = compile(job);
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 2002"), std::string::npos);
}

TEST(CompileOptionsTest, WithoutIncludeDirHeaderIsNotFound) {
  CompileJob job = makeJob(kIncludeUser);
  job.files["inc/util.h"] = "#define UTIL_VALUE 777\n";
  CompileResult r = compile(job);
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "file not found");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_NE(d->message.find("util.h"), std::string::npos);
  EXPECT_EQ(d->file, "main.metal");
  EXPECT_EQ(d->line, 1u);
  EXPECT_EQ(d->column, 10u);
}

TEST(CompileOptionsTest, IncludeDirMustStayInsideCompileRoot) {
  for (const char *dir : {"../inc", "/usr/include", "inc/../../x"}) {
    SCOPED_TRACE(dir);
    CompileResult r = compile(makeJob(kIncludeUser, {"-I", dir}));
    EXPECT_FALSE(r.success);
    ASSERT_FALSE(r.diagnostics.empty());
    EXPECT_EQ(r.diagnostics[0].file, "<command line>");
    EXPECT_NE(r.diagnostics[0].message.find(dir), std::string::npos) << dump(r);
  }
}

const char *kFloatMath = R"(
kernel void k(device float* out [[buffer(0)]], device const float* in [[buffer(1)]],
              uint gid [[thread_position_in_grid]]) {
  out[gid] = in[gid] * in[gid + 1];
  out[gid + 1] = in[gid] + in[gid + 2];
}
)";

TEST(CompileOptionsTest, FastMathIsDefaultAndGivesFastFlags) {
  for (const auto &opts : {std::vector<std::string>{}, {"-ffast-math"}}) {
    CompileResult r = compileIR(kFloatMath, opts);
    ASSERT_TRUE(r.success) << dump(r);
    const std::string &ir = r.artifacts[OutputKind::LLVMIR];
    EXPECT_NE(ir.find("fmul fast"), std::string::npos) << ir;
    EXPECT_NE(ir.find("fadd fast"), std::string::npos) << ir;
  }
}

TEST(CompileOptionsTest, NoFastMathGivesStrictArithmetic) {
  CompileResult r = compileIR(kFloatMath, {"-fno-fast-math"});
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ir = r.artifacts[OutputKind::LLVMIR];
  EXPECT_NE(ir.find("fmul float"), std::string::npos) << ir;
  EXPECT_NE(ir.find("fadd float"), std::string::npos) << ir;
  EXPECT_EQ(ir.find(" fast "), std::string::npos) << ir;
  EXPECT_EQ(ir.find("nnan"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("\"unsafe-fp-math\"=\"true\""), std::string::npos);
}

TEST(CompileOptionsTest, FastMathMacroFollowsOption) {
  const char *src = R"(
kernel void k(device int* out [[buffer(0)]]) {
#ifdef __FAST_MATH__
  out[0] = 1;
#else
  out[0] = 2;
#endif
})";
  CompileResult fast = compileIR(src);
  CompileResult strict = compileIR(src, {"-fno-fast-math"});
  ASSERT_TRUE(fast.success && strict.success) << dump(fast) << dump(strict);
  EXPECT_NE(fast.artifacts[OutputKind::LLVMIR].find("store i32 1,"), std::string::npos);
  EXPECT_NE(strict.artifacts[OutputKind::LLVMIR].find("store i32 2,"), std::string::npos);
}

struct StdCase {
  const char *option; // nullptr: no -std=
  int version;
  bool ios;
};

TEST(CompileOptionsTest, StdSetsVersionAndPlatformMacros) {
  const std::vector<StdCase> cases = {
      {"-std=ios-metal1.0", 100, true},   {"-std=ios-metal1.1", 110, true},
      {"-std=ios-metal1.2", 120, true},   {"-std=ios-metal2.0", 200, true},
      {"-std=osx-metal1.1", 110, false},  {"-std=osx-metal1.2", 120, false},
      {"-std=osx-metal2.0", 200, false},  {"-std=macos-metal1.2", 120, false},
      {nullptr, 320, false}, // the default: metal3.2 (macOS), the newest
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.option ? c.option : "(default)");
    std::string src = "#if __METAL_VERSION__ != " + std::to_string(c.version) +
                      "\n#error wrong __METAL_VERSION__\n#endif\n";
    if (c.ios)
      src += "#if !defined(__METAL_IOS__) || defined(__METAL_MACOS__)\n#error wrong platform\n#endif\n";
    else
      src += "#if !defined(__METAL_MACOS__) || defined(__METAL_IOS__)\n#error wrong platform\n#endif\n";
    src += "kernel void k(device int* out [[buffer(0)]]) { out[0] = __METAL_VERSION__; }\n";
    std::vector<std::string> opts;
    if (c.option)
      opts.push_back(c.option);
    CompileResult r = compileIR(src, opts);
    ASSERT_TRUE(r.success) << dump(r);
    EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 " + std::to_string(c.version)),
              std::string::npos);
  }
}

TEST(CompileOptionsTest, WrongStdMacroExpectationFails) {
  // The check above is not vacuous: the same #error fires for another version.
  CompileResult r = compileIR("#if __METAL_VERSION__ != 120\n#error wrong version\n#endif\n"
                              "kernel void k(device int* out [[buffer(0)]]) { out[0] = 1; }\n",
                              {"-std=ios-metal2.0"});
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "wrong version");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_EQ(d->line, 2u);
}

TEST(CompileOptionsTest, BadOptionIsCommandLineError) {
  CompileResult r = compileIR(kDefineSource, {"-std=metal9.9"});
  EXPECT_FALSE(r.success);
  ASSERT_EQ(r.diagnostics.size(), 1u) << dump(r);
  EXPECT_EQ(r.diagnostics[0].file, "<command line>");
  EXPECT_EQ(r.diagnostics[0].severity, Severity::Error);
  EXPECT_NE(r.diagnostics[0].message.find("ios-metal2.0"), std::string::npos);
  EXPECT_TRUE(r.artifacts.empty());
}

// A warning Clang emits by default (-Wliteral-conversion) at 3:11.
const char *kWarnsByDefault = R"(
kernel void k(device int* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  int i = 3.5f;
  out[gid] = i;
}
)";

// A warning only with -Wunused-variable at 3:7.
const char *kUnusedVariable = R"(
kernel void k(device float* out [[buffer(0)]], uint gid [[thread_position_in_grid]]) {
  int unused = 3;
  out[gid] = 1.0f;
}
)";

TEST(CompileOptionsTest, DefaultWarningIsReportedWithLocation) {
  CompileResult r = compileIR(kWarnsByDefault);
  ASSERT_TRUE(r.success) << dump(r);
  auto warnings = warningsOf(r);
  ASSERT_EQ(warnings.size(), 1u) << dump(r);
  EXPECT_EQ(warnings[0].file, "main.metal");
  EXPECT_EQ(warnings[0].line, 3u);
  EXPECT_EQ(warnings[0].column, 11u);
  EXPECT_NE(warnings[0].message.find("changes value from 3.5 to 3"), std::string::npos);
}

TEST(CompileOptionsTest, WerrorTurnsWarningIntoError) {
  CompileResult r = compileIR(kWarnsByDefault, {"-Werror"});
  EXPECT_FALSE(r.success);
  EXPECT_TRUE(r.artifacts.empty() || r.artifacts[OutputKind::LLVMIR].empty());
  auto errors = errorsOf(r);
  ASSERT_EQ(errors.size(), 1u) << dump(r);
  EXPECT_EQ(errors[0].line, 3u);
  EXPECT_NE(errors[0].message.find("changes value"), std::string::npos);
}

TEST(CompileOptionsTest, WarningFlagEnablesWarningAndWerrorMakesItFatal) {
  CompileResult plain = compileIR(kUnusedVariable);
  ASSERT_TRUE(plain.success) << dump(plain);
  EXPECT_TRUE(warningsOf(plain).empty()) << dump(plain);

  CompileResult enabled = compileIR(kUnusedVariable, {"-Wunused-variable"});
  ASSERT_TRUE(enabled.success) << dump(enabled);
  auto warnings = warningsOf(enabled);
  ASSERT_EQ(warnings.size(), 1u) << dump(enabled);
  EXPECT_NE(warnings[0].message.find("unused variable 'unused'"), std::string::npos);
  EXPECT_EQ(warnings[0].line, 3u);
  EXPECT_EQ(warnings[0].column, 7u);

  CompileResult fatal = compileIR(kUnusedVariable, {"-Wunused-variable", "-Werror"});
  EXPECT_FALSE(fatal.success);
  ASSERT_NE(findError(fatal, "unused variable 'unused'"), nullptr) << dump(fatal);
}

TEST(CompileOptionsTest, WnoFlagDisablesDefaultWarning) {
  CompileResult r = compileIR(kWarnsByDefault, {"-Wno-literal-conversion", "-Werror"});
  EXPECT_TRUE(r.success) << dump(r);
  EXPECT_TRUE(r.diagnostics.empty()) << dump(r);
}

TEST(CompileOptionsTest, WSuppressesWarnings) {
  CompileResult r = compileIR(kWarnsByDefault, {"-W"});
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_TRUE(warningsOf(r).empty()) << dump(r);

  CompileResult enabled = compileIR(kUnusedVariable, {"-Wunused-variable", "-W"});
  ASSERT_TRUE(enabled.success) << dump(enabled);
  EXPECT_TRUE(warningsOf(enabled).empty()) << dump(enabled);
}

TEST(CompileOptionsTest, WDoesNotSuppressErrors) {
  CompileResult r = compileIR("kernel void k(device int* out [[buffer(0)]]) { out[0] = nope; }", {"-W"});
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "nope"), nullptr) << dump(r);
}

TEST(CompileOptionsTest, WerrorAfterWnoErrorWins) {
  // Clang (and so `metal`) applies -Werror / -Wno-error in command-line order:
  // the last one decides.
  CompileResult r = compileIR(kWarnsByDefault, {"-Werror", "-Wno-error"});
  EXPECT_TRUE(r.success) << dump(r);
  CompileResult last = compileIR(kWarnsByDefault, {"-Wno-error", "-Werror"});
  EXPECT_FALSE(last.success);
}

// ---- 3. The examples -------------------------------------------------------------

struct Example {
  const char *file;
  std::vector<std::string> kernels;
};

const std::vector<Example> kExamples = {
    {"examples/saxpy.metal", {"saxpy"}},
    {"examples/reduce.metal", {"reduce_sum", "reduce_sum_dynamic"}},
    {"examples/histogram.metal", {"histogram"}},
};

CompileResult compileExample(const std::string &file, Arch arch) {
  CompileJob job;
  job.mainPath = std::filesystem::path(file).filename().string();
  job.mainSource = readSourceFile(file);
  job.target.arch = arch;
  return compile(job); // default outputs
}

TEST(ExamplesTest, CompileForX86WithBitcodeAndReflection) {
  for (const auto &e : kExamples) {
    SCOPED_TRACE(e.file);
    CompileResult r = compileExample(e.file, Arch::X86_64);
    ASSERT_TRUE(r.success) << dump(r);
    EXPECT_TRUE(errorsOf(r).empty()) << dump(r);
    EXPECT_TRUE(warningsOf(r).empty()) << dump(r);
    std::set<OutputKind> kinds;
    for (const auto &[k, v] : r.artifacts)
      kinds.insert(k);
    EXPECT_EQ(kinds, (std::set<OutputKind>{OutputKind::LLVMBitcode, OutputKind::Reflection}));
    const std::string &bc = r.artifacts[OutputKind::LLVMBitcode];
    ASSERT_GE(bc.size(), 4u);
    EXPECT_EQ(bc.substr(0, 4), std::string("BC\xC0\xDE", 4));
    EXPECT_GT(r.compileTimeMicros, 0);
  }
}

std::vector<std::string> ptxEntries(const std::string &ptx) {
  std::vector<std::string> out;
  std::regex re(R"(\.visible\s+\.entry\s+([A-Za-z_$][\w$]*)\s*\()");
  for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

TEST(ExamplesTest, CompileForNvptxWithOneEntryPerKernel) {
  for (const auto &e : kExamples) {
    SCOPED_TRACE(e.file);
    CompileResult r = compileExample(e.file, Arch::NVPTX64);
    ASSERT_TRUE(r.success) << dump(r);
    EXPECT_EQ(r.artifacts.count(OutputKind::LLVMBitcode), 0u);
    ASSERT_EQ(r.artifacts.count(OutputKind::PTX), 1u);
    const std::string &ptx = r.artifacts[OutputKind::PTX];
    EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << "default SM";
    EXPECT_NE(ptx.find(".address_size 64"), std::string::npos);
    EXPECT_EQ(countOccurrences(ptx, ".entry"), e.kernels.size()) << ptx;
    auto entries = ptxEntries(ptx);
    EXPECT_EQ(std::multiset<std::string>(entries.begin(), entries.end()),
              std::multiset<std::string>(e.kernels.begin(), e.kernels.end()))
        << ptx;

    // The reflection's entry.params describe the PTX parameters one to one.
    json refl = json::parse(r.artifacts[OutputKind::Reflection]);
    for (const auto &k : refl["functions"]) {
      std::string name = k["name"];
      EXPECT_EQ(k["entry"]["convention"], "ptx-kernel");
      size_t start = ptx.find(".entry " + name + "(");
      ASSERT_NE(start, std::string::npos);
      size_t end = ptx.find(')', start);
      std::string params = ptx.substr(start, end - start);
      EXPECT_EQ(countOccurrences(params, ".param"), k["entry"]["params"].size()) << params;
    }
  }
}

// The PTX entry ends with the 48-byte launch block (compiler/EntryPoints.h),
// which the reflection lists last as "launch:48".
TEST(ExamplesTest, NvptxEntryTakesTheLaunchBlockLast) {
  CompileResult r = compileExample("examples/saxpy.metal", Arch::NVPTX64);
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ptx = r.artifacts[OutputKind::PTX];
  EXPECT_NE(ptx.find(".param .align 4 .b8 saxpy_param_4[48]\n)"), std::string::npos) << ptx;
  json refl = json::parse(r.artifacts[OutputKind::Reflection]);
  EXPECT_EQ(refl["functions"][0]["entry"]["params"].back(), "launch:48");
  // thread_position_in_grid = (ctaid + origin) * dispatch size + tid.
  EXPECT_NE(ptx.find("[saxpy_param_4]"), std::string::npos) << "the origin is read";
  EXPECT_NE(ptx.find("[saxpy_param_4+12]"), std::string::npos) << "the dispatch size is read";
}

// A `constant` scalar reference is read once, in the entry, however many
// barriers and branches the kernel has (as nvcc reads a by-value
// parameter); through the pointer LLVM read it again after the barrier.
// bench/cpu/kernels.metal's transpose, as a test writes it again.
const char *kTransposeSource = R"(#include <metal_stdlib>
using namespace metal;
kernel void transpose(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                      constant uint &N [[buffer(2)]], uint2 lid [[thread_position_in_threadgroup]],
                      uint2 group [[threadgroup_position_in_grid]]) {
  threadgroup float tile[32][33];
  for (uint j = lid.y; j < 32; j += 8)
    tile[j][lid.x] = in[(group.y * 32 + j) * N + group.x * 32 + lid.x];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint j = lid.y; j < 32; j += 8)
    out[(group.x * 32 + j) * N + group.y * 32 + lid.x] = tile[lid.x][j];
}
)";

TEST(ExamplesTest, NvptxReadsAConstantScalarReferenceOnceAcrossABarrier) {
  CompileResult r = compile(makeJob(kTransposeSource, {}, {OutputKind::PTX}, Arch::NVPTX64));
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ptx = r.artifacts[OutputKind::PTX];
  size_t loads = 0;
  for (size_t at = ptx.find("[transpose_param_2]"); at != std::string::npos;
       at = ptx.find("[transpose_param_2]", at + 1))
    ++loads;
  EXPECT_EQ(loads, 1u) << "N's pointer is read once";
  size_t first = ptx.find("ld.global.nc.u32"), barrier = ptx.find("bar.sync");
  ASSERT_NE(first, std::string::npos) << ptx;
  EXPECT_LT(first, barrier) << ptx;
  EXPECT_EQ(ptx.find("ld.global.nc.u32", first + 1), std::string::npos) << "N is read once:\n" << ptx;
}

// `for (j = lid.y; j < 32; j += 8)` exits on the stepped counter against
// 32, as nvcc's PTX does, not on a counter started at lid.y - 8 (which
// ptxas schedules worse: transpose 0.90x of nvcc on the H200).
TEST(ExamplesTest, NvptxLoopCountersAreTestedAfterTheirStep) {
  CompileResult r = compile(makeJob(kTransposeSource, {}, {OutputKind::PTX}, Arch::NVPTX64));
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ptx = r.artifacts[OutputKind::PTX];
  size_t tests = 0;
  for (size_t at = ptx.find("setp.lt.u32"); at != std::string::npos; at = ptx.find("setp.lt.u32", at + 1)) {
    ++tests;
    std::string line = ptx.substr(at, ptx.find('\n', at) - at);
    EXPECT_NE(line.find(", 32;"), std::string::npos) << line;
  }
  EXPECT_EQ(tests, 2u) << ptx;
  EXPECT_EQ(ptx.find(", -8;"), std::string::npos) << "a counter started below lid.y:\n" << ptx;
}

TEST(ExamplesTest, NvptxCpuSelectsTarget) {
  CompileJob job;
  job.mainSource = readSourceFile("examples/saxpy.metal");
  job.target = {Arch::NVPTX64, "sm_80"};
  job.outputs = {OutputKind::PTX};
  CompileResult r = compile(job);
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::PTX].find(".target sm_80"), std::string::npos);
  EXPECT_EQ(r.artifacts.count(OutputKind::Reflection), 0u) << "only the outputs asked for";
}

const json *findKernel(const json &refl, const std::string &name) {
  for (const auto &k : refl["functions"])
    if (k["name"] == name)
      return &k;
  return nullptr;
}

const json *findArg(const json &kernel, const std::string &name) {
  for (const auto &a : kernel["arguments"])
    if (a["name"] == name)
      return &a;
  return nullptr;
}

void expectBuffer(const json &kernel, const std::string &name, const std::string &space,
                  const std::string &access, unsigned index, const std::string &type, bool reference) {
  SCOPED_TRACE(name);
  const json *a = findArg(kernel, name);
  ASSERT_NE(a, nullptr) << kernel.dump(2);
  EXPECT_EQ((*a)["kind"], "buffer");
  EXPECT_EQ((*a)["address_space"], space);
  EXPECT_EQ((*a)["access"], access);
  EXPECT_EQ((*a)["index"], index);
  EXPECT_EQ((*a)["type"], type);
  EXPECT_EQ((*a)["reference"], reference);
  EXPECT_FALSE(a->contains("builtin"));
}

void expectBuiltin(const json &kernel, const std::string &name, const std::string &builtin) {
  SCOPED_TRACE(name);
  const json *a = findArg(kernel, name);
  ASSERT_NE(a, nullptr) << kernel.dump(2);
  EXPECT_EQ((*a)["kind"], "builtin");
  EXPECT_EQ((*a)["builtin"], builtin);
  EXPECT_EQ((*a)["type"], "uint");
  EXPECT_FALSE(a->contains("index"));
}

json reflectionOf(const std::string &file, Arch arch = Arch::X86_64) {
  CompileResult r = compileExample(file, arch);
  EXPECT_TRUE(r.success) << dump(r);
  return json::parse(r.artifacts[OutputKind::Reflection]);
}

TEST(ReflectionTest, Saxpy) {
  json refl = reflectionOf("examples/saxpy.metal");
  ASSERT_EQ(refl["functions"].size(), 1u);
  const json *k = findKernel(refl, "saxpy");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ((*k)["stage"], "kernel");
  EXPECT_EQ((*k)["symbol"], "saxpy");
  ASSERT_EQ((*k)["arguments"].size(), 5u);
  // Arguments come in declaration order.
  std::vector<std::string> names;
  for (const auto &a : (*k)["arguments"])
    names.push_back(a["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "x", "y", "n", "gid"}));
  expectBuffer(*k, "a", "constant", "read", 0, "float", true);
  expectBuffer(*k, "x", "device", "read", 1, "float", false);
  expectBuffer(*k, "y", "device", "read_write", 2, "float", false);
  expectBuffer(*k, "n", "constant", "read", 3, "uint", true);
  expectBuiltin(*k, "gid", "thread_position_in_grid");
  EXPECT_EQ((*k)["entry"]["convention"], "cpu-args-launch");
  EXPECT_EQ((*k)["entry"]["params"],
            json::array({"buffer:0", "buffer:1", "buffer:2", "buffer:3"}));
}

TEST(ReflectionTest, Reduce) {
  json refl = reflectionOf("examples/reduce.metal");
  ASSERT_EQ(refl["functions"].size(), 2u);
  for (const char *name : {"reduce_sum", "reduce_sum_dynamic"}) {
    SCOPED_TRACE(name);
    const json *k = findKernel(refl, name);
    ASSERT_NE(k, nullptr);
    expectBuffer(*k, "in", "device", "read", 0, "float", false);
    expectBuffer(*k, "partial", "device", "read_write", 1, "float", false);
    expectBuffer(*k, "n", "constant", "read", 2, "uint", true);
    expectBuiltin(*k, "gid", "thread_position_in_grid");
    expectBuiltin(*k, "lid", "thread_position_in_threadgroup");
    expectBuiltin(*k, "group", "threadgroup_position_in_grid");
    expectBuiltin(*k, "group_size", "threads_per_threadgroup");
  }
  const json *dyn = findKernel(refl, "reduce_sum_dynamic");
  ASSERT_NE(dyn, nullptr);
  const json *scratch = findArg(*dyn, "scratch");
  ASSERT_NE(scratch, nullptr);
  EXPECT_EQ((*scratch)["kind"], "threadgroup");
  EXPECT_EQ((*scratch)["address_space"], "threadgroup");
  EXPECT_EQ((*scratch)["index"], 0);
  EXPECT_EQ((*scratch)["type"], "float");
  EXPECT_EQ((*dyn)["entry"]["params"],
            json::array({"buffer:0", "buffer:1", "buffer:2", "threadgroup_offset:0"}));
  const json *fixed = findKernel(refl, "reduce_sum");
  EXPECT_EQ((*fixed)["arguments"].size(), 7u) << "the local threadgroup array is no argument";
}

TEST(ReflectionTest, Histogram) {
  json refl = reflectionOf("examples/histogram.metal", Arch::NVPTX64);
  ASSERT_EQ(refl["functions"].size(), 1u);
  const json *k = findKernel(refl, "histogram");
  ASSERT_NE(k, nullptr);
  expectBuffer(*k, "data", "device", "read", 0, "uchar", false);
  expectBuffer(*k, "bins", "device", "read_write", 1, "atomic_uint", false);
  expectBuffer(*k, "n", "constant", "read", 2, "uint", true);
  expectBuiltin(*k, "gid", "thread_position_in_grid");
  EXPECT_EQ((*k)["entry"]["convention"], "ptx-kernel");
}

TEST(ReflectionTest, BuiltinVectorsAndShorts) {
  const char *src = R"(
kernel void k(device float* out [[buffer(7)]],
              uint2 pos [[thread_position_in_grid]],
              ushort3 lid [[thread_position_in_threadgroup]],
              ushort w [[thread_execution_width]]) {
  out[pos.x] = lid.y + w;
})";
  CompileResult r = compile(makeJob(src, {}, {OutputKind::Reflection}));
  ASSERT_TRUE(r.success) << dump(r);
  json refl = json::parse(r.artifacts[OutputKind::Reflection]);
  const json *k = findKernel(refl, "k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ((*findArg(*k, "pos"))["type"], "uint2");
  EXPECT_EQ((*findArg(*k, "lid"))["type"], "ushort3");
  EXPECT_EQ((*findArg(*k, "w"))["builtin"], "thread_execution_width");
  EXPECT_EQ((*findArg(*k, "out"))["index"], 7);
}

// ---- 4. Errors -----------------------------------------------------------------------

TEST(CompileErrorsTest, SyntaxErrorAtLineAndColumn) {
  const char *src = "kernel void k(device float* out [[buffer(0)]]) {\n"
                    "  float a = 1.0f\n"
                    "  out[0] = a;\n"
                    "}\n";
  CompileResult r = compileIR(src);
  EXPECT_FALSE(r.success);
  EXPECT_TRUE(r.artifacts.empty() || r.artifacts[OutputKind::LLVMIR].empty());
  auto errors = errorsOf(r);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].file, "main.metal");
  EXPECT_EQ(errors[0].line, 2u);
  EXPECT_EQ(errors[0].column, 17u);
  EXPECT_NE(errors[0].message.find("expected ';'"), std::string::npos) << dump(r);
}

TEST(CompileErrorsTest, MainPathIsReported) {
  CompileJob job = makeJob("kernel void k(device int* o [[buffer(0)]]) {\n  o[0] = undefined_name;\n}\n");
  job.mainPath = "shaders/blur.metal";
  CompileResult r = compile(job);
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "undefined_name");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_EQ(d->file, "shaders/blur.metal");
  EXPECT_EQ(d->line, 2u);
  EXPECT_EQ(d->column, 10u);
}

TEST(CompileErrorsTest, ErrorInIncludedHeaderNamesHeader) {
  CompileJob job = makeJob("#include \"lib/helpers.h\"\n"
                           "kernel void k(device int* o [[buffer(0)]]) { o[0] = helper(); }\n");
  job.files["lib/helpers.h"] = "// helpers\n"
                               "inline int helper() {\n"
                               "  return 1 +;\n"
                               "}\n";
  CompileResult r = compile(job);
  EXPECT_FALSE(r.success);
  auto errors = errorsOf(r);
  ASSERT_FALSE(errors.empty()) << dump(r);
  EXPECT_EQ(errors[0].file, "lib/helpers.h") << dump(r);
  EXPECT_EQ(errors[0].line, 3u);
  EXPECT_EQ(errors[0].column, 13u);
  // Clang's "in file included from" chain is not an error of main.metal.
  for (const auto &e : errors)
    EXPECT_NE(e.file, "main.metal") << dump(r);
}

TEST(CompileErrorsTest, QuotedIncludeResolvesRelativeToIncluder) {
  CompileJob job = makeJob("#include \"lib/a.h\"\n"
                           "kernel void k(device int* o [[buffer(0)]]) { o[0] = A_VALUE; }\n");
  job.files["lib/a.h"] = "#include \"b.h\"\n#define A_VALUE (B_VALUE * 2)\n";
  job.files["lib/b.h"] = "#define B_VALUE 21\n";
  CompileResult r = compile(job);
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 42"), std::string::npos);
}

/// A file on the host that the compile must not be able to read.
class HostFile {
public:
  HostFile() {
    path_ = (std::filesystem::temp_directory_path() /
             ("msl_compiler_test_" + std::to_string(::getpid()) + ".h"))
                .string();
    std::ofstream(path_) << "#define HOST_SECRET 31337\n#error HOST_FILE_WAS_READ\n";
  }
  ~HostFile() { std::filesystem::remove(path_); }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

void expectIncludeNotFound(const std::string &include, const std::string &spelled) {
  SCOPED_TRACE(include);
  CompileResult r = compileIR(include + "\nkernel void k(device int* o [[buffer(0)]]) { o[0] = 1; }\n");
  EXPECT_FALSE(r.success);
  auto errors = errorsOf(r);
  ASSERT_EQ(errors.size(), 1u) << dump(r);
  EXPECT_EQ(errors[0].file, "main.metal");
  EXPECT_EQ(errors[0].line, 1u);
  EXPECT_EQ(errors[0].column, 10u);
  EXPECT_NE(errors[0].message.find("'" + spelled + "' file not found"), std::string::npos)
      << dump(r);
  EXPECT_EQ(dump(r).find("HOST_FILE_WAS_READ"), std::string::npos);
  EXPECT_EQ(dump(r).find("root:"), std::string::npos) << "contents of /etc/passwd leaked";
}

TEST(CompileErrorsTest, HostFilesAreNotVisible) {
  HostFile host;
  ASSERT_TRUE(std::filesystem::exists(host.path()));
  expectIncludeNotFound("#include \"/etc/passwd\"", "/etc/passwd");
  expectIncludeNotFound("#include </etc/passwd>", "/etc/passwd");
  expectIncludeNotFound("#include \"" + host.path() + "\"", host.path());
  expectIncludeNotFound("#include \"../x.h\"", "../x.h");
  expectIncludeNotFound("#include \"../../../../../../etc/passwd\"",
                        "../../../../../../etc/passwd");
  expectIncludeNotFound("#include <../../etc/passwd>", "../../etc/passwd");
}

// Arguments without an index take the lowest free one of their kind (as
// Apple's compiler assigns them); see ReflectionTest.ImplicitBindingIndices.
TEST(CompileErrorsTest, ArgumentsWithoutIndexGetTheLowestFree) {
  CompileResult r = compile(makeJob("kernel void k(device float* o, constant uint& n [[buffer(0)]], "
                                    "threadgroup float* t, device float *p) { o[0] = n + t[0] + p[0]; }",
                                    {}, {OutputKind::Reflection}));
  ASSERT_TRUE(r.success) << dump(r);
  json refl = json::parse(r.artifacts[OutputKind::Reflection]);
  const json *k = findKernel(refl, "k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ((*findArg(*k, "n"))["index"], 0);
  EXPECT_EQ((*findArg(*k, "o"))["index"], 1);
  EXPECT_EQ((*findArg(*k, "p"))["index"], 2);
  EXPECT_EQ((*findArg(*k, "t"))["index"], 0);
  EXPECT_EQ((*findArg(*k, "t"))["kind"], "threadgroup");
}

TEST(CompileErrorsTest, PlainValueArgumentIsError) {
  CompileResult r = compileIR("kernel void k(device float* o [[buffer(0)]], float x) { o[0] = x; }");
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "'x'");
  ASSERT_NE(d, nullptr) << dump(r);
}

TEST(CompileErrorsTest, DuplicateBufferIndexNamesBoth) {
  CompileResult r = compileIR("kernel void k(device float* first [[buffer(1)]],\n"
                              "              device float* second [[buffer(1)]]) {\n"
                              "  first[0] = second[0];\n"
                              "}\n");
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "buffer(1)");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_NE(d->message.find("'first'"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("'second'"), std::string::npos) << d->message;
  EXPECT_EQ(d->line, 2u);
}

TEST(CompileErrorsTest, SameIndexInDifferentKindsOrKernelsIsFine) {
  CompileResult r = compileIR(
      "kernel void a(device float* o [[buffer(0)]], threadgroup float* t [[threadgroup(0)]]) { o[0] = t[0]; }\n"
      "kernel void b(device float* o [[buffer(0)]]) { o[0] = 1.0f; }\n");
  EXPECT_TRUE(r.success) << dump(r);
}

TEST(CompileErrorsTest, DuplicateThreadgroupIndex) {
  CompileResult r = compileIR("kernel void k(device float* o [[buffer(0)]],\n"
                              "  threadgroup float* t [[threadgroup(2)]], threadgroup int* u [[threadgroup(2)]]) {\n"
                              "  o[0] = t[0] + u[0];\n"
                              "}\n");
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "threadgroup(2)");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_NE(d->message.find("'t'"), std::string::npos);
  EXPECT_NE(d->message.find("'u'"), std::string::npos);
}

TEST(CompileErrorsTest, NegativeBufferIndexIsError) {
  CompileResult r = compileIR("kernel void k(device float* o [[buffer(-1)]]) { o[0] = 1.0f; }");
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "integer constant index from 0 to 30"), nullptr) << dump(r);
}

TEST(CompileErrorsTest, OutOfRangeBufferIndexIsError) {
  // 2^32 does not fit the unsigned index: it must not silently become
  // another buffer (here it would alias buffer 0 without the duplicate error).
  CompileResult r = compile(makeJob("kernel void k(device float* a [[buffer(0)]],\n"
                                    "              device float* b [[buffer(4294967296)]]) {\n"
                                    "  a[0] = b[0];\n}\n",
                                    {}, {OutputKind::Reflection}));
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "buffer"), nullptr) << dump(r);
}

TEST(CompileErrorsTest, BuiltinOnFloatIsError) {
  CompileResult r = compileIR(
      "kernel void k(device float* o [[buffer(0)]], float gid [[thread_position_in_grid]]) { o[0] = gid; }");
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "thread_position_in_grid");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_NE(d->message.find("'gid'"), std::string::npos);
  EXPECT_NE(d->message.find("float"), std::string::npos);
}

TEST(CompileErrorsTest, BuiltinOnSignedIntIsError) {
  CompileResult r = compileIR(
      "kernel void k(device int* o [[buffer(0)]], int gid [[thread_position_in_grid]]) { o[0] = gid; }");
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "thread_position_in_grid"), nullptr) << dump(r);
}

TEST(CompileErrorsTest, KernelReturningIntIsError) {
  CompileResult r = compileIR(
      "kernel int k(device float* o [[buffer(0)]]) {\n  o[0] = 1.0f;\n  return 0;\n}\n");
  EXPECT_FALSE(r.success);
  auto errors = errorsOf(r);
  ASSERT_FALSE(errors.empty());
  for (const auto &e : errors) {
    EXPECT_EQ(e.file, "main.metal");
    EXPECT_EQ(e.line, 1u);
  }
  bool mentionsVoid = false;
  for (const auto &e : errors)
    mentionsVoid |= e.message.find("void") != std::string::npos;
  EXPECT_TRUE(mentionsVoid) << dump(r);
}

TEST(CompileErrorsTest, KernelInsideNamespaceIsChecked) {
  CompileResult r = compileIR("namespace ns { kernel void k(device float* o, float x) { o[0] = x; } }");
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "'x'"), nullptr) << dump(r);
}

TEST(CompileErrorsTest, KernelInsideExternCIsChecked) {
  CompileResult r = compile(makeJob(
      "extern \"C\" {\nkernel void k(device float* o, float x) { o[0] = x; }\n}\n",
      {}, {OutputKind::Reflection}));
  EXPECT_NE(findError(r, "'x'"), nullptr) << dump(r);
}

TEST(CompileErrorsTest, KernelInsideExternCIsReflected) {
  CompileResult r = compile(makeJob(
      "extern \"C\" kernel void k(device float* o [[buffer(0)]]) { o[0] = 1.0f; }\n", {},
      {OutputKind::Reflection, OutputKind::LLVMIR}));
  ASSERT_TRUE(r.success) << dump(r);
  json refl = json::parse(r.artifacts[OutputKind::Reflection]);
  EXPECT_NE(findKernel(refl, "k"), nullptr);
}

TEST(CompileErrorsTest, PtxForX86IsError) {
  CompileJob job = makeJob(readSourceFile("examples/saxpy.metal"), {}, {OutputKind::PTX});
  CompileResult r = compile(job);
  EXPECT_FALSE(r.success);
  EXPECT_TRUE(r.artifacts.empty());
  ASSERT_EQ(r.diagnostics.size(), 1u) << dump(r);
  EXPECT_EQ(r.diagnostics[0].file, "<command line>");
  EXPECT_NE(r.diagnostics[0].message.find("nvptx64"), std::string::npos);
}

TEST(CompileErrorsTest, UnsafeFilePathsRejected) {
  for (const char *path : {"../x.h", "/etc/x.h", "inc/../../x.h", "a/../b.h", ""}) {
    SCOPED_TRACE(path);
    CompileJob job = makeJob("kernel void k(device int* o [[buffer(0)]]) { o[0] = 1; }");
    job.files[path] = "#define X 1\n";
    CompileResult r = compile(job);
    EXPECT_FALSE(r.success);
    ASSERT_EQ(r.diagnostics.size(), 1u) << dump(r);
    EXPECT_EQ(r.diagnostics[0].file, "<command line>");
    EXPECT_NE(r.diagnostics[0].message.find("'" + std::string(path) + "'"), std::string::npos)
        << r.diagnostics[0].message;
  }
}

TEST(CompileErrorsTest, UnsafeMainPathRejected) {
  for (const char *path : {"../main.metal", "/tmp/main.metal", ""}) {
    SCOPED_TRACE(path);
    CompileJob job = makeJob("kernel void k(device int* o [[buffer(0)]]) { o[0] = 1; }");
    job.mainPath = path;
    CompileResult r = compile(job);
    EXPECT_FALSE(r.success);
    ASSERT_FALSE(r.diagnostics.empty());
    EXPECT_EQ(r.diagnostics[0].file, "<command line>") << dump(r);
  }
}

TEST(CompileErrorsTest, FileNamedLikeMainDoesNotReplaceMainSource) {
  CompileJob job = makeJob("kernel void k(device int* o [[buffer(0)]]) { o[0] = 5; }");
  job.files["main.metal"] = "this is not the main source";
  CompileResult r = compile(job);
  // Either outcome that is not "compile the wrong text" is acceptable.
  if (r.success)
    EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 5"), std::string::npos);
  else
    EXPECT_EQ(r.diagnostics.at(0).file, "<command line>") << dump(r);
}

TEST(CompileErrorsTest, ErrorsAreDataNotExceptions) {
  CompileResult r = compileIR(std::string("\0\xff\xfe garbage", 11));
  EXPECT_FALSE(r.success);
  EXPECT_FALSE(errorsOf(r).empty());
}

// ---- 7. Identity and stdlib -----------------------------------------------------------

TEST(IdentityTest, MentionsLlvm19AndStdlibDigest) {
  const std::string &id = compilerIdentity();
  EXPECT_NE(id.find("llvm/19."), std::string::npos) << id;
  EXPECT_NE(id.find("msld/"), std::string::npos) << id;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(id, m, std::regex("stdlib/sha256:([0-9a-f]+)"))) << id;
  EXPECT_EQ(m[1].length(), 64) << id;
  EXPECT_EQ(&compilerIdentity(), &id) << "computed once";
}

TEST(IdentityTest, EmbeddedStdlibHasTheHeadersButNotTheDocs) {
  const auto &files = embeddedStdlib();
  for (const char *name : {"metal_stdlib", "metal_atomic", "metal_compute", "metal_math",
                           "metal_types", "__msl_prelude.h"}) {
    auto it = files.find(name);
    ASSERT_NE(it, files.end()) << name;
    EXPECT_EQ(it->second, readSourceFile(std::string("compiler/stdlib/") + name)) << name;
  }
  EXPECT_EQ(files.count("README.md"), 0u);
  EXPECT_EQ(files.count("FLAGS.txt"), 0u);
}

TEST(IdentityTest, StdlibIsReachableWithoutRequestFiles) {
  CompileResult r = compileIR("#include <metal_stdlib>\n#include \"metal_math\"\nusing namespace metal;\n"
                              "kernel void k(device float* o [[buffer(0)]]) { o[0] = sqrt(o[1]); }\n");
  EXPECT_TRUE(r.success) << dump(r);
}

TEST(ConcurrencyTest, ParallelCompilesAreIndependent) {
  constexpr int kThreads = 4;
  std::vector<CompileResult> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      results[i] = compileIR(kDefineSource, {"-DVALUE=" + std::to_string(1000 + i)});
    });
  for (auto &t : threads)
    t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_TRUE(results[i].success) << dump(results[i]);
    EXPECT_NE(results[i].artifacts[OutputKind::LLVMIR].find("store i32 " + std::to_string(1000 + i)),
              std::string::npos);
  }
}

// The precompiled stdlib serves sources that begin with #include
// <metal_stdlib>; the result must be what parsing the headers gives, and a
// source that does not include it must not see the library.
TEST(StdlibPch, SameOutputAsParsingTheHeaders) {
  const std::string body =
      "using namespace metal;\n"
      "kernel void k(device float4 *a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
      "  a[i] = normalize(a[i]) * sqrt(a[i].x) + float4(M_PI_F);\n}\n";
  auto functionsOf = [](const CompileResult &r) {
    // The module without its header lines (ModuleID, source_filename).
    std::string ir = r.artifacts.at(OutputKind::LLVMIR);
    return ir.substr(ir.find("target datalayout"));
  };
  for (const char *opt : {"-ffast-math", "-fno-fast-math"}) {
    auto precompiled = compile(makeJob("// comment\n#pragma clang diagnostic ignored \"-Wunused\"\n"
                                       "#include <metal_stdlib>\n" + body, {opt, "-DUSER=1"}));
    // Anything but a comment or #pragma before the include parses the headers.
    auto parsed = compile(makeJob("#define PARSE_IT 1\n#include <metal_stdlib>\n" + body, {opt, "-DUSER=1"}));
    ASSERT_TRUE(precompiled.success) << dump(precompiled);
    ASSERT_TRUE(parsed.success) << dump(parsed);
    EXPECT_TRUE(precompiled.precompiledStdlib) << "the PCH path was not taken";
    EXPECT_FALSE(parsed.precompiledStdlib);
    EXPECT_EQ(functionsOf(precompiled), functionsOf(parsed)) << opt;
  }
  // With the PCH built above in this process, a source without the include
  // still does not see metal::.
  auto bare = compile(makeJob("kernel void k(device float *a [[buffer(0)]]) { a[0] = metal::sqrt(a[1]); }\n"));
  EXPECT_FALSE(bare.success);
  EXPECT_FALSE(bare.precompiledStdlib);
  EXPECT_NE(findError(bare, "metal"), nullptr) << dump(bare);
}

// -include FILE: the file is read ahead of the main source, in order; the
// precompiled stdlib serves the compile when the first one begins with
// #include <metal_stdlib>, as it would the main file.
TEST(StdlibPch, ForcedIncludesComeFirstInOrder) {
  const std::string main = "kernel void k(device float *a [[buffer(0)]]) { a[0] = SCALE * metal::sqrt(a[1]); }\n";
  CompileJob job = makeJob(main, {"-include", "pre/defs.metal", "-include", "more.h"});
  job.files["pre/defs.metal"] = "#include <metal_stdlib>\n#define SCALE (TWICE(3.0f))\n";
  job.files["more.h"] = "#define TWICE(x) (2 * (x))\n";
  job.outputs = {OutputKind::LLVMIR};
  auto r = compile(job);
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_TRUE(r.precompiledStdlib);
  EXPECT_NE(r.artifacts.at(OutputKind::LLVMIR).find("6.000000e+00"), std::string::npos);
  // A first file that does not begin with the stdlib: headers parsed, same code.
  job.files["pre/defs.metal"] = "#define SCALE (TWICE(3.0f))\n#include <metal_stdlib>\n";
  auto parsed = compile(job);
  ASSERT_TRUE(parsed.success) << dump(parsed);
  EXPECT_FALSE(parsed.precompiledStdlib);
  // Without the file among the request's files: an error naming it.
  job.files.erase("more.h");
  auto missing = compile(job);
  EXPECT_FALSE(missing.success);
  EXPECT_NE(findError(missing, "more.h"), nullptr) << dump(missing);
}

// User macros still apply after a precompiled stdlib; a macro that the
// stdlib would see differently cannot change it (it is not a stdlib input).
TEST(StdlibPch, UserMacrosAndDiagnosticsStillWork) {
  auto r = compile(makeJob("#include <metal_stdlib>\n"
                           "kernel void k(device float *a [[buffer(0)]]) { a[0] = SCALE * metal::sqrt(a[1]); }\n",
                           {"-D", "SCALE=3.0"}));
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts.at(OutputKind::LLVMIR).find("3.000000e+00"), std::string::npos);
  auto bad = compile(makeJob("#include <metal_stdlib>\nkernel void k(device float *a [[buffer(0)]]) { a[0] = nope; }\n"));
  const Diagnostic *e = findError(bad, "nope");
  ASSERT_NE(e, nullptr) << dump(bad);
  EXPECT_EQ(e->line, 2u);
}

// A repaired source (SourceRepair.h) reports its diagnostics at the
// original source's columns, although the repair inserted text before them.
TEST(SourceRepair, DiagnosticsKeepOriginalColumns) {
  const std::string line = "  half4 x = h[0] * 255.0; int y = 3.5; h[1] = x + half(y);";
  auto r = compile(makeJob("#include <metal_stdlib>\nusing namespace metal;\n"
                           "kernel void k(device half4 *h [[buffer(0)]]) {\n" + line + "\n}\n"));
  ASSERT_TRUE(r.success) << dump(r);
  auto warnings = warningsOf(r);
  ASSERT_EQ(warnings.size(), 1u) << dump(r);
  EXPECT_NE(warnings[0].message.find("changes value"), std::string::npos) << dump(r);
  EXPECT_EQ(warnings[0].line, 4u);
  EXPECT_EQ(warnings[0].column, unsigned(line.find("3.5") + 1)) << dump(r);
}

// Arguments without an index get the lowest free one of their kind, in
// argument order (tests/compiler/msl/stages/implicit-binding-indices.metal).
TEST(ReflectionTest, ImplicitBindingIndices) {
  CompileJob job;
  job.mainSource = readSourceFile("tests/compiler/msl/stages/implicit-binding-indices.metal");
  job.outputs = {OutputKind::Reflection};
  CompileResult r = compile(job);
  ASSERT_TRUE(r.success) << dump(r);
  json refl = json::parse(r.artifacts[OutputKind::Reflection]);
  const json *k = findKernel(refl, "k");
  ASSERT_NE(k, nullptr);
  const std::map<std::string, unsigned> expected = {{"a", 0},    {"n", 1},     {"b", 2}, {"c", 3},
                                                    {"t", 0},    {"pair", 2},  {"fixed", 1},
                                                    {"s", 0},    {"scratch", 0}};
  for (const auto &[name, index] : expected) {
    SCOPED_TRACE(name);
    const json *a = findArg(*k, name);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ((*a)["index"], index);
  }
}

} // namespace
} // namespace msl::compiler

namespace msl::compiler {
namespace {

// Inline assembly in a request header is refused at its own location, as in
// the main source (Metal has none; on the CPU device it would reach the OS).
TEST(InlineAsmTest, AsmInARequestHeaderIsAnErrorAtItsLocation) {
  CompileJob job;
  job.mainPath = "main.metal";
  job.mainSource = "#include \"h.h\"\nkernel void k(device int *o [[buffer(0)]]) { helper(o); }\n";
  job.files["h.h"] = "inline void helper(device int *o) {\n  o[0] = 1;\n  __asm__ volatile(\"syscall\");\n}\n";
  CompileResult r = compile(job);
  EXPECT_FALSE(r.success);
  bool found = false;
  for (const auto &d : r.diagnostics)
    if (d.file == "h.h" && d.line == 3 && d.message.find("inline assembly is not supported in Metal") != std::string::npos)
      found = true;
  EXPECT_TRUE(found);
}

} // namespace
} // namespace msl::compiler

