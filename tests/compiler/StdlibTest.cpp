// The embedded stdlib through compile(): atomics (MSL 2.0 5.12 and the
// version rules per -std=) and the Metal vector constructors.
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace msl::compiler {
namespace {

using namespace test;

const std::vector<std::string> kAllStds = {
    "-std=ios-metal1.0", "-std=ios-metal1.1", "-std=ios-metal1.2", "-std=ios-metal2.0",
    "-std=osx-metal1.1", "-std=osx-metal1.2", "-std=osx-metal2.0"};

// Wraps a kernel body using atomics. `a`: device atomic_int*, `va`: volatile
// device atomic_uint*, `t`: threadgroup atomic_int*, `vt`: volatile
// threadgroup atomic_uint*, `out`: device int*.
std::string atomicKernel(const std::string &body) {
  return R"(#include <metal_stdlib>
using namespace metal;
kernel void k(device atomic_int* a [[buffer(0)]],
              volatile device atomic_uint* va [[buffer(1)]],
              device int* out [[buffer(2)]],
              threadgroup atomic_int* t [[threadgroup(0)]],
              volatile threadgroup atomic_uint* vt [[threadgroup(1)]],
              uint gid [[thread_position_in_grid]]) {
)" + body + "\n}\n";
}
// Line of the first body line in atomicKernel().
constexpr unsigned kBodyLine = 9;

std::string casBody(const std::string &success, const std::string &failure) {
  return "  int e = out[gid];\n"
         "  bool ok = atomic_compare_exchange_weak_explicit(a, &e, 7, " +
         success + ", " + failure + ");\n  out[gid] = ok ? e : -1;";
}

// Every relaxed-order atomic function, on every overload (device, threadgroup,
// volatile, memory_scope), returning results so nothing is dead.
const char *kAllRelaxed = R"(
  atomic_store_explicit(a, 1, memory_order_relaxed);
  atomic_store_explicit(t, 2, memory_order_relaxed);
  atomic_store_explicit(va, 3u, memory_order_relaxed);
  atomic_store_explicit(vt, 4u, memory_order_relaxed);
  atomic_store_explicit(a, 5, memory_order_relaxed, memory_scope_device);
  atomic_store_explicit(va, 6u, memory_order_relaxed, memory_scope_threadgroup);
  int r = atomic_load_explicit(a, memory_order_relaxed);
  r += atomic_load_explicit(t, memory_order_relaxed);
  r += atomic_load_explicit(va, memory_order_relaxed);
  r += atomic_load_explicit(vt, memory_order_relaxed);
  r += atomic_load_explicit(a, memory_order_relaxed, memory_scope_device);
  r += atomic_exchange_explicit(a, 1, memory_order_relaxed);
  r += atomic_exchange_explicit(t, 1, memory_order_relaxed);
  r += atomic_exchange_explicit(va, 1u, memory_order_relaxed);
  r += atomic_exchange_explicit(vt, 1u, memory_order_relaxed);
  r += atomic_exchange_explicit(a, 1, memory_order_relaxed, memory_scope_device);
  r += atomic_exchange_explicit(va, 1u, memory_order_relaxed, memory_scope_threadgroup);
  r += atomic_fetch_add_explicit(a, 1, memory_order_relaxed);
  r += atomic_fetch_sub_explicit(t, 1, memory_order_relaxed);
  r += atomic_fetch_and_explicit(va, 1u, memory_order_relaxed);
  r += atomic_fetch_or_explicit(vt, 1u, memory_order_relaxed);
  r += atomic_fetch_xor_explicit(a, 1, memory_order_relaxed, memory_scope_device);
  r += atomic_fetch_min_explicit(t, 1, memory_order_relaxed);
  r += atomic_fetch_max_explicit(va, 1u, memory_order_relaxed, memory_scope_device);
  int e = 0;
  uint ue = 0;
  r += atomic_compare_exchange_weak_explicit(a, &e, 1, memory_order_relaxed, memory_order_relaxed);
  r += atomic_compare_exchange_weak_explicit(t, &e, 1, memory_order_relaxed, memory_order_relaxed);
  r += atomic_compare_exchange_weak_explicit(va, &ue, 1u, memory_order_relaxed, memory_order_relaxed);
  r += atomic_compare_exchange_weak_explicit(vt, &ue, 1u, memory_order_relaxed, memory_order_relaxed);
  r += atomic_compare_exchange_weak_explicit(a, &e, 1, memory_order_relaxed, memory_order_relaxed, memory_scope_device);
  r += atomic_compare_exchange_weak_explicit(va, &ue, 1u, memory_order_relaxed, memory_order_relaxed, memory_scope_threadgroup);
  out[gid] = r + e + ue;)";

