#include "CpuDevice.h"

#include <llvm/IR/InlineAsm.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/IR/InstIterator.h>

#include "Textures.h"
#include "GuardedMemory.h"
#include "WorkGroupFunction.h"
#include "WorkerProtocol.h"

#include <llvm/ADT/StringSet.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace msl::executor {
namespace {

using msl::internal::ExecSlot;
using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;

//===-- Faults --------------------------------------------------------------===//

const char *gProgram = "msld-exec-worker";
// The kernel running now (set before a dispatch, read by the handler).
char gKernelSymbol[512];
volatile sig_atomic_t gKernelRunning = 0;
// This thread's stack (its lowest address and size), to tell a stack
// overflow from an out-of-bounds access.
thread_local uintptr_t tStackLow = 0;
thread_local size_t tStackBytes = 0;

void recordThreadStack() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0)
    return;
  void *low = nullptr;
  size_t bytes = 0;
  if (pthread_attr_getstack(&attr, &low, &bytes) == 0) {
    tStackLow = reinterpret_cast<uintptr_t>(low);
    tStackBytes = bytes;
  }
  pthread_attr_destroy(&attr);
}

size_t appendText(char *buf, size_t at, size_t cap, const char *s) {
  while (*s && at + 1 < cap)
    buf[at++] = *s++;
  return at;
}

size_t appendHex(char *buf, size_t at, size_t cap, uintptr_t v) {
  char digits[2 + 16];
  int n = 0;
  do {
    digits[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v);
  at = appendText(buf, at, cap, "0x");
  while (n && at + 1 < cap)
    buf[at++] = digits[--n];
  return at;
}

size_t appendDecimal(char *buf, size_t at, size_t cap, unsigned v) {
  char digits[12];
  int n = 0;
  do {
    digits[n++] = char('0' + v % 10);
    v /= 10;
  } while (v);
  while (n && at + 1 < cap)
    buf[at++] = digits[--n];
  return at;
}

void onFault(int sig, siginfo_t *info, void *) {
  if (!gKernelRunning) {
    // Not the kernel's fault: the default action (a crash msld sees as one).
    ::signal(sig, SIG_DFL);
    ::raise(sig);
    return;
  }
  char msg[1024];
  size_t n = 0;
  n = appendText(msg, n, sizeof msg, gProgram);
  n = appendText(msg, n, sizeof msg, ": kernel ");
  n = appendText(msg, n, sizeof msg, gKernelSymbol);
  n = appendText(msg, n, sizeof msg, " faulted: ");
  const uintptr_t addr = reinterpret_cast<uintptr_t>(info ? info->si_addr : nullptr);
  // Within a megabyte below this thread's stack, or in its lowest page.
  const bool stackOverflow = tStackLow && addr < tStackLow + 4096 && addr + (1u << 20) >= tStackLow;
  switch (sig) {
  case SIGSEGV:
  case SIGBUS:
    n = appendText(msg, n, sizeof msg,
                   stackOverflow ? "stack overflow (too much private memory per thread) at "
                                 : "out-of-bounds access at ");
    break;
  case SIGFPE:
    n = appendText(msg, n, sizeof msg, "arithmetic exception (integer division by zero or overflow) at ");
    break;
  default:
    n = appendText(msg, n, sizeof msg, "trap at ");
    break;
  }
  n = appendHex(msg, n, sizeof msg, addr);
  n = appendText(msg, n, sizeof msg, " (signal ");
  n = appendDecimal(msg, n, sizeof msg, unsigned(sig));
  n = appendText(msg, n, sizeof msg, ")\n");
  (void)!::write(2, msg, n);
  ::_exit(msl::service::kWorkerKernelFaultExitCode);
}

// Each thread needs its own alternate stack (a kernel may fault by running
// out of stack). AVX-512 signal frames are large: 64 KiB.
void installAltStack() {
  constexpr size_t kBytes = 64 << 10;
  void *p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return;
  stack_t ss{};
  ss.ss_sp = p;
  ss.ss_size = kBytes;
  ::sigaltstack(&ss, nullptr);
}

//===-- Thread pool ---------------------------------------------------------===//

// A fixed set of threads (with large stacks: work-group functions keep
// per-work-item values on the stack) that run one task at a time, each
// thread calling it with its index.
class ThreadPool {
public:
  // Stacks count against RLIMIT_DATA (all of it, touched or not): 16 MiB a
  // thread, for work-group functions' context arrays of up to 1024 threads.
  static constexpr size_t kStackBytes = size_t(16) << 20;

  explicit ThreadPool(unsigned n) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kStackBytes);
    for (unsigned i = 0; i < n; ++i) {
      auto *arg = new std::pair<ThreadPool *, unsigned>(this, i);
      pthread_t t;
      if (pthread_create(&t, &attr, &ThreadPool::start, arg) != 0) {
        delete arg;
        break;
      }
      threads_.push_back(t);
    }
    pthread_attr_destroy(&attr);
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> l(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (pthread_t t : threads_)
      pthread_join(t, nullptr);
  }
  unsigned size() const { return unsigned(threads_.size()); }

  // Runs task(i) on every thread i and returns when all have returned.
  void run(const std::function<void(unsigned)> &task) {
    {
      std::lock_guard<std::mutex> l(m_);
      task_ = &task;
      pending_.store(size(), std::memory_order_relaxed);
      generation_.fetch_add(1, std::memory_order_release);
    }
    if (sleepers_.load(std::memory_order_relaxed) > 0)
      wake_.notify_all();
    std::unique_lock<std::mutex> l(m_);
    done_.wait(l, [&] { return pending_.load(std::memory_order_acquire) == 0; });
    task_ = nullptr;
  }

private:
  static void *start(void *p) {
    auto *arg = static_cast<std::pair<ThreadPool *, unsigned> *>(p);
    ThreadPool *pool = arg->first;
    unsigned index = arg->second;
    delete arg;
    recordThreadStack();
    installAltStack();
    pool->loop(index);
    return nullptr;
  }
  // A thread that has run a task watches for the next one for a while
  // before it sleeps: a dispatch that follows soon (a repeat, the next small
  // request) starts at once instead of waiting for the scheduler to wake
  // every thread (tens of microseconds each on a virtual machine).
  static constexpr auto kSpinAfterTask = std::chrono::microseconds(200);

  void loop(unsigned index) {
    uint64_t seen = 0;
    for (;;) {
      const auto spinEnd = std::chrono::steady_clock::now() + kSpinAfterTask;
      for (unsigned i = 0; generation_.load(std::memory_order_acquire) == seen && !stop_.load(); ++i) {
        sched_yield();
        if ((i & 15) == 0 && std::chrono::steady_clock::now() > spinEnd)
          break;
      }
      const std::function<void(unsigned)> *task;
      {
        std::unique_lock<std::mutex> l(m_);
        auto woken = [&] { return stop_.load() || generation_.load(std::memory_order_relaxed) != seen; };
        if (!woken()) { // run() reads sleepers_ after it has changed generation_ under m_
          sleepers_.fetch_add(1, std::memory_order_relaxed);
          wake_.wait(l, woken);
          sleepers_.fetch_sub(1, std::memory_order_relaxed);
        }
        if (stop_.load())
          return;
        seen = generation_.load(std::memory_order_relaxed);
        task = task_;
      }
      (*task)(index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> l(m_);
        done_.notify_one();
      }
    }
  }

  std::vector<pthread_t> threads_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(unsigned)> *task_ = nullptr; // written under m_
  std::atomic<uint64_t> generation_{0};                 // changed under m_
  std::atomic<unsigned> pending_{0}, sleepers_{0};
  std::atomic<bool> stop_{false};
};

