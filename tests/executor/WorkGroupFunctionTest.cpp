// The work-group function (executor/WorkGroupFunction.h), end to end: real
// MSL compiled by msl::compiler::compile() for x86_64, the work-group
// function built in the bitcode's module, optimized for the host and
// JIT-compiled with ORC, each threadgroup run from the test, and the results
// compared with references computed here. Inputs are random with fixed seeds.
#include "WorkGroupFunction.h"
#include "msl/compiler/Compiler.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/Support/SourceMgr.h>

#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

namespace {

using msl::executor::WorkGroupFunction;
using WgFn = void (*)(void **, const uint32_t *, char *);
using U3 = std::array<uint32_t, 3>;

// The barrier and SIMD-group hooks resolve to nothing: the original
// one-work-item entries still call them, the work-group functions must not
// (checked in the IR).
void testBarrierHook(uint32_t) {}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool callsBarrierHook(const llvm::Function &f) {
  for (const llvm::Instruction &i : llvm::instructions(f))
    if (auto *call = llvm::dyn_cast<llvm::CallBase>(&i))
      if (const llvm::Function *callee = call->getCalledFunction();
          callee && msl::executor::isWorkGroupHook(callee->getName()))
        return true;
  return false;
}

/// A compiled MSL source with the work-group functions of some kernels, JIT-compiled.
class Program {
public:
  void load(const std::string &source, const std::vector<std::string> &kernels, unsigned maxThreads = 1024,
            std::vector<std::string> options = {}) {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    msl::compiler::CompileJob job;
    job.mainSource = source;
    job.options = std::move(options);
    job.outputs = {msl::compiler::OutputKind::LLVMBitcode};
    auto result = msl::compiler::compile(job);
    for (const auto &d : result.diagnostics)
      ADD_FAILURE() << d.file << ":" << d.line << ": " << d.message;
    ASSERT_TRUE(result.success);
    auto context = std::make_unique<llvm::LLVMContext>();
    auto buffer = llvm::MemoryBuffer::getMemBuffer(result.artifacts[msl::compiler::OutputKind::LLVMBitcode],
                                                   "kernel.bc", false);
    auto module = llvm::parseBitcodeFile(buffer->getMemBufferRef(), *context);
    ASSERT_TRUE(bool(module)) << llvm::toString(module.takeError());
    llvm::Module &m = **module;

    for (const auto &k : kernels) {
      auto wg = msl::executor::buildWorkGroupFunction(m, k, maxThreads);
      ASSERT_TRUE(bool(wg)) << k << ": " << llvm::toString(wg.takeError());
      llvm::Function *f = m.getFunction(wg->symbol);
      ASSERT_NE(f, nullptr);
      EXPECT_FALSE(callsBarrierHook(*f)) << k;
      info_[k] = *wg;
    }

    for (const auto &k : kernels) {
      llvm::raw_string_ostream os(built_[k]);
      m.getFunction(info_[k].symbol)->print(os);
    }
    if (const char *dump = std::getenv("MSL_WG_DUMP"); dump && std::string(dump) == "built")
      for (const auto &k : kernels)
        llvm::errs() << built_[k];
    // For the host CPU, then optimized as the runtime would.
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    ASSERT_TRUE(bool(jtmb));
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    auto tm = jtmb->createTargetMachine();
    ASSERT_TRUE(bool(tm));
    std::string cpu = llvm::sys::getHostCPUName().str();
    std::string features = (*tm)->getTargetFeatureString().str();
    for (llvm::Function &f : m) {
      if (f.isDeclaration())
        continue;
      f.removeFnAttr("target-cpu");
      f.removeFnAttr("target-features");
      f.removeFnAttr("tune-cpu");
      f.addFnAttr("target-cpu", cpu);
      f.addFnAttr("target-features", features);
    }
    m.setDataLayout((*tm)->createDataLayout());
    {
      llvm::LoopAnalysisManager lam;
      llvm::FunctionAnalysisManager fam;
      llvm::CGSCCAnalysisManager cgam;
      llvm::ModuleAnalysisManager mam;
      llvm::PassBuilder pb(tm->get());
      pb.registerModuleAnalyses(mam);
      pb.registerCGSCCAnalyses(cgam);
      pb.registerFunctionAnalyses(fam);
      pb.registerLoopAnalyses(lam);
      pb.crossRegisterProxies(lam, fam, cgam, mam);
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
    }
    for (const auto &k : kernels) {
      llvm::Function *f = m.getFunction(info_[k].symbol);
      ASSERT_NE(f, nullptr);
      EXPECT_FALSE(callsBarrierHook(*f)) << k;
      llvm::raw_string_ostream os(ir_[k]);
      f->print(os);
      if (const char *dump = std::getenv("MSL_WG_DUMP"); dump && std::string(dump) == "optimized")
        llvm::errs() << ir_[k];
    }

    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
    ASSERT_TRUE(bool(jit)) << llvm::toString(jit.takeError());
    jit_ = std::move(*jit);
    auto &dylib = jit_->getMainJITDylib();
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        jit_->getDataLayout().getGlobalPrefix());
    ASSERT_TRUE(bool(gen));
    dylib.addGenerator(std::move(*gen));
    llvm::orc::SymbolMap hooks;
    for (const char *h : {"__msl_threadgroup_barrier", "__msl_simdgroup_barrier", "__msl_simd_exchange",
                          "__msl_simd_exchange_mask", "__msl_simd_lane_id"})
      hooks[jit_->mangleAndIntern(h)] = {llvm::orc::ExecutorAddr::fromPtr(&testBarrierHook),
                                         llvm::JITSymbolFlags::Exported};
    ASSERT_FALSE(bool(dylib.define(llvm::orc::absoluteSymbols(hooks))));
    ASSERT_FALSE(bool(jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(*module), std::move(context)))));
    for (const auto &k : kernels) {
      auto addr = jit_->lookup(info_[k].symbol);
      ASSERT_TRUE(bool(addr)) << llvm::toString(addr.takeError());
      fns_[k] = addr->toPtr<WgFn>();
    }
  }

  WgFn fn(const std::string &k) const { return fns_.at(k); }
  const WorkGroupFunction &info(const std::string &k) const { return info_.at(k); }
  const std::string &ir(const std::string &k) const { return ir_.at(k); }
  /// The work-group function as built, before the optimizer.
  const std::string &built(const std::string &k) const { return built_.at(k); }

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::map<std::string, WgFn> fns_;
  std::map<std::string, WorkGroupFunction> info_;
  std::map<std::string, std::string> ir_;
  std::map<std::string, std::string> built_;
};