TEST(AtomicsTest, RelaxedCompilesUnderEveryStd) {
  for (const auto &std : kAllStds) {
    SCOPED_TRACE(std);
    CompileResult r = compileIR(atomicKernel(kAllRelaxed), {std});
    ASSERT_TRUE(r.success) << dump(r);
    EXPECT_TRUE(r.diagnostics.empty()) << dump(r);
    const std::string &ir = r.artifacts[OutputKind::LLVMIR];
    // 6 stores, 5 loads, 6 exchanges, 7 other RMWs, 6 compare-exchanges: all
    // atomic, all relaxed (LLVM's "monotonic").
    EXPECT_EQ(countOccurrences(ir, "store atomic"), 6u);
    EXPECT_EQ(countOccurrences(ir, "load atomic"), 5u);
    EXPECT_EQ(countOccurrences(ir, "atomicrmw"), 13u);
    EXPECT_EQ(countOccurrences(ir, "cmpxchg weak"), 6u);
    EXPECT_EQ(countOccurrences(ir, "seq_cst"), 0u);
  }
}

TEST(AtomicsTest, RelaxedCompilesForNvptx) {
  CompileResult r = compile(makeJob(atomicKernel(kAllRelaxed), {}, {OutputKind::PTX}, Arch::NVPTX64));
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ptx = r.artifacts[OutputKind::PTX];
  EXPECT_NE(ptx.find("atom.global"), std::string::npos);
  EXPECT_NE(ptx.find("atom.shared"), std::string::npos) << "threadgroup atomics use shared memory";
}

// LLVM 19's NVPTX backend selects no seq_cst or acquire/release atomic
// load or store and no fence: the stdlib gives them as relaxed accesses
// between membar.gl there (compiler/stdlib/metal_atomic).
TEST(AtomicsTest, OrderedLoadsAndStoresCompileForNvptx) {
  const char *body = R"(
  atomic_store(t, 1);
  atomic_store_explicit(a, 2, memory_order_release);
  int r = atomic_load(a) + atomic_load_explicit(va, memory_order_acquire) + atomic_load(vt);
  int e = 0;
  r += atomic_compare_exchange_weak(a, &e, 3) + atomic_exchange(t, 4);
  out[gid] = r;)";
  CompileResult r = compile(makeJob(atomicKernel(body), {"-std=ios-metal2.0"}, {OutputKind::PTX}, Arch::NVPTX64));
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ptx = r.artifacts[OutputKind::PTX];
  // One before and after the seq_cst store, one before the release store,
  // one before and after each seq_cst load, one after the acquire load.
  EXPECT_EQ(countOccurrences(ptx, "membar.gl;"), 8u) << ptx;
  CompileResult cpu = compileIR(atomicKernel(body), {"-std=ios-metal2.0"});
  ASSERT_TRUE(cpu.success) << dump(cpu);
  EXPECT_EQ(cpu.artifacts[OutputKind::LLVMIR].find("membar"), std::string::npos) << "the CPU keeps LLVM's orders";
  EXPECT_NE(cpu.artifacts[OutputKind::LLVMIR].find("seq_cst"), std::string::npos);
}

TEST(AtomicsTest, VolatileOverloadsKeepVolatile) {
  CompileResult r = compileIR(atomicKernel(kAllRelaxed));
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ir = r.artifacts[OutputKind::LLVMIR];
  EXPECT_EQ(countOccurrences(ir, "store atomic volatile"), 3u);
  EXPECT_EQ(countOccurrences(ir, "load atomic volatile"), 2u);
  EXPECT_EQ(countOccurrences(ir, "atomicrmw volatile"), 6u);
  EXPECT_EQ(countOccurrences(ir, "cmpxchg weak volatile"), 3u);
}