//===-- JIT -----------------------------------------------------------------===//

using WorkGroupFn = void (*)(void **args, const uint32_t *launch, char *threadgroupMemory);

struct Kernel {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  WorkGroupFn fn = nullptr;
  uint64_t threadgroupGlobalsBytes = 0;
  // The argument slots the entry reads (0: not known).
  unsigned requiredSlots = 0;
};

std::string errorText(llvm::Error e) { return llvm::toString(std::move(e)); }

// What a kernel may call in this process: the C math library, the memory
// intrinsics' functions and the compiler's runtime helpers (soft half
// conversions, 128-bit division). Nothing that reaches the OS.
bool isAllowedProcessSymbol(llvm::StringRef name) {
  static const llvm::StringSet<> kAllowed = [] {
    llvm::StringSet<> s;
    for (const char *f :
         {"sin",   "cos",    "tan",       "asin",     "acos",   "atan",   "atan2",   "sinh",
          "cosh",  "tanh",   "asinh",     "acosh",    "atanh",  "exp",    "exp2",    "exp10",
          "expm1", "log",    "log2",      "log10",    "log1p",  "pow",    "sqrt",    "cbrt",
          "hypot", "fmod",   "remainder", "remquo",   "fma",    "fmin",   "fmax",    "fdim",
          "floor", "ceil",   "trunc",     "round",    "rint",   "nearbyint", "lround", "llround",
          "lrint", "llrint", "frexp",     "ldexp",    "scalbn", "scalbln", "logb",   "ilogb",
          "modf",  "copysign", "nextafter", "erf",    "erfc",   "tgamma", "lgamma",  "sincos",
          "fabs",  "roundeven"}) {
      s.insert(f);
      s.insert(std::string(f) + "f");
    }
    for (const char *f : {"memcpy", "memmove", "memset", "memcmp", "bcmp", "__extendhfsf2",
                          "__truncsfhf2", "__truncdfhf2", "__extendhfdf2", "__gnu_h2f_ieee",
                          "__gnu_f2h_ieee", "__divti3", "__udivti3", "__modti3", "__umodti3",
                          "__muloti4", "__powisf2", "__powidf2", "__fixsfti", "__fixdfti",
                          "__fixunssfti", "__fixunsdfti", "__floattisf", "__floattidf",
                          "__floatuntisf", "__floatuntidf"})
      s.insert(f);
    return s;
  }();
  return kAllowed.contains(name);
}