/// The launch vector of one threadgroup (compiler/EntryPoints.h).
std::array<uint32_t, 18> launchOf(U3 group, U3 groups, U3 tgSize, U3 grid) {
  std::array<uint32_t, 18> l{};
  for (int c = 0; c < 3; ++c) {
    l[3 + c] = group[c];
    l[6 + c] = std::min(tgSize[c], grid[c] - group[c] * tgSize[c]);
    l[9 + c] = groups[c];
    l[12 + c] = tgSize[c];
    l[15 + c] = grid[c];
  }
  return l;
}

/// Runs every threadgroup serially. dispatchThreads(grid, tg) when
/// `threads`, else dispatchThreadgroups(grid = groups, tg).
/// `threadgroupArgs`: the [[threadgroup(n)]] lengths, placed after the
/// kernel's threadgroup variables; their pointers go to the args[] slots
/// `threadgroupSlots`.
void dispatch(const Program &p, const std::string &k, std::vector<void *> args, U3 gridOrGroups, U3 tg,
              bool threads, std::vector<std::pair<size_t, size_t>> threadgroupArgs = {}) {
  U3 groups, grid;
  for (int c = 0; c < 3; ++c) {
    groups[c] = threads ? (gridOrGroups[c] + tg[c] - 1) / tg[c] : gridOrGroups[c];
    grid[c] = threads ? gridOrGroups[c] : gridOrGroups[c] * tg[c];
  }
  const WorkGroupFunction &info = p.info(k);
  size_t bytes = (info.threadgroupGlobalsBytes + 15) & ~size_t(15);
  std::vector<size_t> offsets;
  for (auto [slot, length] : threadgroupArgs) {
    offsets.push_back(bytes);
    bytes += (length + 15) & ~size_t(15);
  }
  alignas(64) static thread_local char memory[64 * 1024];
  ASSERT_LE(bytes, sizeof(memory));
  for (size_t i = 0; i < threadgroupArgs.size(); ++i)
    args[threadgroupArgs[i].first] = memory + offsets[i];
  for (uint32_t z = 0; z < groups[2]; ++z)
    for (uint32_t y = 0; y < groups[1]; ++y)
      for (uint32_t x = 0; x < groups[0]; ++x) {
        auto launch = launchOf({x, y, z}, groups, tg, grid);
        std::memset(memory, 0xcd, bytes); // threadgroup memory starts undefined
        p.fn(k)(args.data(), launch.data(), memory);
      }
}

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

std::vector<float> randomFloats(size_t n, uint32_t seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = d(rng);
  return v;
}