TEST(AtomicsTest, FetchAddGivesAtomicrmwAdd) {
  CompileResult r = compileIR(atomicKernel("  out[gid] = atomic_fetch_add_explicit(a, 3, memory_order_relaxed);"));
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("atomicrmw add ptr"), std::string::npos);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("i32 3 monotonic"), std::string::npos);
}

TEST(AtomicsTest, UnsignedMinMaxAreUnsigned) {
  CompileResult r = compileIR(atomicKernel(
      "  out[gid] = atomic_fetch_min_explicit(va, 3u, memory_order_relaxed) +\n"
      "             atomic_fetch_max_explicit(a, 3, memory_order_relaxed);"));
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ir = r.artifacts[OutputKind::LLVMIR];
  EXPECT_NE(ir.find("atomicrmw volatile umin"), std::string::npos) << ir;
  EXPECT_NE(ir.find("atomicrmw max"), std::string::npos) << ir;
}

TEST(AtomicsTest, CompareExchangeGivesCmpxchg) {
  CompileResult r = compileIR(atomicKernel(casBody("memory_order_relaxed", "memory_order_relaxed")));
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("cmpxchg weak ptr"), std::string::npos);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("i32 7 monotonic monotonic"), std::string::npos);
}

void expectOrderRejected(const CompileResult &r, const std::string &function,
                         const std::string &stdName) {
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "memory_order_seq_cst requires -std=ios-metal2.0");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_NE(d->message.find(function), std::string::npos) << d->message;
  EXPECT_NE(d->message.find(stdName), std::string::npos) << d->message;
  EXPECT_EQ(d->file, "main.metal");
  EXPECT_EQ(d->line, kBodyLine);
}

TEST(AtomicsTest, ExchangeSeqCstRejectedOnOsxMetal20) {
  CompileResult r = compileIR(
      atomicKernel("  out[gid] = atomic_exchange_explicit(a, 5, memory_order_seq_cst);"),
      {"-std=osx-metal2.0"});
  expectOrderRejected(r, "atomic_exchange_explicit", "osx-metal2.0");
}

TEST(AtomicsTest, ExchangeSeqCstRejectedOnIosMetal12) {
  CompileResult r = compileIR(
      atomicKernel("  out[gid] = atomic_exchange_explicit(a, 5, memory_order_seq_cst);"),
      {"-std=ios-metal1.2"});
  expectOrderRejected(r, "atomic_exchange_explicit", "ios-metal1.2");
}

TEST(AtomicsTest, ExchangeSeqCstRejectedByDefault) {
  CompileResult r = compileIR(
      atomicKernel("  out[gid] = atomic_exchange_explicit(a, 5, memory_order_seq_cst);"));
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "requires -std=ios-metal2.0"), nullptr) << dump(r);
}

TEST(AtomicsTest, ExchangeSeqCstAcceptedOnIosMetal20) {
  CompileResult r = compileIR(
      atomicKernel("  out[gid] = atomic_exchange_explicit(a, 5, memory_order_seq_cst);"),
      {"-std=ios-metal2.0"});
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("atomicrmw xchg ptr"), std::string::npos);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("i32 5 seq_cst"), std::string::npos);
}

TEST(AtomicsTest, OtherOrdersRejectedBeforeIosMetal20) {
  for (const char *order : {"memory_order_acquire", "memory_order_release", "memory_order_acq_rel"}) {
    SCOPED_TRACE(order);
    CompileResult r = compileIR(
        atomicKernel(std::string("  out[gid] = atomic_fetch_add_explicit(a, 1, ") + order + ");"),
        {"-std=osx-metal2.0"});
    EXPECT_FALSE(r.success);
    const Diagnostic *d = findError(r, std::string(order) + " requires -std=ios-metal2.0");
    EXPECT_NE(d, nullptr) << dump(r);
  }
}

TEST(AtomicsTest, CompareExchangeSeqCstRejectedOnOsxMetal20) {
  CompileResult r = compileIR(atomicKernel(casBody("memory_order_seq_cst", "memory_order_seq_cst")),
                              {"-std=osx-metal2.0"});
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "memory_order_seq_cst requires -std=ios-metal2.0");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_NE(d->message.find("atomic_compare_exchange_weak_explicit"), std::string::npos);
  EXPECT_EQ(d->line, kBodyLine + 1);
}