// bfloat conversions (LLVM calls these without AVX512-BF16; this libgcc
// lacks them). The result's bits go in the low half of xmm0, as a float's
// would: the same register the ABI returns a __bf16 in.
uint16_t bfloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x40); // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1);      // round to nearest even
  return uint16_t(u >> 16);
}
float asBfloatReturn(uint16_t bits) {
  uint32_t u = bits;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
extern "C" float mslTruncSfBf2(float f) { return asBfloatReturn(bfloatBits(f)); }
extern "C" float mslTruncDfBf2(double d) {
  // Round to odd into float first (toward zero, then the sticky bit), so the
  // second rounding to bfloat is correct.
  float f = float(d);
  if (f == f && double(f) != d) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if (std::fabs(double(f)) > std::fabs(d))
      u -= 1;
    u |= 1;
    std::memcpy(&f, &u, 4);
  }
  return asBfloatReturn(bfloatBits(f));
}

// The declarations a kernel reaches from `root`.
std::vector<llvm::Function *> reachableDeclarations(llvm::Function *root) {
  std::vector<llvm::Function *> work{root}, decls;
  std::set<llvm::Function *> seen{root};
  while (!work.empty()) {
    llvm::Function *f = work.back();
    work.pop_back();
    if (f->isDeclaration()) {
      decls.push_back(f);
      continue;
    }
    for (auto &bb : *f)
      for (auto &inst : bb)
        for (llvm::Value *op : inst.operands()) {
          auto *callee = llvm::dyn_cast<llvm::Function>(op->stripPointerCasts());
          if (callee && seen.insert(callee).second)
            work.push_back(callee);
        }
  }
  return decls;
}

// How many slots of `void **args` the entry reads: 1 + the largest constant
// index it loads from; 0 when an access is not at a constant index.
unsigned slotsReadBy(llvm::Function *entry) {
  const llvm::DataLayout &dl = entry->getParent()->getDataLayout();
  uint64_t end = 0;
  std::vector<std::pair<llvm::Value *, uint64_t>> work{{entry->getArg(0), 0}};
  while (!work.empty()) {
    auto [v, offset] = work.back();
    work.pop_back();
    for (llvm::User *u : v->users()) {
      if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(u)) {
        llvm::APInt off(64, 0);
        if (!gep->accumulateConstantOffset(dl, off) || off.isNegative())
          return 0;
        work.emplace_back(gep, offset + off.getZExtValue());
      } else if (auto *load = llvm::dyn_cast<llvm::LoadInst>(u)) {
        end = std::max(end, offset + dl.getTypeStoreSize(load->getType()).getFixedValue());
      } else {
        return 0;
      }
    }
  }
  return unsigned((end + 7) / 8);
}

// The texture hooks (TextureHooks.cpp; the JIT resolves them to it).
bool isTextureHook(llvm::StringRef name) {
  static const llvm::StringSet<> kHooks = [] {
    llvm::StringSet<> s;
    for (const auto &[hook, address] : textureHookSymbols())
      s.insert(hook);
    return s;
  }();
  return kHooks.contains(name);
}

std::string unsupportedHookMessage(const std::string &symbol, llvm::StringRef hook) {
  return "kernel " + symbol + " uses " + hook.str() + ", which the CPU device does not provide";
}

struct HostTarget {
  std::string cpu, features, triple;
};

const HostTarget &hostTarget() {
  static const HostTarget t = [] {
    HostTarget h;
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (jtmb) {
      h.cpu = jtmb->getCPU();
      h.features = jtmb->getFeatures().getString();
      h.triple = jtmb->getTargetTriple().str();
    } else {
      llvm::consumeError(jtmb.takeError());
    }
    return h;
  }();
  return t;
}