// Exactly representable values: float sums in any order agree.
std::vector<float> randomSmallIntegers(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(-100, 100);
  std::vector<float> v(n);
  for (auto &x : v)
    x = float(d(rng));
  return v;
}

const char *kSaxpy = R"(
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  constant float &a [[buffer(2)]], device uint4 *info [[buffer(3)]],
                  uint id [[thread_position_in_grid]], uint grid [[threads_per_grid]],
                  uint tptg [[threads_per_threadgroup]], uint dtptg [[dispatch_threads_per_threadgroup]],
                  uint group [[threadgroup_position_in_grid]], uint lid [[thread_position_in_threadgroup]]) {
  y[id] = a * x[id] + y[id];
  info[id] = uint4(grid, tptg, dtptg, group * 1000 + lid);
}
kernel void scale(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  uint id [[thread_position_in_grid]]) {
  y[id] = 3.0f * x[id] + 1.0f;
}
)";

TEST(WorkGroupFunction, SaxpyDispatchThreadsLeavesTheTailAlone) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(kSaxpy, {"saxpy", "scale"}));
  const uint32_t n = 1000, tg = 256, padded = 1024;
  auto x = randomFloats(padded, 1), y0 = randomFloats(padded, 2);
  auto y = y0;
  float a = 2.5f;
  std::vector<std::array<uint32_t, 4>> info(padded, {7, 7, 7, 7});
  dispatch(p, "saxpy", {x.data(), y.data(), &a, info.data()}, {n, 1, 1}, {tg, 1, 1}, true);
  for (uint32_t i = 0; i < padded; ++i) {
    if (i < n) {
      ASSERT_TRUE(y[i] == a * x[i] + y0[i] || y[i] == std::fma(a, x[i], y0[i])) << i; // contracted or not
      uint32_t group = i / tg;
      std::array<uint32_t, 4> want{n, std::min(tg, n - group * tg), tg, group * 1000 + i % tg};
      ASSERT_EQ(info[i], want) << i;
    } else {
      ASSERT_EQ(y[i], y0[i]) << "thread " << i << " outside the grid ran";
      ASSERT_EQ(info[i], (std::array<uint32_t, 4>{7, 7, 7, 7}));
    }
  }
}

TEST(WorkGroupFunction, WorkItemLoopVectorizes) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(kSaxpy, {"saxpy", "scale"}));
  const std::string &ir = p.ir("scale");
  EXPECT_TRUE(ir.find("x float>") != std::string::npos) << ir;
  // And it computes the right thing.
  auto x = randomFloats(4096, 3);
  std::vector<float> y(4096);
  dispatch(p, "scale", {x.data(), y.data()}, {16, 1, 1}, {256, 1, 1}, false);
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_TRUE(y[i] == 3.0f * x[i] + 1.0f || y[i] == std::fma(3.0f, x[i], 1.0f)) << i;
}

// A `constant float &` read only inside `if (gid < n)`: its slot is read in
// the prologue with its dereferenceable bytes, so that the CPU device's
// vectorized work-item loop reads the scalar with one load and a broadcast,
// not per lane under the lane's condition (a masked gather; saxpy,
// bench/RESULTS.md).
const char *kGuardedScale = R"(
#include <metal_stdlib>
using namespace metal;
kernel void guarded(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                    constant float &a [[buffer(2)]], constant uint &n [[buffer(3)]],
                    uint gid [[thread_position_in_grid]]) {
  if (gid < n)
    y[gid] = a * x[gid] + y[gid];
}
)";

TEST(WorkGroupFunction, AConstantReferenceReadUnderAConditionIsReadOnceNotGathered) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(kGuardedScale, {"guarded"}));
  // As built: `a`'s slot is read in the prologue, still dereferenceable.
  const std::string &built = p.built("guarded");
  size_t prologue = built.find("wg.prologue:"), next = built.find("\nwg.", prologue + 1);
  ASSERT_NE(prologue, std::string::npos) << built;
  EXPECT_NE(built.substr(prologue, next - prologue).find("!dereferenceable"), std::string::npos) << built;
  EXPECT_EQ(p.ir("guarded").find("masked.gather"), std::string::npos) << p.ir("guarded");
  const uint32_t n = 1000;
  auto x = randomFloats(1024, 4), y0 = randomFloats(1024, 5);
  auto y = y0;
  float a = -1.25f;
  dispatch(p, "guarded", {x.data(), y.data(), &a, const_cast<uint32_t *>(&n)}, {4, 1, 1}, {256, 1, 1}, false);
  for (uint32_t i = 0; i < 1024; ++i) {
    float want = i < n ? a * x[i] + y0[i] : y0[i];
    ASSERT_TRUE(y[i] == want || (i < n && y[i] == std::fma(a, x[i], y0[i]))) << i;
  }
}