TEST(AtomicsTest, CompareExchangeSeqCstRejectedOnIosMetal12) {
  CompileResult r = compileIR(atomicKernel(casBody("memory_order_seq_cst", "memory_order_seq_cst")),
                              {"-std=ios-metal1.2"});
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "memory_order_seq_cst requires -std=ios-metal2.0");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_NE(d->message.find("ios-metal1.2"), std::string::npos);
}

TEST(AtomicsTest, CompareExchangeSeqCstAcceptedOnIosMetal20) {
  CompileResult r = compileIR(atomicKernel(casBody("memory_order_seq_cst", "memory_order_seq_cst")),
                              {"-std=ios-metal2.0"});
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("cmpxchg weak ptr"), std::string::npos);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("i32 7 seq_cst seq_cst"), std::string::npos);
}

TEST(AtomicsTest, CompareExchangeFailureReleaseRejected) {
  CompileResult r = compileIR(atomicKernel(casBody("memory_order_seq_cst", "memory_order_release")),
                              {"-std=ios-metal2.0"});
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "failure memory order cannot be memory_order_release or memory_order_acq_rel"),
            nullptr)
      << dump(r);
}

TEST(AtomicsTest, CompareExchangeFailureAcqRelRejected) {
  CompileResult r = compileIR(atomicKernel(casBody("memory_order_acq_rel", "memory_order_acq_rel")),
                              {"-std=ios-metal2.0"});
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "failure memory order cannot be memory_order_release or memory_order_acq_rel"),
            nullptr)
      << dump(r);
}

TEST(AtomicsTest, CompareExchangeFailureStrongerThanSuccessRejected) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"memory_order_acquire", "memory_order_seq_cst"},
      {"memory_order_relaxed", "memory_order_seq_cst"},
      {"memory_order_release", "memory_order_seq_cst"},
      {"memory_order_relaxed", "memory_order_acquire"},
  };
  for (const auto &[success, failure] : bad) {
    SCOPED_TRACE(success + " / " + failure);
    CompileResult r = compileIR(atomicKernel(casBody(success, failure)), {"-std=ios-metal2.0"});
    EXPECT_FALSE(r.success);
    EXPECT_NE(findError(r, "failure memory order cannot be stronger than the success memory order"),
              nullptr)
        << dump(r);
  }
}

TEST(AtomicsTest, CompareExchangeValidOrderPairsAccepted) {
  const std::vector<std::tuple<std::string, std::string, std::string>> good = {
      {"memory_order_acq_rel", "memory_order_acquire", "acq_rel acquire"},
      {"memory_order_seq_cst", "memory_order_acquire", "seq_cst acquire"},
      {"memory_order_release", "memory_order_relaxed", "release monotonic"},
      {"memory_order_acquire", "memory_order_relaxed", "acquire monotonic"},
      {"memory_order_relaxed", "memory_order_relaxed", "monotonic monotonic"},
  };
  for (const auto &[success, failure, ir] : good) {
    SCOPED_TRACE(success + " / " + failure);
    CompileResult r = compileIR(atomicKernel(casBody(success, failure)), {"-std=ios-metal2.0"});
    ASSERT_TRUE(r.success) << dump(r);
    EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("i32 7 " + ir), std::string::npos);
  }
}

TEST(AtomicsTest, LoadStoreOrderRulesOnIosMetal20) {
  CompileResult load = compileIR(
      atomicKernel("  out[gid] = atomic_load_explicit(a, memory_order_release);"), {"-std=ios-metal2.0"});
  EXPECT_FALSE(load.success);
  EXPECT_NE(findError(load, "atomic_load_explicit"), nullptr) << dump(load);

  CompileResult store = compileIR(
      atomicKernel("  atomic_store_explicit(a, 1, memory_order_acquire);"), {"-std=ios-metal2.0"});
  EXPECT_FALSE(store.success);
  EXPECT_NE(findError(store, "atomic_store_explicit"), nullptr) << dump(store);

  CompileResult ok = compileIR(atomicKernel("  atomic_store_explicit(a, 1, memory_order_release);\n"
                                            "  out[gid] = atomic_load_explicit(a, memory_order_acquire);"),
                               {"-std=ios-metal2.0"});
  ASSERT_TRUE(ok.success) << dump(ok);
  EXPECT_NE(ok.artifacts[OutputKind::LLVMIR].find("store atomic i32 1, ptr"), std::string::npos);
  EXPECT_NE(ok.artifacts[OutputKind::LLVMIR].find(" release, align"), std::string::npos);
  EXPECT_NE(ok.artifacts[OutputKind::LLVMIR].find(" acquire, align"), std::string::npos);
}