llvm::Expected<std::unique_ptr<Kernel>> compileKernel(const std::string &bitcode,
                                                      const std::string &symbol,
                                                      unsigned maxThreads) {
  auto fail = [](const std::string &m) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s", m.c_str());
  };
  auto context = std::make_unique<llvm::LLVMContext>();
  auto parsed = llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "kernel.bc"), *context);
  if (!parsed)
    return fail("cannot read the kernel's bitcode: " + errorText(parsed.takeError()));
  std::unique_ptr<llvm::Module> m = std::move(*parsed);
  // Metal has no inline assembly, and it would let a kernel reach the OS
  // past the symbol allow-list (a module may come from a client's upload).
  if (!m->getModuleInlineAsm().empty())
    return fail("the module has module-level inline assembly, which Metal does not have");
  // (An empty asm is only a compiler barrier: the stdlib's thread-scope
  // atomic_thread_fence is one.)
  for (llvm::Function &f : *m)
    for (llvm::Instruction &i : llvm::instructions(f))
      if (auto *call = llvm::dyn_cast<llvm::CallBase>(&i); call && call->isInlineAsm())
        if (!llvm::cast<llvm::InlineAsm>(call->getCalledOperand())->getAsmString().empty())
          return fail("function '" + f.getName().str() + "' uses inline assembly, which Metal does not have");
  llvm::Function *entry = m->getFunction(symbol);
  if (!entry || entry->isDeclaration())
    return fail("the module has no kernel entry '" + symbol + "'");
  for (llvm::Function *d : reachableDeclarations(entry))
    if (d->getName().starts_with("__msl_") && !isWorkGroupHook(d->getName()) && !isTextureHook(d->getName()))
      return fail(unsupportedHookMessage(symbol, d->getName()));

  const unsigned requiredSlots = slotsReadBy(entry);
  auto wg = buildWorkGroupFunction(*m, symbol, maxThreads);
  if (!wg)
    return fail("kernel " + symbol + ": " + errorText(wg.takeError()));
  if (wg->threadgroupGlobalsAlign > kGuardedAlignment)
    return fail("kernel " + symbol + ": threadgroup variables aligned to " +
                std::to_string(wg->threadgroupGlobalsAlign) + " bytes (at most " +
                std::to_string(kGuardedAlignment) + ")");

  // Only the work-group function stays visible; everything else (the other
  // kernels of the module, helpers) goes internal so that the optimizer
  // drops or inlines it.
  for (llvm::Function &f : *m)
    if (!f.isDeclaration() && f.getName() != wg->symbol)
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  for (llvm::GlobalVariable &g : m->globals())
    if (!g.isDeclaration() && !g.getName().starts_with("llvm."))
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  {
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb;
    pb.registerModuleAnalyses(mam);
    llvm::ModulePassManager mpm;
    mpm.addPass(llvm::GlobalDCEPass());
    mpm.run(*m, mam);
  }
  llvm::Function *wgFn = m->getFunction(wg->symbol);
  if (!wgFn || wgFn->isDeclaration())
    return fail("kernel " + symbol + ": no work-group function '" + wg->symbol + "'");
  for (llvm::Function *d : reachableDeclarations(wgFn))
    if (d->getName().starts_with("__msl_") && !isTextureHook(d->getName()))
      return fail(isWorkGroupHook(d->getName())
                      ? "kernel " + symbol + ": " + d->getName().str() + " is left after the work-group function was built"
                      : unsupportedHookMessage(symbol, d->getName()));

  // What the runtime guarantees about the work-group function's parameters:
  // args and launch are read-only arrays nothing else writes while it runs,
  // so loads from them are hoisted out of the work-item loops (and the loops
  // vectorize).
  {
    llvm::LLVMContext &c = m->getContext();
    auto mark = [&](unsigned arg, uint64_t bytes, uint64_t align) {
      wgFn->addParamAttr(arg, llvm::Attribute::NoAlias);
      wgFn->addParamAttr(arg, llvm::Attribute::NoUndef);
      wgFn->addParamAttr(arg, llvm::Attribute::getWithAlignment(c, llvm::Align(align)));
      if (bytes)
        wgFn->addParamAttr(arg, llvm::Attribute::getWithDereferenceableBytes(c, bytes));
    };
    mark(0, uint64_t(requiredSlots) * 8, 8);
    mark(1, kLaunchSize * 4, 4);
    wgFn->addParamAttr(2, llvm::Attribute::getWithAlignment(
                              c, llvm::Align(std::max<uint64_t>(16, wg->threadgroupGlobalsAlign))));
  }

  // Barriers are gone, so nothing is convergent any more: that mark would
  // keep the loop vectorizer off the work-item loops. And code for this CPU.
  const HostTarget &host = hostTarget();
  for (llvm::Function &f : *m) {
    f.removeFnAttr(llvm::Attribute::Convergent);
    for (auto &bb : f)
      for (auto &inst : bb)
        if (auto *call = llvm::dyn_cast<llvm::CallBase>(&inst))
          call->removeFnAttr(llvm::Attribute::Convergent);
    if (f.isDeclaration())
      continue;
    f.addFnAttr("target-cpu", host.cpu);
    f.addFnAttr("tune-cpu", host.cpu);
    f.addFnAttr("target-features", host.features);
    // Fast math allows the backend to divide and take square roots with the
    // x86 reciprocal estimates plus one Newton step, which misses Metal's
    // fast-math bounds (rsqrt 2.09 ulp > 2; half division not correctly
    // rounded: tests/conformance/RESULTS.md); the exact instructions meet them.
    f.addFnAttr("reciprocal-estimates", "none");
    // Probe large stack frames page by page, so that running out of stack
    // hits the guard page below it rather than skipping over it.
    f.addFnAttr("probe-stack", "inline-asm");
  }

  // The host, detected once (hostTarget()).
  if (host.triple.empty())
    return fail("cannot detect the host CPU");
  std::optional<llvm::orc::JITTargetMachineBuilder> jtmb(llvm::Triple(host.triple));
  jtmb->setCPU(host.cpu);
  jtmb->addFeatures(llvm::SubtargetFeatures(host.features).getFeatures());
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm)
    return fail("cannot create a target machine: " + errorText(tm.takeError()));
  m->setDataLayout((*tm)->createDataLayout());
  m->setTargetTriple((*tm)->getTargetTriple().str());
  if (llvm::verifyModule(*m, nullptr))
    return fail("kernel " + symbol + ": the work-group function is not valid IR");
  const char *dump = std::getenv("MSLD_EXEC_DUMP_IR");
  if (dump && std::string(dump) == "before")
    m->print(llvm::errs(), nullptr);
  {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    llvm::PassBuilder pb(tm->get(), pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(*m, mam);
  }
  // For debugging: the module on stderr (MSLD_EXEC_DUMP_IR=before: before
  // the optimizer; any other value: after it).
  if (dump && *dump && std::string(dump) != "before")
    m->print(llvm::errs(), nullptr);

  // The process's symbols the kernel may use, and nothing else.
  auto setupProcessSymbols = [](llvm::orc::LLJIT &j) -> llvm::Expected<llvm::orc::JITDylibSP> {
    llvm::orc::JITDylib &jd = j.getExecutionSession().createBareJITDylib("<Process>");
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        j.getDataLayout().getGlobalPrefix(),
        [](const llvm::orc::SymbolStringPtr &name) { return isAllowedProcessSymbol(*name); });
    if (!process)
      return process.takeError();
    jd.addGenerator(std::move(*process));
    llvm::orc::MangleAndInterner mangle(j.getExecutionSession(), j.getDataLayout());
    llvm::orc::SymbolMap own;
    own[mangle("__truncsfbf2")] = {llvm::orc::ExecutorAddr::fromPtr(&mslTruncSfBf2),
                                   llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    own[mangle("__truncdfbf2")] = {llvm::orc::ExecutorAddr::fromPtr(&mslTruncDfBf2),
                                   llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    for (const auto &[hook, address] : textureHookSymbols())
      own[mangle(hook)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                           llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
    if (auto e = jd.define(llvm::orc::absoluteSymbols(std::move(own))))
      return e;
    return &jd;
  };
  auto jit = llvm::orc::LLJITBuilder()
                 .setJITTargetMachineBuilder(std::move(*jtmb))
                 .setProcessSymbolsJITDylibSetup(std::move(setupProcessSymbols))
                 .create();
  if (!jit)
    return fail("cannot create the JIT: " + errorText(jit.takeError()));
  if (auto e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(m), std::move(context))))
    return fail("cannot add the kernel to the JIT: " + errorText(std::move(e)));
  auto addr = (*jit)->lookup(wg->symbol);
  if (!addr)
    return fail("kernel " + symbol + " cannot be linked: " + errorText(addr.takeError()));
  auto k = std::make_unique<Kernel>();
  k->fn = addr->toPtr<WorkGroupFn>();
  k->jit = std::move(*jit);
  k->threadgroupGlobalsBytes = wg->threadgroupGlobalsBytes;
  k->requiredSlots = requiredSlots;
  return k;
}