// A tiled matrix multiply whose compiled bitcode (the frontend's -O2 unrolls
// the k loop and hoists the tile addresses out of the t loop) has 32 tile
// addresses live across the barriers: they are recomputed from the
// work-item's position where used, not kept in per-work-item arrays of
// pointers, and the result is exact.
const char *kTiledMatmul = R"(
#include <metal_stdlib>
using namespace metal;
kernel void tiled(device const float *A [[buffer(0)]], device const float *B [[buffer(1)]],
                  device float *C [[buffer(2)]], constant uint &N [[buffer(3)]],
                  uint2 lid [[thread_position_in_threadgroup]], uint2 gid [[thread_position_in_grid]]) {
  threadgroup float As[16][16];
  threadgroup float Bs[16][16];
  float acc = 0.0f;
  for (uint t = 0; t < N; t += 16) {
    As[lid.y][lid.x] = A[gid.y * N + t + lid.x];
    Bs[lid.y][lid.x] = B[(t + lid.y) * N + gid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < 16; ++k)
      acc += As[lid.y][k] * Bs[k][lid.x];
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  C[gid.y * N + gid.x] = acc;
}
)";

TEST(WorkGroupFunction, PositionDerivedValuesAreRecomputedAcrossBarriers) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(kTiledMatmul, {"tiled"}, 256));
  const std::string &ir = p.ir("tiled");
  EXPECT_EQ(ir.find(" x ptr]"), std::string::npos) << "a per-work-item array of pointers:\n" << ir;
  const uint32_t N = 48;
  auto A = randomSmallIntegers(N * N, 31), B = randomSmallIntegers(N * N, 32);
  std::vector<float> C(N * N, -1.0f);
  dispatch(p, "tiled", {A.data(), B.data(), C.data(), const_cast<uint32_t *>(&N)}, {N / 16, N / 16, 1},
           {16, 16, 1}, false);
  for (uint32_t i = 0; i < N; ++i)
    for (uint32_t j = 0; j < N; ++j) {
      float want = 0;
      for (uint32_t k = 0; k < N; ++k)
        want += A[i * N + k] * B[k * N + j];
      ASSERT_EQ(C[i * N + j], want) << i << "," << j;
    }
}

// Atomics on threadgroup variables become plain accesses (one OS thread runs
// a threadgroup); device atomics stay atomic; counts are exact.
TEST(WorkGroupFunction, ThreadgroupAtomicsArePlainDeviceAtomicsStay) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(R"(
#include <metal_stdlib>
using namespace metal;
kernel void hist(device const uint *data [[buffer(0)]], device atomic_uint *bins [[buffer(1)]],
                 uint lid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
  threadgroup atomic_uint local[64];
  atomic_store_explicit(&local[lid], 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint i = 0; i < 8; ++i)
    atomic_fetch_add_explicit(&local[data[gid * 8 + i] & 63u], 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  atomic_fetch_add_explicit(&bins[lid], atomic_load_explicit(&local[lid], memory_order_relaxed),
                            memory_order_relaxed);
}
)", {"hist"}, 64));
  // The threadgroup ones are the only atomic store, atomic load and RMW of
  // a constant 1; the device RMW adds a loaded count.
  const std::string &ir = p.ir("hist");
  EXPECT_EQ(ir.find("store atomic"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("load atomic"), std::string::npos) << ir;
  EXPECT_EQ(ir.find(", i32 1 monotonic"), std::string::npos) << ir;
  EXPECT_NE(ir.find("atomicrmw add"), std::string::npos) << "the device atomic must stay:\n" << ir;
  std::mt19937 rng(41);
  std::vector<uint32_t> data(64 * 8 * 5);
  for (auto &v : data)
    v = uint32_t(rng());
  std::vector<uint32_t> bins(64, 0), want(64, 0);
  for (uint32_t v : data)
    ++want[v & 63];
  dispatch(p, "hist", {data.data(), bins.data()}, {5, 1, 1}, {64, 1, 1}, false);
  EXPECT_EQ(bins, want);
}

// Each work-item sums 8 elements strided by the group's 64 floats (the
// frontend unrolls the loop into 8 loads of in[base + lid + i * 64]): the
// start block is cut before each of those loads, so that each work-item loop
// reads one contiguous range (reduce: 16 streams of 1 KiB per group became 16
// sequential loops). Loads only a few elements apart (a stencil) are not cut.
// Both compute the right sums, also in partial and smaller threadgroups.
const char *kStridedSum = R"(
#include <metal_stdlib>
using namespace metal;
constant constexpr uint kGroup = 64;
constant constexpr uint kPer = 8;
kernel void strided(device const float *in [[buffer(0)]], device float *partial [[buffer(1)]],
                    uint lid [[thread_position_in_threadgroup]], uint group [[threadgroup_position_in_grid]],
                    uint tg [[threads_per_threadgroup]]) {
  threadgroup float tile[kGroup];
  const uint base = group * kGroup * kPer + lid;
  float s = 0.0f;
  for (uint i = 0; i < kPer; ++i)
    s += in[base + i * kGroup];
  tile[lid] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0) {
    float t = 0.0f;
    for (uint i = 0; i < tg; ++i)
      t += tile[i];
    partial[group] = t;
  }
}
kernel void stencil(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                    uint lid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
  threadgroup float tile[kGroup];
  tile[lid] = in[gid] + 2.0f * in[gid + 1] + 4.0f * in[gid + 2] + 8.0f * in[gid + 3] + 16.0f * in[gid + 4];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = tile[(lid + 1) % kGroup];
}
)";