const char *kImplicitExchange =
    "  out[gid] = atomic_exchange(va, 5u);\n"
    "  out[gid + 1] = atomic_exchange(t, 3);\n"
    "  out[gid + 2] = atomic_exchange(a, 4) + atomic_exchange(vt, 6u);";

TEST(AtomicsTest, ImplicitExchangeAvailableOnIosMetal20) {
  CompileResult r = compileIR(atomicKernel(kImplicitExchange), {"-std=ios-metal2.0"});
  ASSERT_TRUE(r.success) << dump(r);
  const std::string &ir = r.artifacts[OutputKind::LLVMIR];
  EXPECT_EQ(countOccurrences(ir, "atomicrmw"), 4u) << ir;
  EXPECT_EQ(countOccurrences(ir, " seq_cst, align"), 4u) << "implied memory_order_seq_cst";
}

TEST(AtomicsTest, ImplicitExchangeUnavailableElsewhere) {
  for (const auto &std : kAllStds) {
    if (std == "-std=ios-metal2.0")
      continue;
    SCOPED_TRACE(std);
    CompileResult r = compileIR(atomicKernel(kImplicitExchange), {std});
    EXPECT_FALSE(r.success);
    auto errors = errorsOf(r);
    EXPECT_EQ(errors.size(), 4u) << dump(r);
    for (const auto &e : errors) {
      EXPECT_NE(e.message.find("'atomic_exchange' is unavailable"), std::string::npos) << e.message;
      EXPECT_NE(e.message.find("-std=ios-metal2.0"), std::string::npos) << e.message;
    }
  }
}

TEST(AtomicsTest, OtherImplicitFormsFollowTheSameRule) {
  const char *body = "  atomic_store(a, 1);\n"
                     "  int e = 0;\n"
                     "  out[gid] = atomic_load(a) + atomic_fetch_add(t, 2) +\n"
                     "             atomic_compare_exchange_weak(a, &e, 3);";
  CompileResult ios = compileIR(atomicKernel(body), {"-std=ios-metal2.0"});
  ASSERT_TRUE(ios.success) << dump(ios);
  EXPECT_NE(ios.artifacts[OutputKind::LLVMIR].find("seq_cst seq_cst"), std::string::npos);
  CompileResult mac = compileIR(atomicKernel(body), {"-std=osx-metal2.0"});
  EXPECT_FALSE(mac.success);
  EXPECT_EQ(errorsOf(mac).size(), 4u) << dump(mac);
}

TEST(AtomicsTest, AtomicTemplateAliasNamesTheSameTypes) {
  CompileResult r = compileIR(R"(#include <metal_atomic>
using namespace metal;
kernel void k(device atomic<int>* a [[buffer(0)]], device metal::atomic<uint>* b [[buffer(1)]]) {
  atomic_fetch_add_explicit(a, 1, memory_order_relaxed);
  atomic_fetch_or_explicit(b, 2u, memory_order_relaxed);
})");
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_EQ(countOccurrences(r.artifacts[OutputKind::LLVMIR], "atomicrmw"), 2u);
}

TEST(AtomicsTest, DiagnosticPointsAtUserCallNotStdlib) {
  CompileResult r = compileIR(atomicKernel("  atomic_store_explicit(t, 1, memory_order_seq_cst);"),
                              {"-std=ios-metal1.0"});
  EXPECT_FALSE(r.success);
  const Diagnostic *d = findError(r, "atomic_store_explicit");
  ASSERT_NE(d, nullptr) << dump(r);
  EXPECT_EQ(d->file, "main.metal");
  EXPECT_EQ(d->line, kBodyLine);
  EXPECT_NE(d->message.find("ios-metal1.0"), std::string::npos);
}