uint64_t alignTo(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

} // namespace

//===-- CpuDevice -----------------------------------------------------------===//

struct CpuDevice::Impl {
  CpuDeviceOptions options;
  ThreadPool pool;
  // Least recently used first.
  std::list<std::pair<std::string, std::shared_ptr<Kernel>>> cache;
  uint64_t jitCompiles = 0;
  // One threadgroup memory block per pool thread.
  std::vector<GuardedRegion> threadgroupMemory;
  // Buffers of earlier requests, kept mapped so that the next request of the
  // same sizes clears pages instead of mapping and faulting in new ones.
  std::vector<GuardedRegion> spareBuffers;
  static constexpr size_t kMaxSpareBuffers = 16;
  static constexpr size_t kMaxSpareBytes = size_t(256) << 20;

  bool takeSpare(size_t length, GuardedRegion &out) {
    for (auto it = spareBuffers.begin(); it != spareBuffers.end(); ++it)
      if (it->reuseFor(length)) {
        out = std::move(*it);
        spareBuffers.erase(it);
        return true;
      }
    return false;
  }
  void keepSpare(std::vector<GuardedRegion> &buffers) {
    size_t bytes = 0;
    for (const auto &r : spareBuffers)
      bytes += r.mappedBytes();
    for (auto &r : buffers)
      if (r.mappedBytes() && spareBuffers.size() < kMaxSpareBuffers && bytes + r.mappedBytes() <= kMaxSpareBytes) {
        bytes += r.mappedBytes();
        spareBuffers.push_back(std::move(r));
      }
  }