TEST(WorkGroupFunction, StridedLoadsOfAStartBlockGetOneWorkItemLoopEach) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(kStridedSum, {"strided", "stencil"}, 64));
  // One cut before each of the 7 loads after the first (block labels of the
  // clones: "wg.after.stream.sN:").
  EXPECT_EQ(count(p.built("strided"), "\nwg.after.stream"), 7u) << p.built("strided");
  EXPECT_EQ(count(p.built("stencil"), "wg.after.stream"), 0u) << p.built("stencil");

  const uint32_t groups = 5;
  auto in = randomSmallIntegers(groups * 64 * 8 + 8, 71);
  for (uint32_t tg : {64u, 48u, 1u}) {
    std::vector<float> partial(groups + 1, -12345.0f);
    dispatch(p, "strided", {in.data(), partial.data()}, {groups, 1, 1}, {tg, 1, 1}, false);
    for (uint32_t g = 0; g < groups; ++g) {
      float want = 0;
      for (uint32_t l = 0; l < tg; ++l)
        for (uint32_t i = 0; i < 8; ++i)
          want += in[g * 64 * 8 + l + i * 64];
      ASSERT_EQ(partial[g], want) << "group " << g << " of " << tg;
    }
    ASSERT_EQ(partial[groups], -12345.0f);
  }
  std::vector<float> out(groups * 64, -1.0f);
  dispatch(p, "stencil", {in.data(), out.data()}, {groups, 1, 1}, {64, 1, 1}, false);
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t l = 0; l < 64; ++l) {
      uint32_t i = g * 64 + (l + 1) % 64;
      float want = in[i] + 2.0f * in[i + 1] + 4.0f * in[i + 2] + 8.0f * in[i + 3] + 16.0f * in[i + 4];
      ASSERT_EQ(out[g * 64 + l], want) << g << "," << l;
    }
}

// The partial sums the pieces of the split block carry (s1 = s0 + in[..],
// s2 = s1 + in[..], ...) share one context array: each one's last use comes
// before the next one is defined. Not 7 arrays of 64 floats.
TEST(WorkGroupFunction, ValuesCarriedBetweenStreamPiecesShareAContextArray) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(kStridedSum, {"strided"}, 64));
  ASSERT_EQ(count(p.built("strided"), "\nwg.after.stream"), 7u) << p.built("strided");
  EXPECT_EQ(count(p.built("strided"), "alloca [64 x float]"), 1u) << p.built("strided");
  const uint32_t groups = 3;
  auto in = randomSmallIntegers(groups * 64 * 8, 72);
  std::vector<float> partial(groups, -1.0f);
  dispatch(p, "strided", {in.data(), partial.data()}, {groups, 1, 1}, {64, 1, 1}, false);
  for (uint32_t g = 0; g < groups; ++g) {
    float want = 0;
    for (uint32_t i = 0; i < 64 * 8; ++i)
      want += in[g * 64 * 8 + i];
    ASSERT_EQ(partial[g], want) << g;
  }
}

class ReduceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReduceTest, BarrierInALoopWithThreadgroupMemory) {
  const std::string kernel = GetParam();
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(readFile(MSLD_SOURCE_DIR "/examples/reduce.metal"), {"reduce_sum", "reduce_sum_dynamic"}));
  EXPECT_EQ(p.info("reduce_sum").threadgroupGlobalsBytes, 256u * 4);
  EXPECT_EQ(p.info("reduce_sum_dynamic").threadgroupGlobalsBytes, 0u);
  for (uint32_t tg : {256u, 64u, 1u}) {
    const uint32_t groups = 9, n = groups * tg - tg / 3;
    auto in = randomSmallIntegers(groups * tg, 10 + tg);
    std::vector<float> partial(groups + 1, -12345.0f);
    std::vector<std::pair<size_t, size_t>> tgArgs;
    if (kernel == "reduce_sum_dynamic")
      tgArgs = {{3, tg * sizeof(float)}};
    std::vector<void *> args{in.data(), partial.data(), const_cast<uint32_t *>(&n), nullptr};
    dispatch(p, kernel, args, {groups, 1, 1}, {tg, 1, 1}, false, tgArgs);
    for (uint32_t g = 0; g < groups; ++g) {
      float want = 0;
      for (uint32_t i = g * tg; i < (g + 1) * tg && i < n; ++i)
        want += in[i];
      ASSERT_EQ(partial[g], want) << "group " << g << " of " << tg;
    }
    ASSERT_EQ(partial[groups], -12345.0f);
  }
}
INSTANTIATE_TEST_SUITE_P(Examples, ReduceTest, ::testing::Values("reduce_sum", "reduce_sum_dynamic"));

TEST(WorkGroupFunction, HillisSteeleScan) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(R"(
#include <metal_stdlib>
using namespace metal;
kernel void scan(device const int *in [[buffer(0)]], device int *out [[buffer(1)]],
                 uint lid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]],
                 uint n [[threads_per_threadgroup]]) {
  threadgroup int buf[2][256];
  uint cur = 0;
  buf[0][lid] = in[gid];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint off = 1; off < n; off *= 2) {
    int v = buf[cur][lid];
    if (lid >= off)
      v += buf[cur][lid - off];
    buf[1 - cur][lid] = v;
    cur = 1 - cur;
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  out[gid] = buf[cur][lid];
}
)",
            {"scan"}));
  EXPECT_EQ(p.info("scan").threadgroupGlobalsBytes, 2u * 256 * 4);
  for (uint32_t tg : {256u, 100u, 7u}) {
    const uint32_t groups = 5;
    std::mt19937 rng(tg);
    std::uniform_int_distribution<int> d(-1000, 1000);
    std::vector<int> in(groups * tg), out(groups * tg);
    for (auto &v : in)
      v = d(rng);
    dispatch(p, "scan", {in.data(), out.data()}, {groups, 1, 1}, {tg, 1, 1}, false);
    for (uint32_t g = 0; g < groups; ++g) {
      int sum = 0;
      for (uint32_t i = 0; i < tg; ++i) {
        sum += in[g * tg + i];
        ASSERT_EQ(out[g * tg + i], sum) << "group " << g << " item " << i << " of " << tg;
      }
    }
  }
}

TEST(WorkGroupFunction, BarrierUnderAUniformCondition) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(R"(
#include <metal_stdlib>
using namespace metal;
kernel void cond(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                 constant uint &mode [[buffer(2)]], uint lid [[thread_position_in_threadgroup]],
                 uint gid [[thread_position_in_grid]], uint tgs [[threads_per_threadgroup]]) {
  threadgroup float t[128];
  float v = in[gid];
  t[lid] = v;
  if (mode == 1) {
    threadgroup_barrier(mem_flags::mem_threadgroup);
    v = t[tgs - 1 - lid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    t[lid] = v * 2.0f;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[gid] = t[(lid + 1) % tgs] + v;
}
)",
            {"cond"}));
  const uint32_t tg = 128, groups = 3;
  auto in = randomFloats(tg * groups, 5);
  for (uint32_t mode : {0u, 1u}) {
    std::vector<float> out(in.size());
    dispatch(p, "cond", {in.data(), out.data(), &mode}, {groups, 1, 1}, {tg, 1, 1}, false);
    for (uint32_t g = 0; g < groups; ++g)
      for (uint32_t l = 0; l < tg; ++l) {
        auto at = [&](uint32_t i) { return in[g * tg + i]; };
        float want = mode == 0 ? at((l + 1) % tg) + at(l)
                               : 2.0f * at(tg - 1 - (l + 1) % tg) + at(tg - 1 - l);
        ASSERT_FLOAT_EQ(out[g * tg + l], want) << "mode " << mode << " item " << l;
      }
  }
}