// ---- 6. Vector constructors -------------------------------------------------------------

std::string vecKernel(const std::string &body) {
  return "kernel void k(device float4* o [[buffer(0)]], device int4* oi [[buffer(1)]],\n"
         "              device const int4* in [[buffer(2)]], device const float* s [[buffer(3)]],\n"
         "              uint gid [[thread_position_in_grid]]) {\n" +
         body + "\n}\n";
}

std::string irOf(const std::string &source, std::vector<std::string> options = {}) {
  CompileResult r = compileIR(source, std::move(options));
  EXPECT_TRUE(r.success) << dump(r);
  return r.artifacts[OutputKind::LLVMIR];
}

const std::string kF1234 =
    "<4 x float> <float 1.000000e+00, float 2.000000e+00, float 3.000000e+00, float 4.000000e+00>";

TEST(VectorTest, FloatFromInt4ConvertsValues) {
  std::string ir = irOf(vecKernel("  o[gid] = float4(in[gid]);"));
  EXPECT_NE(ir.find("sitofp <4 x i32>"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("bitcast <4 x i32>"), std::string::npos) << ir;
}

TEST(VectorTest, FloatFromInt4ConstantFolds) {
  std::string ir = irOf(vecKernel("  o[0] = float4(int4(1, -2, 3, 4));"));
  EXPECT_NE(ir.find("<float 1.000000e+00, float -2.000000e+00, float 3.000000e+00, float 4.000000e+00>"),
            std::string::npos)
      << ir;
}

TEST(VectorTest, IntFromFloat4Truncates) {
  std::string ir = irOf(vecKernel("  oi[0] = int4(float4(1.5f, -2.5f, 3.9f, 0.0f));"));
  EXPECT_NE(ir.find("<4 x i32> <i32 1, i32 -2, i32 3, i32 0>"), std::string::npos) << ir;
}

TEST(VectorTest, RuntimeFloatToIntUsesFptosi) {
  std::string ir = irOf("kernel void k(device int4* o [[buffer(0)]], device const float4* f [[buffer(1)]]) {\n"
                        "  o[0] = int4(f[0]);\n}\n");
  EXPECT_NE(ir.find("fptosi <4 x float>"), std::string::npos) << ir;
}

TEST(VectorTest, Concatenation) {
  for (const char *expr : {"float4(float2(1.0f, 2.0f), 3.0f, 4.0f)", "float4(1.0f, float3(2.0f, 3.0f, 4.0f))",
                           "float4(float2(1.0f, 2.0f), float2(3.0f, 4.0f))",
                           "float4(1.0f, float2(2.0f, 3.0f), 4.0f)", "float4(1, 2, 3, 4)",
                           "float4(float3(1.0f, 2.0f, 3.0f), 4)"}) {
    SCOPED_TRACE(expr);
    std::string ir = irOf(vecKernel(std::string("  o[0] = ") + expr + ";"));
    EXPECT_NE(ir.find("store " + kF1234), std::string::npos) << ir;
  }
}

TEST(VectorTest, Splat) {
  std::string ir = irOf(vecKernel("  o[0] = float4(7.5f);\n  oi[0] = int4(3);"));
  EXPECT_NE(ir.find("<4 x float> <float 7.500000e+00, float 7.500000e+00, float 7.500000e+00, float 7.500000e+00>"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("<4 x i32> <i32 3, i32 3, i32 3, i32 3>"), std::string::npos) << ir;
}

TEST(VectorTest, SplatConvertsScalar) {
  std::string ir = irOf(vecKernel("  o[0] = float4(2);\n  oi[0] = int4(2.75f);"));
  EXPECT_NE(ir.find("<float 2.000000e+00, float 2.000000e+00, float 2.000000e+00, float 2.000000e+00>"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("<4 x i32> <i32 2, i32 2, i32 2, i32 2>"), std::string::npos) << ir;
}

TEST(VectorTest, DefaultConstructorIsZero) {
  std::string ir = irOf(vecKernel("  o[0] = float4();\n  oi[0] = int4();"));
  EXPECT_EQ(countOccurrences(ir, "store <4 x float> zeroinitializer"), 1u) << ir;
  EXPECT_EQ(countOccurrences(ir, "store <4 x i32> zeroinitializer"), 1u) << ir;
}

TEST(VectorTest, SwizzleWrite) {
  std::string ir = irOf(vecKernel("  float4 v = float4(1.0f, 2.0f, 3.0f, 4.0f);\n"
                                  "  v.xz = float2(9.0f, 8.0f);\n"
                                  "  o[0] = v;\n"
                                  "  float4 w = float4(0.0f);\n"
                                  "  w.wx = float2(5.0f, 6.0f);\n"
                                  "  o[1] = w;"));
  EXPECT_NE(ir.find("<float 9.000000e+00, float 2.000000e+00, float 8.000000e+00, float 4.000000e+00>"),
            std::string::npos)
      << ir;
  EXPECT_NE(ir.find("<float 6.000000e+00, float 0.000000e+00, float 0.000000e+00, float 5.000000e+00>"),
            std::string::npos)
      << ir;
}

TEST(VectorTest, SwizzleReadInConstructor) {
  std::string ir = irOf(vecKernel("  oi[0] = int4(int2(1, 2).yx, 3, 4);"));
  EXPECT_NE(ir.find("<4 x i32> <i32 2, i32 1, i32 3, i32 4>"), std::string::npos) << ir;
}

TEST(VectorTest, BoolVectorFromIntNormalizes) {
  std::string ir = irOf("kernel void k(device int4* o [[buffer(0)]]) {\n"
                        "  bool4 b = bool4(int4(0, 5, -1, 0));\n"
                        "  o[0] = int4(b);\n}\n");
  EXPECT_NE(ir.find("<4 x i32> <i32 0, i32 1, i32 1, i32 0>"), std::string::npos) << ir;
}

TEST(VectorTest, WrongComponentCountIsError) {
  // Too many components (a short concatenation is zero-filled: see
  // tests/compiler/msl/types/vector-constructor-zero-fill.metal).
  CompileResult r = compileIR(vecKernel("  o[0] = float4(1.0f, 2.0f, 3.0f, 4.0f, 5.0f);"));
  EXPECT_FALSE(r.success);
  EXPECT_NE(findError(r, "Metal vector constructor"), nullptr) << dump(r);
}

TEST(VectorTest, ProgramScopeConstantIsStaticInitializer) {
  const char *src = "constant float4 kC = float4(float2(1.0f, 2.0f), 3.0f, 4.0f);\n"
                    "kernel void k(device float4* o [[buffer(0)]], uint gid [[thread_position_in_grid]]) {\n"
                    "  o[gid] = kC * float4(float(gid));\n}\n";
  std::string ir = irOf(src);
  EXPECT_NE(ir.find("@kC = "), std::string::npos) << ir;
  EXPECT_NE(ir.find("constant " + kF1234), std::string::npos) << ir;
  EXPECT_EQ(ir.find("global_ctors"), std::string::npos) << "no dynamic initializer";

  CompileResult ptx = compile(makeJob(src, {}, {OutputKind::PTX}, Arch::NVPTX64));
  ASSERT_TRUE(ptx.success) << dump(ptx);
  EXPECT_NE(ptx.artifacts[OutputKind::PTX].find(
                ".global .align 16 .b8 kC[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64}"),
            std::string::npos)
      << ptx.artifacts[OutputKind::PTX];
}

TEST(VectorTest, HalfVectorsCompileOnBothTargets) {
  const char *src = "kernel void k(device half4* o [[buffer(0)]], device const float4* f [[buffer(1)]]) {\n"
                    "  o[0] = half4(f[0]) * 2.0h;\n}\n";
  CompileResult x86 = compileIR(src);
  ASSERT_TRUE(x86.success) << dump(x86);
  EXPECT_NE(x86.artifacts[OutputKind::LLVMIR].find("fptrunc <4 x float>"), std::string::npos);
  CompileResult nv = compile(makeJob(src, {}, {OutputKind::PTX}, Arch::NVPTX64));
  EXPECT_TRUE(nv.success) << dump(nv);
}

} // namespace
} // namespace msl::compiler