  explicit Impl(CpuDeviceOptions o)
      : options(o), pool(o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency())) {}

  llvm::Expected<std::shared_ptr<Kernel>> kernelFor(const ExecWorkerRequest &req, const uint32_t tpt[3]) {
    std::string key = req.module_digest().empty()
                          ? "hash:" + std::to_string(std::hash<std::string>()(req.module()))
                          : req.module_digest();
    // The work-group function depends on the threads in a group, not its shape.
    key += '\0' + req.symbol() + '\0' + std::to_string(tpt[0] * tpt[1] * tpt[2]);
    for (auto it = cache.begin(); it != cache.end(); ++it)
      if (it->first == key) {
        cache.splice(cache.end(), cache, it);
        return cache.back().second;
      }
    if (req.module().empty() && !req.module_digest().empty())
      return nullptr; // sent without its module: msld sends it again
    auto k = compileKernel(req.module(), req.symbol(), tpt[0] * tpt[1] * tpt[2]);
    if (!k)
      return k.takeError();
    ++jitCompiles;
    std::shared_ptr<Kernel> shared = std::move(*k);
    cache.emplace_back(key, shared);
    while (cache.size() > std::max(1u, options.cacheEntries))
      cache.pop_front();
    return shared;
  }

  ExecWorkerResponse execute(const ExecWorkerRequest &req, const std::function<void()> &beforeFirstDispatch,
                             const HostBuffers *host);
};