TEST(WorkGroupFunction, TwoDimensionalPartialThreadgroups) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(R"(
#include <metal_stdlib>
using namespace metal;
kernel void k2(device uint *out [[buffer(0)]], constant uint2 &size [[buffer(1)]],
               uint2 gid [[thread_position_in_grid]], uint2 lid [[thread_position_in_threadgroup]],
               uint2 tptg [[threads_per_threadgroup]], uint index [[thread_index_in_threadgroup]],
               uint2 grid [[threads_per_grid]]) {
  threadgroup uint tile[8][16];
  tile[lid.y][lid.x] = gid.x + 1000 * gid.y;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint right = tile[lid.y][(lid.x + 1) % tptg.x];
  out[gid.y * size.x + gid.x] = right + 1000000 * index + 100000000 * (grid.x == size.x && grid.y == size.y);
}
)",
            {"k2"}));
  const uint32_t w = 50, h = 37;
  U3 tg{16, 8, 1};
  std::vector<uint32_t> out(w * h + 1, 5);
  uint32_t size[2] = {w, h};
  dispatch(p, "k2", {out.data(), size}, {w, h, 1}, tg, true);
  for (uint32_t y = 0; y < h; ++y)
    for (uint32_t x = 0; x < w; ++x) {
      uint32_t gx = x / 16 * 16, lx = x % 16, ly = y % 8;
      uint32_t tw = std::min(16u, w - gx);
      uint32_t right = gx + (lx + 1) % tw + 1000 * y;
      uint32_t want = right + 1000000 * (lx + tw * ly) + 100000000;
      ASSERT_EQ(out[y * w + x], want) << x << "," << y;
    }
  ASSERT_EQ(out[w * h], 5u);
}

TEST(WorkGroupFunction, ParallelThreadgroupsHaveTheirOwnThreadgroupMemory) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(readFile(MSLD_SOURCE_DIR "/examples/reduce.metal"), {"reduce_sum"}));
  const uint32_t tg = 256, groups = 64, n = groups * tg;
  auto in = randomSmallIntegers(n, 99);
  std::vector<float> want(groups, 0);
  for (uint32_t i = 0; i < n; ++i)
    want[i / tg] += in[i];
  for (int round = 0; round < 20; ++round) {
    std::vector<float> partial(groups, 0);
    auto run = [&](uint32_t first) {
      alignas(64) static thread_local char memory[4096];
      std::vector<void *> args{in.data(), partial.data(), const_cast<uint32_t *>(&n)};
      for (uint32_t g = first; g < groups; g += 2) {
        auto launch = launchOf({g, 0, 0}, {groups, 1, 1}, {tg, 1, 1}, {n, 1, 1});
        p.fn("reduce_sum")(args.data(), launch.data(), memory);
      }
    };
    std::thread a(run, 0), b(run, 1);
    a.join();
    b.join();
    ASSERT_EQ(partial, want) << "round " << round;
  }
}

TEST(WorkGroupFunction, PrivateArraysLiveAcrossBarriersPerWorkItem) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(R"(
#include <metal_stdlib>
using namespace metal;
kernel void priv(device const uint *in [[buffer(0)]], device uint *out [[buffer(1)]],
                 uint lid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
  threadgroup uint t[64];
  uint a[8];
  for (uint i = 0; i < 8; ++i)
    a[i] = in[gid] * (i + 1);
  t[lid] = a[in[gid] % 8];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint k = t[63 - lid] % 8;
  out[gid] = a[k] + t[lid ^ 1];
}
)",
                                 {"priv"}, 64));
  const uint32_t tg = 64, groups = 3;
  std::mt19937 rng(7);
  std::vector<uint32_t> in(tg * groups), out(tg * groups);
  for (auto &v : in)
    v = rng() % 1000;
  dispatch(p, "priv", {in.data(), out.data()}, {groups, 1, 1}, {tg, 1, 1}, false);
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t l = 0; l < tg; ++l) {
      auto t = [&](uint32_t i) { uint32_t v = in[g * tg + i]; return v * (v % 8 + 1); };
      uint32_t v = in[g * tg + l];
      uint32_t want = v * (t(63 - l) % 8 + 1) + t(l ^ 1);
      ASSERT_EQ(out[g * tg + l], want) << l;
    }
}

// SIMD-groups of 32 under divergence: an if/else with a reduction in each
// branch (each sees only its own lanes), one after they reconverge (all
// lanes), one in a loop whose trip count differs per lane (the lanes still
// looping), and the SIMD-group-then-threadgroup reduction of softmax-like
// kernels. Threadgroups of 100: SIMD-groups of 32, 32, 32 and 4 lanes.
const char *kSimdDivergence = R"(
#include <metal_stdlib>
using namespace metal;
kernel void diverge(device uint *out [[buffer(0)]], uint lid [[thread_index_in_threadgroup]],
                    ushort lane [[thread_index_in_simdgroup]], uint group [[threadgroup_position_in_grid]],
                    uint size [[threads_per_threadgroup]]) {
  uint a;
  if (lane & 1)
    a = simd_sum(lid);
  else
    a = simd_sum(lid * 100u);
  uint b = simd_sum(1u);
  uint acc = 0;
  for (uint i = 0; i < (lid & 3); ++i)
    acc += simd_sum(i + 1);
  device uint *o = out + (group * size + lid) * 3;
  o[0] = a;
  o[1] = b;
  o[2] = acc;
}
kernel void two_level_sum(device const float *x [[buffer(0)]], device float *out [[buffer(1)]],
                          uint gid [[thread_position_in_grid]], uint lid [[thread_index_in_threadgroup]],
                          uint group [[threadgroup_position_in_grid]],
                          ushort sg [[simdgroup_index_in_threadgroup]], ushort nsg [[simdgroups_per_threadgroup]]) {
  threadgroup float partial[32];
  float s = simd_sum(x[gid]);
  if (simd_is_first())
    partial[sg] = s;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (sg == 0) {
    float t = lid < nsg ? partial[lid] : 0.0f;
    t = simd_sum(t);
    if (lid == 0)
      out[group] = t;
  }
}
)";

TEST(WorkGroupFunction, SimdGroupsOf32UnderDivergentControlFlow) {
  Program p;
  ASSERT_NO_FATAL_FAILURE(p.load(kSimdDivergence, {"diverge", "two_level_sum"}, 1024, {"-std=macos-metal2.1"}));
  const uint32_t tg = 100, groups = 3;
  std::vector<uint32_t> out(tg * groups * 3, 0xdeadbeef);
  dispatch(p, "diverge", {out.data()}, {groups, 1, 1}, {tg, 1, 1}, false);
  for (uint32_t g = 0; g < groups; ++g)
    for (uint32_t lid = 0; lid < tg; ++lid) {
      uint32_t base = lid & ~31u, lanes = std::min(32u, tg - base);
      uint32_t a = 0, acc = 0;
      for (uint32_t l = 0; l < lanes; ++l)
        if ((l & 1) == (lid & 1))
          a += (lid & 1) ? base + l : (base + l) * 100;
      for (uint32_t i = 0; i < (lid & 3); ++i)
        for (uint32_t l = 0; l < lanes; ++l)
          acc += ((base + l) & 3) > i ? i + 1 : 0;
      const uint32_t *o = &out[(g * tg + lid) * 3];
      ASSERT_EQ(o[0], a) << "lid " << lid;
      ASSERT_EQ(o[1], lanes) << "lid " << lid;
      ASSERT_EQ(o[2], acc) << "lid " << lid;
    }

  const uint32_t n = 1000, width = 256; // the last threadgroup has 232 threads
  auto x = randomSmallIntegers(n, 7);
  std::vector<float> sums((n + width - 1) / width, -1.0f);
  dispatch(p, "two_level_sum", {x.data(), sums.data()}, {n, 1, 1}, {width, 1, 1}, true);
  for (uint32_t g = 0; g < sums.size(); ++g) {
    float want = 0;
    for (uint32_t i = g * width; i < std::min(n, (g + 1) * width); ++i)
      want += x[i];
    ASSERT_EQ(sums[g], want) << "threadgroup " << g;
  }
}

TEST(WorkGroupFunction, AMissingEntryIsAnErrorAndChangesNothing) {
  // A module without the entry: an error, and the module unchanged.
  llvm::LLVMContext ctx;
  llvm::Module m("empty", ctx);
  auto r = msl::executor::buildWorkGroupFunction(m, "nope", 64);
  ASSERT_FALSE(bool(r));
  llvm::consumeError(r.takeError());
  EXPECT_TRUE(m.empty());
}

TEST(WorkGroupFunction, AFailedBuildLeavesTheModuleAsItWas) {
  // An entry the transform refuses half-way (its launch vector escapes into
  // a call): the partly built function and its helpers are removed again.
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  auto m = llvm::parseAssemblyString(R"(
declare void @ext(ptr)
define void @k(ptr %args, ptr %launch) {
  call void @ext(ptr %launch)
  ret void
}
)", diag, ctx);
  ASSERT_TRUE(m) << diag.getMessage().str();
  size_t functions = m->size();
  auto r = msl::executor::buildWorkGroupFunction(*m, "k", 64);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("escapes"), std::string::npos);
  EXPECT_EQ(m->getFunction("k.msl.wg"), nullptr);
  EXPECT_EQ(m->getFunction("__msl_wg.local_id"), nullptr);
  EXPECT_EQ(m->getFunction("__msl_wg.flat_id"), nullptr);
  EXPECT_EQ(m->size(), functions);
}

} // namespace