ExecWorkerResponse CpuDevice::Impl::execute(const ExecWorkerRequest &req,
                                            const std::function<void()> &beforeFirstDispatch,
                                            const HostBuffers *host) {
  // A buffer's initial bytes: in a mapped shared region, or in the request.
  auto hostOf = [&](int i) { return host && size_t(i) < host->size() ? (*host)[size_t(i)] : std::span<char>(); };
  ExecWorkerResponse resp;
  auto fail = [&](const std::string &m) {
    resp.Clear();
    resp.set_error(m);
    return resp;
  };

  // The grid.
  auto dims = [&](const auto &field, const char *what, uint32_t out[3]) -> std::string {
    if (field.size() > 3)
      return std::string(what) + " has " + std::to_string(field.size()) + " dimensions";
    for (int c = 0; c < 3; ++c) {
      out[c] = c < field.size() ? field[c] : 1;
      if (out[c] == 0)
        return std::string(what) + " is 0 in dimension " + std::to_string(c);
    }
    return {};
  };
  uint32_t tpt[3], groups[3], grid[3];
  if (auto e = dims(req.threads_per_threadgroup(), "threads per threadgroup", tpt); !e.empty())
    return fail(e);
  const bool dispatchThreads = req.grid_threads_size() > 0;
  if (dispatchThreads) {
    if (auto e = dims(req.grid_threads(), "the grid", grid); !e.empty())
      return fail(e);
    for (int c = 0; c < 3; ++c)
      groups[c] = uint32_t((uint64_t(grid[c]) + tpt[c] - 1) / tpt[c]);
  } else {
    if (auto e = dims(req.threadgroups(), "threadgroups per grid", groups); !e.empty())
      return fail(e);
    for (int c = 0; c < 3; ++c) {
      uint64_t t = uint64_t(groups[c]) * tpt[c];
      if (t > UINT32_MAX)
        return fail("the grid has more than 2^32 threads in dimension " + std::to_string(c));
      grid[c] = uint32_t(t);
    }
  }
  const uint64_t threadsPerGroup = uint64_t(tpt[0]) * tpt[1] * tpt[2];
  if (threadsPerGroup > kCpuMaxThreadsPerThreadgroup)
    return fail(std::to_string(threadsPerGroup) + " threads per threadgroup (the CPU device runs at most " +
                std::to_string(kCpuMaxThreadsPerThreadgroup) + ")");
  const uint64_t totalGroups = uint64_t(groups[0]) * groups[1] * groups[2];

  // Buffers (given back to spareBuffers on every way out).
  std::vector<GuardedRegion> buffers(req.buffers_size());
  struct KeepBuffers {
    Impl &impl;
    std::vector<GuardedRegion> &buffers;
    ~KeepBuffers() { impl.keepSpare(buffers); }
  } keepBuffers{*this, buffers};
  for (int i = 0; i < req.buffers_size(); ++i) {
    const auto &b = req.buffers(i);
    const std::span<char> from = hostOf(i);
    const std::string_view initial = from.empty() ? std::string_view(b.data()) : std::string_view(from.data(), from.size());
    size_t length = std::max<size_t>(b.length(), initial.size());
    std::string error;
    if (!takeSpare(length, buffers[i]) && !buffers[i].allocate(length, error))
      return fail("buffer " + std::to_string(i) + ": " + error);
    std::memcpy(buffers[i].data(), initial.data(), initial.size());
  }
  std::vector<OwnedTexture> textures(req.textures_size());
  uint64_t textureUsage = 0; // the hooks' first usage report (TextureOps.h)
  for (int i = 0; i < req.textures_size(); ++i) {
    if (std::string e = makeTexture(req.textures(i), textures[i]); !e.empty())
      return fail("texture " + std::to_string(i) + " ([[texture(" + std::to_string(req.textures(i).index()) +
                  ")]]): " + e);
    textures[i].texture.usage = &textureUsage;
  }

  // Argument slots; threadgroup slots get their offsets in each
  // threadgroup's block, after the threadgroup variables.
  auto kernel = kernelFor(req, tpt);
  if (!kernel)
    return fail(errorText(kernel.takeError()));
  if (!*kernel) {
    resp.Clear();
    resp.set_module_needed(true);
    return resp;
  }
  const Kernel &k = **kernel;
  std::vector<void *> args(req.slots_size(), nullptr);
  std::vector<std::pair<int, uint64_t>> threadgroupSlots; // slot, offset in the block
  std::vector<std::vector<uint64_t>> handleArrays(req.slots_size()); // what array slots point at
  uint64_t blockBytes = alignTo(k.threadgroupGlobalsBytes, 16);
  for (int i = 0; i < req.slots_size(); ++i) {
    const ExecSlot &s = req.slots(i);
    switch (s.kind()) {
    case ExecSlot::BUFFER:
      if (s.buffer() >= buffers.size())
        return fail("argument slot " + std::to_string(i) + " names buffer " + std::to_string(s.buffer()) +
                    " of " + std::to_string(buffers.size()));
      if (s.offset() > buffers[s.buffer()].length())
        return fail("argument slot " + std::to_string(i) + ": offset " + std::to_string(s.offset()) +
                    " is past the end of buffer " + std::to_string(s.buffer()) + " (" +
                    std::to_string(buffers[s.buffer()].length()) + " bytes)");
      args[i] = buffers[s.buffer()].data() + s.offset();
      break;
    case ExecSlot::THREADGROUP:
      threadgroupSlots.emplace_back(i, blockBytes);
      blockBytes = alignTo(blockBytes + s.length(), 16);
      break;
    case ExecSlot::HANDLE: {
      // A texture's address or a sampler's packed state (TextureOps.h).
      std::vector<uint64_t> &handles = handleArrays[i];
      for (const auto &h : s.handles()) {
        if (h.has_texture() && h.texture() >= textures.size())
          return fail("argument slot " + std::to_string(i) + " names texture " + std::to_string(h.texture()) +
                      " of " + std::to_string(textures.size()));
        handles.push_back(h.has_texture() ? uint64_t(reinterpret_cast<uintptr_t>(&textures[h.texture()].texture))
                                          : h.sampler_state());
      }
      if (s.handle_array())
        args[i] = handles.data();
      else if (handles.size() > 1)
        return fail("argument slot " + std::to_string(i) + " has " + std::to_string(handles.size()) +
                    " handles and is not an array");
      else
        args[i] = reinterpret_cast<void *>(uintptr_t(handles.empty() ? 0 : handles[0]));
      break;
    }
    default:
      return fail("argument slot " + std::to_string(i) + " is of an unknown kind");
    }
  }
  if (unsigned(req.slots_size()) < k.requiredSlots)
    return fail("kernel " + req.symbol() + " reads " + std::to_string(k.requiredSlots) +
                " argument slots; the request has " + std::to_string(req.slots_size()));
  if (blockBytes > kCpuMaxThreadgroupMemoryBytes)
    return fail(std::to_string(blockBytes) + " bytes of threadgroup memory (the CPU device has " +
                std::to_string(kCpuMaxThreadgroupMemoryBytes) + ")");
  const unsigned nThreads = pool.size();
  threadgroupMemory.resize(nThreads);
  for (auto &region : threadgroupMemory)
    if (!region.data() || region.length() != blockBytes) {
      std::string error;
      if (!region.allocate(blockBytes, error))
        return fail("threadgroup memory: " + error);
    }

  // The dispatches.
  const unsigned repeat = std::max(1u, req.repeat());
  const uint64_t chunk = std::max<uint64_t>(1, totalGroups / (uint64_t(nThreads) * 16));
  std::atomic<uint64_t> next{0};
  std::function<void(unsigned)> task = [&](unsigned w) {
    std::vector<void *> myArgs(args);
    char *block = threadgroupMemory[w].data();
    for (auto [slot, offset] : threadgroupSlots)
      myArgs[slot] = block + offset;
    uint32_t launch[kLaunchSize] = {};
    for (int c = 0; c < 3; ++c) {
      launch[kThreadgroupsPerGrid + c] = groups[c];
      launch[kDispatchThreadsPerThreadgroup + c] = tpt[c];
      launch[kThreadsPerGrid + c] = grid[c];
      launch[kThreadsPerThreadgroup + c] = tpt[c];
    }
    for (;;) {
      uint64_t first = next.fetch_add(chunk, std::memory_order_relaxed);
      if (first >= totalGroups)
        break;
      uint64_t last = std::min(totalGroups, first + chunk);
      // The chunk's first position by division, the next ones by counting
      // (three 64-bit divisions per threadgroup cost as much as a small
      // kernel's whole threadgroup: saxpy, bench/RESULTS.md).
      uint32_t pos[3] = {uint32_t(first % groups[0]), uint32_t(first / groups[0] % groups[1]),
                         uint32_t(first / (uint64_t(groups[0]) * groups[1]))};
      for (uint64_t g = first; g < last; ++g) {
        for (int c = 0; c < 3; ++c) {
          launch[kThreadgroupPositionInGrid + c] = pos[c];
          if (dispatchThreads)
            launch[kThreadsPerThreadgroup + c] = std::min(tpt[c], grid[c] - pos[c] * tpt[c]);
        }
        k.fn(myArgs.data(), launch, block);
        if (++pos[0] == groups[0]) {
          pos[0] = 0;
          if (++pos[1] == groups[1]) {
            pos[1] = 0;
            ++pos[2];
          }
        }
      }
    }
  };
  std::snprintf(gKernelSymbol, sizeof gKernelSymbol, "%s", req.symbol().c_str());
  if (beforeFirstDispatch)
    beforeFirstDispatch(); // the JIT is done: the kernel's own time starts
  for (unsigned r = 0; r < repeat; ++r) {
    next.store(0);
    gKernelRunning = 1;
    auto start = std::chrono::steady_clock::now();
    pool.run(task);
    auto end = std::chrono::steady_clock::now();
    gKernelRunning = 0;
    resp.add_dispatch_time_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(end - start).count());
    if (textureUsage)
      return fail("kernel " + req.symbol() + ": " + describeTextureUsage(textureUsage, "cpu"));
  }

  for (int i = 0; i < req.buffers_size(); ++i)
    if (req.buffers(i).returned()) {
      if (const std::span<char> to = hostOf(i); !to.empty()) {
        std::memcpy(to.data(), buffers[i].data(), std::min(to.size(), buffers[i].length()));
        resp.add_buffers(); // its bytes are back in the region
      } else {
        resp.add_buffers(std::string(buffers[i].data(), buffers[i].length()));
      }
    }
  for (int i = 0; i < req.textures_size(); ++i)
    if (req.textures(i).returned())
      resp.add_textures(std::string(textures[i].texture.texels, textures[i].texture.bytes()));
  return resp;
}

CpuDevice::CpuDevice(CpuDeviceOptions options) {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  impl_ = std::make_unique<Impl>(options);
}

CpuDevice::~CpuDevice() = default;

ExecWorkerResponse CpuDevice::execute(const ExecWorkerRequest &request,
                                      const std::function<void()> &beforeFirstDispatch, const HostBuffers *host) {
  return impl_->execute(request, beforeFirstDispatch, host);
}

uint64_t CpuDevice::jitCompiles() const { return impl_->jitCompiles; }

unsigned CpuDevice::threads() const { return impl_->pool.size(); }

std::string CpuDevice::hostCpu() { return hostTarget().cpu; }

void installFaultHandlers(const char *program) {
  gProgram = program;
  recordThreadStack();
  installAltStack();
  struct sigaction sa{};
  sa.sa_sigaction = onFault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP})
    ::sigaction(sig, &sa, nullptr);
}

} // namespace msl::executor
