// The work-group function: continuation-based synchronization (CBS,
// Karrenberg & Hack 2012, as in AdaptiveCpp's and PoCL's SubCFGFormation).
//
//  1. The entry is cloned into `<entry>.msl.wg(args, launch, tgmem)` and
//     every function that reaches a barrier is inlined into it.
//  2. Loads of launch[0..2] (thread_position_in_threadgroup) become
//     placeholders that each work-item loop fills in; the uniform prologue
//     (loads of args[] slots and of launch[3..17], and what is computed from
//     them alone) moves ahead of all loops; the kernel's `threadgroup`
//     globals (!msl.threadgroup) become offsets into tgmem.
//  3. Each barrier call gets a block of its own and is removed: the block
//     only marks the cut. A block that starts a sub-CFG and loads several
//     streams far apart (an unrolled strided loop) gets implicit cuts
//     between them, one work-item loop per stream (splitStridedStreams).
//  4. Private allocas become arrays with one slot per work-item; SSA values
//     live across a barrier (some path from a barrier to a use avoids the
//     definition) are stored per work-item after their definition and
//     loaded at the uses that are not in the defining block.
//  5. For the function entry and each barrier, the blocks reachable from it
//     without crossing another barrier form a sub-CFG; each is cloned into
//     a loop nest over the work-items (z, y, x; x innermost, annotated
//     llvm.loop.parallel_accesses). Leaving the sub-CFG at a barrier or a
//     return records which sub-CFG comes next; a sub-CFG that can leave only
//     one way continues straight into the next one, otherwise through a
//     dispatcher (a switch on the recorded id).
//
// Values not live across any barrier need no context: on every path inside
// a sub-CFG their definition comes before their use, so the clones keep SSA.
#include "WorkGroupFunction.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/ReplaceConstant.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/LowerAtomic.h"
#include "llvm/Transforms/Utils/ValueMapper.h"

#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <vector>

using namespace llvm;

namespace msl::executor {
namespace {

constexpr const char *kThreadgroupBarrier = "__msl_threadgroup_barrier";
constexpr const char *kSimdgroupBarrier = "__msl_simdgroup_barrier";
constexpr const char *kExchange = "__msl_simd_exchange";           // ptr (i32 words, i64 w0..w3)
constexpr const char *kExchangeMask = "__msl_simd_exchange_mask";  // i64 ()
constexpr const char *kSimdLaneId = "__msl_simd_lane_id";          // i32 ()
constexpr const char *kLocalIdName = "__msl_wg.local_id"; // i32 (i32 dim)
constexpr const char *kFlatIdName = "__msl_wg.flat_id";   // i32 ()
constexpr unsigned kExchangeWords = 4;                     // i64 words per lane and exchange

Error fail(const Twine &what) { return createStringError(inconvertibleErrorCode(), what); }

bool isCutHook(const Function *f) { return f && (msl::executor::isBarrierHook(f->getName()) || f->getName() == kExchange); }

/// A call the CFG is cut at: a barrier or an exchange.
bool isCut(const Instruction &i) {
  auto *call = dyn_cast<CallInst>(&i);
  return call && isCutHook(call->getCalledFunction());
}

/// Calls that only the work-group function can give a meaning to.
bool isWorkItemHook(const Function *f) {
  return f && (isCutHook(f) || f->getName() == kExchangeMask || f->getName() == kSimdLaneId);
}

/// Functions defined in `m` that call a work-item hook, directly or not.
DenseSet<const Function *> functionsReachingBarriers(Module &m) {
  DenseSet<const Function *> out;
  for (bool changed = true; changed;) {
    changed = false;
    for (Function &f : m) {
      if (f.isDeclaration() || out.count(&f))
        continue;
      for (Instruction &i : instructions(f))
        if (auto *call = dyn_cast<CallBase>(&i)) {
          const Function *callee = call->getCalledFunction();
          if (isWorkItemHook(callee) || (callee && out.count(callee))) {
            out.insert(&f);
            changed = true;
            break;
          }
        }
    }
  }
  return out;
}

/// Where a use of a value is needed: before the user, or for a phi at the
/// end of the incoming block.
Instruction *insertionPointFor(Use &u) {
  auto *user = cast<Instruction>(u.getUser());
  if (auto *phi = dyn_cast<PHINode>(user))
    return phi->getIncomingBlock(u)->getTerminator();
  return user;
}

BasicBlock *useBlock(Use &u) { return insertionPointFor(u)->getParent(); }

class Builder {
public:
  Builder(Module &m, Function &entry, unsigned maxThreads)
      : m_(m), ctx_(m.getContext()), entry_(entry), maxThreads_(maxThreads), i32_(Type::getInt32Ty(ctx_)) {}

  Expected<WorkGroupFunction> run();

private:
  Error cloneAndInline();
  Error replaceLaunchLocalIds();
  void hoistUniformPrologue();
  void relocateThreadgroupGlobals();
  void replaceSimdLaneIds();
  Error isolateCuts();
  void splitStridedStreams();
  void shareCarriedValues(const std::vector<BasicBlock *> &pieces);
  bool dependsOnLocalX(Value *v, unsigned depth = 8);
  Error arrayifyAllocas();
  void demoteLiveAcrossBarriers();
  bool rematerializable(Value *v, unsigned depth = 8);
  /// A copy of the pure expression `v` computed before `at`.
  Value *rematerialize(Value *v, Instruction *at, DenseMap<Value *, Value *> &done);
  void formSubCfgs();
  void lowerThreadgroupAtomics();
  BasicBlock *emitSnapshot(BasicBlock *pre, Value *total, AllocaInst *next, unsigned id);
  BasicBlock *emitPickEarliest(Value *total, AllocaInst *next, const std::vector<BasicBlock *> &starts,
                               BasicBlock *ret);
  /// A counted loop i = 0 .. count-1 (count >= 1) after `pre`; `body` fills
  /// one iteration at the builder. Returns the block after the loop.
  BasicBlock *emitLoop(BasicBlock *pre, Value *count, const Twine &name,
                       function_ref<void(IRBuilder<> &, Value *)> body);

  Value *localId(IRBuilder<> &b, unsigned dim) { return b.CreateCall(localIdFn_, {b.getInt32(dim)}); }
  Value *flatId(IRBuilder<> &b) { return b.CreateCall(flatIdFn_); }
  /// &array[flat] for an [maxThreads x T] context array, before `at`.
  Value *slot(AllocaInst *array, Instruction *at) {
    IRBuilder<> b(at);
    return b.CreateInBoundsGEP(array->getAllocatedType(),
                               array, {b.getInt64(0), b.CreateZExt(flatId(b), b.getInt64Ty())});
  }
  AllocaInst *contextArray(Type *t, Align align, const Twine &name) {
    IRBuilder<> b(prologue_, prologue_->begin());
    auto *a = b.CreateAlloca(ArrayType::get(t, maxThreads_), nullptr, name);
    a->setAlignment(std::max(align, Align(16)));
    return a;
  }

  Module &m_;
  LLVMContext &ctx_;
  Function &entry_;
  unsigned maxThreads_;
  Type *i32_;
  Function *wg_ = nullptr;
  Function *localIdFn_ = nullptr, *flatIdFn_ = nullptr;
  BasicBlock *prologue_ = nullptr; // uniform code, ahead of every loop
  BasicBlock *body_ = nullptr;     // the cloned entry block
  std::vector<BasicBlock *> barriers_; // one block per cut (a lone branch), in reverse post-order
  DenseSet<BasicBlock *> exchanges_;   // the cuts that are exchanges
  // Per-work-item resumption: with exchanges (or SIMD-group barriers) the
  // work-items of a threadgroup may stop at different cuts, so each records
  // its own next sub-CFG and the earliest pending cut runs next.
  bool perItem_ = false;
  AllocaInst *published_ = nullptr; // [maxThreads x [4 x i64]]: what each work-item published
  AllocaInst *snapshot_ = nullptr;  // the same, copied when its exchange runs
  AllocaInst *masks_ = nullptr;     // [maxThreads/32 x i64]: the lanes at that exchange
  WorkGroupFunction result_;
};

Error Builder::cloneAndInline() {
  Type *ptr = PointerType::get(ctx_, 0);
  std::string name = (entry_.getName() + ".msl.wg").str();
  if (m_.getNamedValue(name))
    return fail("'" + name + "' already exists");
  wg_ = Function::Create(FunctionType::get(Type::getVoidTy(ctx_), {ptr, ptr, ptr}, false),
                         GlobalValue::ExternalLinkage, name, m_);
  ValueToValueMapTy vmap;
  vmap[entry_.getArg(0)] = wg_->getArg(0);
  vmap[entry_.getArg(1)] = wg_->getArg(1);
  SmallVector<ReturnInst *, 4> returns;
  CloneFunctionInto(wg_, &entry_, vmap, CloneFunctionChangeType::LocalChangesOnly, returns);
  wg_->getArg(0)->setName("args");
  wg_->getArg(1)->setName("launch");
  wg_->getArg(2)->setName("threadgroupMemory");
  wg_->addParamAttr(2, Attribute::NoAlias);
  wg_->removeFnAttr(Attribute::Convergent);
  wg_->removeFnAttr(Attribute::NoInline);
  wg_->removeFnAttr(Attribute::OptimizeNone);
  result_.symbol = name;

  // Barriers must be in this function to be cut at.
  DenseSet<const Function *> reaching = functionsReachingBarriers(m_);
  for (unsigned round = 0;; ++round) {
    if (round > 64)
      return fail("kernel '" + entry_.getName() + "': barrier-calling functions nest too deep (recursion?)");
    SmallVector<CallBase *, 8> calls;
    for (Instruction &i : instructions(*wg_))
      if (auto *call = dyn_cast<CallBase>(&i))
        if (Function *callee = call->getCalledFunction(); callee && reaching.count(callee))
          calls.push_back(call);
    if (calls.empty())
      break;
    for (CallBase *call : calls) {
      InlineFunctionInfo info;
      if (InlineResult r = InlineFunction(*call, info); !r.isSuccess())
        return fail("kernel '" + entry_.getName() + "': cannot inline a function with a barrier: " +
                    r.getFailureReason());
    }
  }
  for (Instruction &i : instructions(*wg_))
    if (auto *call = dyn_cast<CallBase>(&i); call && !isCut(i) && call->isIndirectCall() &&
                                             call->isConvergent())
      return fail("kernel '" + entry_.getName() + "': an indirect convergent call (a barrier?)");
  return Error::success();
}

// launch[0..2] are the work-item's position in the threadgroup: every load of
// them becomes a placeholder the work-item loops fill in.
Error Builder::replaceLaunchLocalIds() {
  localIdFn_ = Function::Create(FunctionType::get(i32_, {i32_}, false), GlobalValue::ExternalLinkage,
                                kLocalIdName, m_);
  flatIdFn_ = Function::Create(FunctionType::get(i32_, {}, false), GlobalValue::ExternalLinkage,
                               kFlatIdName, m_);
  for (Function *f : {localIdFn_, flatIdFn_}) {
    f->setDoesNotAccessMemory();
    f->setDoesNotThrow();
  }
  const DataLayout &dl = m_.getDataLayout();
  std::vector<std::pair<Value *, int64_t>> work{{wg_->getArg(1), 0}};
  std::vector<Instruction *> dead;
  while (!work.empty()) {
    auto [v, offset] = work.back();
    work.pop_back();
    for (User *u : v->users()) {
      if (auto *gep = dyn_cast<GetElementPtrInst>(u)) {
        APInt off(64, 0);
        if (!gep->accumulateConstantOffset(dl, off))
          return fail("kernel '" + entry_.getName() + "': launch[] indexed by a variable");
        work.push_back({gep, offset + off.getSExtValue()});
      } else if (auto *load = dyn_cast<LoadInst>(u); load && load->getPointerOperand() == v) {
        if (offset >= 0 && offset < 12) {
          if (offset % 4 || !load->getType()->isIntegerTy(32))
            return fail("kernel '" + entry_.getName() + "': unexpected read of launch[0..2]");
          IRBuilder<> b(load);
          load->replaceAllUsesWith(localId(b, unsigned(offset / 4)));
          dead.push_back(load);
        }
      } else {
        return fail("kernel '" + entry_.getName() + "': the launch vector escapes");
      }
    }
  }
  for (Instruction *i : dead)
    i->eraseFromParent();
  return Error::success();
}

// Code of the entry block that depends only on args[] slots, launch[3..17]
// and constants is the same for every work-item and stays valid across
// barriers (those arrays do not change): it moves to a prologue ahead of all
// loops. Static allocas of a kernel without barriers go there too.
void Builder::hoistUniformPrologue() {
  body_ = &wg_->getEntryBlock();
  body_->setName("wg.body");
  prologue_ = BasicBlock::Create(ctx_, "wg.prologue", wg_, body_);
  BranchInst::Create(body_, prologue_);
  DenseSet<Value *> uniform{wg_->getArg(0), wg_->getArg(1), wg_->getArg(2)};
  DenseSet<Value *> argMemory{wg_->getArg(0), wg_->getArg(1)}; // pointers into args[] / launch[]
  auto isUniform = [&](Value *v) { return isa<Constant>(v) || uniform.count(v); };
  for (Instruction &i : make_early_inc_range(*body_)) {
    bool hoist = false;
    if (auto *load = dyn_cast<LoadInst>(&i)) {
      hoist = load->isSimple() && argMemory.count(load->getPointerOperand());
    } else if (isa<GetElementPtrInst, CastInst, BinaryOperator, CmpInst, SelectInst>(i) &&
               !i.mayHaveSideEffects() && !isa<CallBase>(i)) {
      hoist = all_of(i.operands(), [&](Value *v) { return isUniform(v); });
      if (hoist && isa<GetElementPtrInst>(i) && argMemory.count(cast<GetElementPtrInst>(i).getPointerOperand()))
        argMemory.insert(&i);
    }
    // Integer division by a uniform zero would trap where the kernel might not.
    if (auto *bo = dyn_cast<BinaryOperator>(&i); bo && bo->isIntDivRem())
      hoist = false;
    if (!hoist)
      continue;
    i.moveBefore(prologue_->getTerminator());
    uniform.insert(&i);
  }
  // A slot's pointer known dereferenceable (a `constant T &`: EntryPoints.cpp
  // says so on its load) is read in the prologue wherever the kernel reads
  // it, with what is known of it: true for the whole dispatch, not only on
  // the path that read it (an optimizer that speculates the load would
  // drop it), so the work-item loops may read through it unconditionally.
  auto slotOffset = [&](Value *p) -> std::optional<int64_t> {
    if (p == wg_->getArg(0))
      return 0;
    auto *gep = dyn_cast<GetElementPtrInst>(p);
    APInt offset(64, 0);
    if (gep && gep->getPointerOperand() == wg_->getArg(0) && gep->isInBounds() &&
        gep->accumulateConstantOffset(m_.getDataLayout(), offset))
      return offset.getSExtValue();
    return std::nullopt;
  };
  std::map<int64_t, LoadInst *> hoisted;
  for (BasicBlock &bb : *wg_) {
    if (&bb == prologue_)
      continue;
    for (Instruction &i : make_early_inc_range(bb)) {
      auto *load = dyn_cast<LoadInst>(&i);
      if (!load || !load->isSimple() || !load->getType()->isPointerTy() ||
          !load->getMetadata(LLVMContext::MD_dereferenceable))
        continue;
      std::optional<int64_t> offset = slotOffset(load->getPointerOperand());
      if (!offset)
        continue;
      LoadInst *&early = hoisted[*offset];
      if (!early) {
        IRBuilder<> b(prologue_->getTerminator());
        Value *slot = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), wg_->getArg(0), uint64_t(*offset));
        early = b.CreateAlignedLoad(load->getType(), slot, load->getAlign(), load->getName());
        early->copyMetadata(*load, {LLVMContext::MD_dereferenceable, LLVMContext::MD_align,
                                    LLVMContext::MD_noundef, LLVMContext::MD_nonnull});
      }
      Value *pointer = load->getPointerOperand();
      load->replaceAllUsesWith(early);
      load->eraseFromParent();
      if (auto *gep = dyn_cast<GetElementPtrInst>(pointer); gep && gep->use_empty())
        gep->eraseFromParent();
    }
  }
}

// The kernel's `threadgroup` variables, laid out in tgmem from offset 0.
void Builder::relocateThreadgroupGlobals() {
  std::vector<GlobalVariable *> globals;
  for (GlobalVariable &g : m_.globals())
    if (g.getMetadata("msl.threadgroup"))
      globals.push_back(&g);
  if (globals.empty())
    return;
  std::vector<Constant *> asConstants(globals.begin(), globals.end());
  convertUsersOfConstantsToInstructions(asConstants, wg_);
  const DataLayout &dl = m_.getDataLayout();
  uint64_t offset = 0, maxAlign = 16;
  for (GlobalVariable *g : globals) {
    SmallVector<Use *, 8> uses;
    for (Use &u : g->uses())
      if (auto *i = dyn_cast<Instruction>(u.getUser()); i && i->getFunction() == wg_)
        uses.push_back(&u);
    if (uses.empty())
      continue;
    Type *t = g->getValueType();
    uint64_t align = std::max<uint64_t>(g->getAlign().valueOrOne().value(), dl.getABITypeAlign(t).value());
    maxAlign = std::max(maxAlign, align);
    offset = alignTo(offset, align);
    // At the very start: hoisted uniform code may refer to the variable.
    IRBuilder<> b(prologue_, prologue_->getFirstInsertionPt());
    Value *p = b.CreateInBoundsGEP(b.getInt8Ty(), wg_->getArg(2), b.getInt64(offset), g->getName() + ".tg");
    for (Use *u : uses)
      u->set(p);
    offset += dl.getTypeAllocSize(t);
  }
  result_.threadgroupGlobalsBytes = offset;
  result_.threadgroupGlobalsAlign = maxAlign;
}

// [[thread_index_in_simdgroup]] of the stdlib's SIMD-group functions: the
// SIMD-groups are kSimdWidth consecutive work-items.
void Builder::replaceSimdLaneIds() {
  Function *hook = m_.getFunction(kSimdLaneId);
  if (!hook)
    return;
  for (User *u : make_early_inc_range(hook->users()))
    if (auto *call = dyn_cast<CallInst>(u); call && call->getFunction() == wg_) {
      IRBuilder<> b(call);
      call->replaceAllUsesWith(b.CreateAnd(flatId(b), b.getInt32(kSimdWidth - 1), "simd.lane"));
      call->eraseFromParent();
    }
}

// Each cut alone in a block (then removed, leaving a lone branch); the block
// after it has that block as its only predecessor and no phis. An exchange
// stores the work-item's words to its slot of published_ before the cut and
// finds its SIMD-group's slots in snapshot_ after it; its mask reads masks_.
Error Builder::isolateCuts() {
  std::vector<CallInst *> calls;
  for (Instruction &i : instructions(*wg_))
    if (isCut(i))
      calls.push_back(cast<CallInst>(&i));
  for (CallInst *call : calls)
    if (call->getCalledFunction()->getName() != kThreadgroupBarrier)
      perItem_ = true;
  Type *i64 = Type::getInt64Ty(ctx_);
  Type *words = ArrayType::get(i64, kExchangeWords);
  if (perItem_) {
    published_ = contextArray(words, Align(32), "wg.published");
    snapshot_ = contextArray(words, Align(32), "wg.snapshot");
    IRBuilder<> b(prologue_, prologue_->begin());
    masks_ = b.CreateAlloca(ArrayType::get(i64, (maxThreads_ + kSimdWidth - 1) / kSimdWidth), nullptr, "wg.masks");
  }
  const bool hasExchange = any_of(calls, [](CallInst *c) { return c->getCalledFunction()->getName() == kExchange; });
  if (Function *maskHook = m_.getFunction(kExchangeMask)) {
    for (User *u : make_early_inc_range(maskHook->users())) {
      auto *call = dyn_cast<CallInst>(u);
      if (!call || call->getFunction() != wg_)
        continue;
      if (!hasExchange)
        return fail("kernel '" + entry_.getName() + "': " + kExchangeMask + " without an exchange");
      IRBuilder<> b(call);
      Value *group = b.CreateLShr(flatId(b), b.getInt32(5));
      Value *p = b.CreateInBoundsGEP(masks_->getAllocatedType(), masks_,
                                     {b.getInt64(0), b.CreateZExt(group, b.getInt64Ty())});
      call->replaceAllUsesWith(b.CreateLoad(i64, p, "simd.mask"));
      call->eraseFromParent();
    }
  }
  for (CallInst *call : calls) {
    const bool exchange = call->getCalledFunction()->getName() == kExchange;
    if (exchange) {
      if (call->arg_size() != 1 + kExchangeWords)
        return fail(Twine("kernel '") + entry_.getName() + "': " + kExchange + " has the wrong arguments");
      unsigned n = kExchangeWords;
      if (auto *c = dyn_cast<ConstantInt>(call->getArgOperand(0)))
        n = unsigned(std::min<uint64_t>(c->getZExtValue(), kExchangeWords));
      Value *mine = slot(published_, call);
      IRBuilder<> b(call);
      for (unsigned w = 0; w < n; ++w)
        b.CreateStore(call->getArgOperand(1 + w), b.CreateConstInBoundsGEP2_32(words, mine, 0, w));
    }
    BasicBlock *at = call->getParent()->splitBasicBlock(call, "wg.cut");
    at->splitBasicBlock(call->getNextNode(), "wg.after");
    if (exchange) {
      IRBuilder<> b(at->getSingleSuccessor(), at->getSingleSuccessor()->getFirstInsertionPt());
      Value *lane0 = b.CreateAnd(flatId(b), b.getInt32(~(kSimdWidth - 1)));
      Value *slots = b.CreateInBoundsGEP(snapshot_->getAllocatedType(), snapshot_,
                                         {b.getInt64(0), b.CreateZExt(lane0, b.getInt64Ty())}, "simd.slots");
      call->replaceAllUsesWith(slots);
      exchanges_.insert(at);
    }
    call->eraseFromParent();
    barriers_.push_back(at);
  }
  // Ids in reverse post-order: the earliest pending cut is the one the
  // diverged work-items reach first (they reconverge at the later ones).
  DenseMap<BasicBlock *, unsigned> order;
  unsigned n = 0;
  for (BasicBlock *bb : ReversePostOrderTraversal<Function *>(wg_))
    order[bb] = n++;
  llvm::sort(barriers_, [&](BasicBlock *a, BasicBlock *b) { return order.lookup(a) < order.lookup(b); });
  return Error::success();
}

// True when `v` is computed from the work-item's x position (or its flat
// index): then neighbouring work-items of a work-item loop see neighbouring
// values of it.
bool Builder::dependsOnLocalX(Value *v, unsigned depth) {
  auto *i = dyn_cast<Instruction>(v);
  if (!i || i->getParent() == prologue_)
    return false;
  if (auto *call = dyn_cast<CallInst>(i)) {
    if (call->getCalledFunction() == flatIdFn_)
      return true;
    if (call->getCalledFunction() == localIdFn_)
      return cast<ConstantInt>(call->getArgOperand(0))->isZero();
    return false;
  }
  if (depth == 0 || !isa<GetElementPtrInst, CastInst, BinaryOperator>(i))
    return false;
  return any_of(i->operands(), [&](Value *op) { return dependsOnLocalX(op, depth - 1); });
}

// Implicit barriers between strided streams. A block that starts a sub-CFG
// (the body, or the block after a barrier) runs for every work-item of the
// threadgroup. When it loads p[X + c_k] for several constants c_k far apart
// (the frontend's fully unrolled `for (i...) s += in[base + i * stride]`, X
// from the work-item's x position), the work-item loop around it reads as
// many interleaved short streams (reduce: 16 streams of 1 KiB per group),
// which the hardware prefetchers follow poorly. Cutting the block before each
// of those loads, as if a barrier stood there, makes one work-item loop per
// load, each reading one contiguous range: the loop interchange of the
// original loop nest (work-items innermost). The values carried from one
// piece to the next (the partial sum) go through context arrays like any
// value live across a barrier; addresses are recomputed. Only without
// per-item resumption (no SIMD-group cuts), where every work-item runs the
// whole start block, so an extra cut in it is met by all of them; moving
// work-items' code across each other between barriers is what the work-item
// loops already do (Metal orders work-items only at barriers).
void Builder::splitStridedStreams() {
  if (barriers_.empty() || perItem_)
    return;
  constexpr unsigned kMinStreams = 4;     // loads of one family in a block
  constexpr int64_t kMinGapBytes = 256;   // between their offsets: past a vector's reach
  const DataLayout &dl = m_.getDataLayout();
  auto inThreadgroupMemory = [&](Value *p) { return getUnderlyingObject(p, 16) == wg_->getArg(2); };
  // ptr = base + (X + c) * size [+ constant]: (base, X, size) and the byte offset.
  struct Key {
    Value *base, *index;
    uint64_t size;
    bool operator<(const Key &o) const {
      return std::tie(base, index, size) < std::tie(o.base, o.index, o.size);
    }
  };
  auto decompose = [&](Value *p, Key &key, int64_t &offset) {
    offset = 0;
    for (unsigned depth = 0; depth < 8; ++depth) {
      auto *gep = dyn_cast<GetElementPtrInst>(p);
      if (!gep)
        return false;
      APInt c(dl.getIndexTypeSizeInBits(gep->getType()), 0);
      if (gep->accumulateConstantOffset(dl, c)) {
        offset += c.getSExtValue();
        p = gep->getPointerOperand();
        continue;
      }
      if (gep->getNumIndices() != 1 || !gep->getSourceElementType()->isSized())
        return false;
      uint64_t size = dl.getTypeAllocSize(gep->getSourceElementType());
      Value *idx = gep->getOperand(1);
      if (auto *cast = dyn_cast<ZExtInst>(idx))
        idx = cast->getOperand(0);
      else if (auto *cast = dyn_cast<SExtInst>(idx))
        idx = cast->getOperand(0);
      if (auto *add = dyn_cast<BinaryOperator>(idx); add && add->getOpcode() == Instruction::Add)
        if (auto *c = dyn_cast<ConstantInt>(add->getOperand(1))) {
          offset += c->getSExtValue() * int64_t(size);
          idx = add->getOperand(0);
        }
      key = {gep->getPointerOperand(), idx, size};
      return true;
    }
    return false;
  };
  std::vector<BasicBlock *> startBlocks{body_};
  for (BasicBlock *cut : barriers_)
    startBlocks.push_back(cut->getSingleSuccessor());
  bool split = false;
  for (BasicBlock *start : startBlocks) {
    std::map<Key, std::vector<std::pair<LoadInst *, int64_t>>> families;
    for (Instruction &i : *start)
      if (auto *load = dyn_cast<LoadInst>(&i); load && load->isSimple() &&
                                               !inThreadgroupMemory(load->getPointerOperand())) {
        Key key;
        int64_t offset;
        if (decompose(load->getPointerOperand(), key, offset) && dependsOnLocalX(key.index))
          families[key].push_back({load, offset});
      }
    DenseSet<Instruction *> cutBefore;
    for (auto &[key, loads] : families) {
      if (loads.size() < kMinStreams)
        continue;
      std::vector<int64_t> offsets;
      for (auto &[load, offset] : loads)
        offsets.push_back(offset);
      llvm::sort(offsets);
      bool apart = true;
      for (size_t k = 1; k < offsets.size(); ++k)
        apart = apart && offsets[k] - offsets[k - 1] >= kMinGapBytes;
      if (!apart)
        continue;
      for (size_t k = 1; k < loads.size(); ++k) // in block order; the first opens the block
        cutBefore.insert(loads[k].first);
    }
    if (cutBefore.empty())
      continue;
    std::vector<Instruction *> points;
    for (Instruction &i : *start)
      if (cutBefore.count(&i))
        points.push_back(&i);
    BasicBlock *rest = start;
    std::vector<BasicBlock *> pieces{start};
    for (Instruction *at : points) {
      BasicBlock *cut = rest->splitBasicBlock(at, "wg.stream");
      rest = cut->splitBasicBlock(at, "wg.after.stream");
      barriers_.push_back(cut);
      pieces.push_back(rest);
      split = true;
    }
    shareCarriedValues(pieces);
  }
  if (!split)
    return;
  DenseMap<BasicBlock *, unsigned> order;
  unsigned n = 0;
  for (BasicBlock *bb : ReversePostOrderTraversal<Function *>(wg_))
    order[bb] = n++;
  llvm::sort(barriers_, [&](BasicBlock *a, BasicBlock *b) { return order.lookup(a) < order.lookup(b); });
}

// The values the pieces of a split block carry to later pieces (the partial
// sum of reduce: s1 = s0 + in[..], s2 = s1 + in[..], ...), each used only in
// those pieces, go through context arrays shared among values whose lives do
// not overlap: one [maxThreads x float] for the whole chain instead of one
// per piece (15 KiB more stack per threadgroup, and as many more cache lines
// per work-item, in reduce). A value takes an array whose last value's last
// use comes before its definition. Cheap position-derived values are left to
// demoteLiveAcrossBarriers, which recomputes them.
void Builder::shareCarriedValues(const std::vector<BasicBlock *> &pieces) {
  DenseMap<BasicBlock *, unsigned> pieceOf;
  for (unsigned k = 0; k < pieces.size(); ++k)
    pieceOf[pieces[k]] = k;
  struct Array {
    AllocaInst *alloca;
    unsigned lastPiece;
    Instruction *lastUse; // the last use in lastPiece
  };
  std::map<Type *, std::vector<Array>> arrays;
  const DataLayout &dl = m_.getDataLayout();
  std::vector<Instruction *> defs;
  for (BasicBlock *bb : pieces)
    for (Instruction &i : *bb)
      defs.push_back(&i);
  for (Instruction *def : defs) {
    if (def->getType()->isVoidTy() || def->use_empty() || isa<PHINode>(def) || def->isTerminator() ||
        rematerializable(def))
      continue;
    const unsigned from = pieceOf.lookup(def->getParent());
    unsigned to = from;
    Instruction *lastUse = nullptr;
    bool inPieces = true;
    for (User *u : def->users()) {
      auto *ui = cast<Instruction>(u);
      auto it = pieceOf.find(ui->getParent());
      if (it == pieceOf.end() || isa<PHINode>(ui)) {
        inPieces = false;
        break;
      }
      if (it->second > to || (it->second == to && lastUse && lastUse->comesBefore(ui))) {
        to = it->second;
        lastUse = ui;
      } else if (it->second == to && !lastUse) {
        lastUse = ui;
      }
    }
    if (!inPieces || to == from)
      continue;
    Array *free = nullptr;
    for (Array &a : arrays[def->getType()])
      if (a.lastPiece < from || (a.lastPiece == from && (a.lastUse == def || a.lastUse->comesBefore(def)))) {
        free = &a;
        break;
      }
    if (!free) {
      arrays[def->getType()].push_back(
          {contextArray(def->getType(), dl.getABITypeAlign(def->getType()), def->getName() + ".ctx"), 0, nullptr});
      free = &arrays[def->getType()].back();
    }
    free->lastPiece = to;
    free->lastUse = lastUse;
    SmallVector<Use *, 8> carried;
    for (Use &u : def->uses())
      if (cast<Instruction>(u.getUser())->getParent() != def->getParent())
        carried.push_back(&u);
    Instruction *after = def->getNextNode();
    Value *p = slot(free->alloca, after);
    IRBuilder<> b(after);
    b.CreateStore(def, p);
    for (Use *u : carried) {
      auto *at = cast<Instruction>(u->getUser());
      Value *q = slot(free->alloca, at);
      IRBuilder<> rb(at);
      u->set(rb.CreateLoad(def->getType(), q, def->getName() + ".reload"));
    }
  }
}

// With barriers, a private variable lives per work-item: one slot each.
Error Builder::arrayifyAllocas() {
  std::vector<AllocaInst *> allocas;
  for (Instruction &i : instructions(*wg_))
    if (auto *a = dyn_cast<AllocaInst>(&i))
      allocas.push_back(a);
  for (AllocaInst *a : allocas) {
    if (a->getParent() == prologue_ && !barriers_.empty())
      continue; // the work-group function's own arrays
    if (barriers_.empty()) {
      if (a->getParent() == body_ && isa<ConstantInt>(a->getArraySize()))
        a->moveBefore(prologue_->getFirstNonPHI());
      else if (a->getParent() != prologue_)
        return fail("kernel '" + entry_.getName() + "': a dynamically sized private array");
      continue;
    }
    auto *count = dyn_cast<ConstantInt>(a->getArraySize());
    if (!count)
      return fail("kernel '" + entry_.getName() + "': a dynamically sized private array");
    Type *t = a->getAllocatedType();
    if (count->getZExtValue() != 1)
      t = ArrayType::get(t, count->getZExtValue());
    AllocaInst *array = contextArray(t, a->getAlign(), a->getName() + ".wi");
    for (Use &u : make_early_inc_range(a->uses())) {
      if (auto *ii = dyn_cast<IntrinsicInst>(u.getUser()); ii && ii->isLifetimeStartOrEnd()) {
        ii->eraseFromParent();
        continue;
      }
      u.set(slot(array, insertionPointFor(u)));
    }
    a->eraseFromParent();
  }
  return Error::success();
}

// Pure arithmetic, up to a small depth, on constants, arguments, the
// uniform prologue and the work-item's position.
bool Builder::rematerializable(Value *v, unsigned depth) {
  if (isa<Constant, Argument>(v))
    return true;
  auto *i = dyn_cast<Instruction>(v);
  if (!i)
    return false;
  if (i->getParent() == prologue_)
    return true;
  if (auto *call = dyn_cast<CallInst>(i))
    return call->getCalledFunction() == localIdFn_ || call->getCalledFunction() == flatIdFn_;
  if (depth == 0 || !isa<GetElementPtrInst, CastInst, BinaryOperator, CmpInst, SelectInst>(i) ||
      i->mayHaveSideEffects() || i->mayReadFromMemory())
    return false;
  if (auto *bo = dyn_cast<BinaryOperator>(i); bo && bo->isIntDivRem())
    return false;
  return all_of(i->operands(), [&](Value *op) { return rematerializable(op, depth - 1); });
}

Value *Builder::rematerialize(Value *v, Instruction *at, DenseMap<Value *, Value *> &done) {
  auto *i = dyn_cast<Instruction>(v);
  if (!i || i->getParent() == prologue_)
    return v;
  if (Value *copy = done.lookup(v))
    return copy; // a subexpression shared in the DAG: computed once
  Instruction *copy = i->clone();
  for (Use &op : copy->operands())
    op.set(rematerialize(op.get(), at, done));
  copy->insertBefore(at);
  copy->setName(i->getName() + ".re");
  done[v] = copy;
  return copy;
}

void Builder::demoteLiveAcrossBarriers() {
  if (barriers_.empty())
    return;
  DenseSet<BasicBlock *> isBarrierBlock(barriers_.begin(), barriers_.end());
  // True when some path from a barrier to the use avoids `def`'s block.
  auto liveAcross = [&](Instruction *def) {
    BasicBlock *defBlock = def->getParent();
    SmallVector<BasicBlock *, 16> work;
    DenseSet<BasicBlock *> seen;
    for (Use &u : def->uses()) {
      BasicBlock *bb = useBlock(u);
      if (bb != defBlock && seen.insert(bb).second)
        work.push_back(bb);
    }
    while (!work.empty()) {
      BasicBlock *bb = work.pop_back_val();
      if (isBarrierBlock.count(bb))
        return true;
      for (BasicBlock *pred : predecessors(bb))
        if (pred != defBlock && seen.insert(pred).second)
          work.push_back(pred);
    }
    return false;
  };
  std::vector<Instruction *> demote, recompute;
  for (BasicBlock &bb : *wg_) {
    if (&bb == prologue_)
      continue;
    for (Instruction &i : bb) {
      if (i.getType()->isVoidTy() || i.use_empty())
        continue;
      if (auto *call = dyn_cast<CallInst>(&i); call && (call->getCalledFunction() == localIdFn_ ||
                                                      call->getCalledFunction() == flatIdFn_))
        continue; // recomputed at the uses (below)
      if (liveAcross(&i))
        (rematerializable(&i) ? recompute : demote).push_back(&i);
    }
  }
  // Cheap values of the work-item's position and uniform values (addresses
  // into threadgroup tiles, indices) are computed again where they are used
  // rather than kept per work-item: a context array costs a store and a
  // load per work-item and keeps the loops from vectorizing (pocl PR #1169).
  for (Instruction *def : recompute) {
    SmallVector<Use *, 8> uses;
    for (Use &u : def->uses())
      if (useBlock(u) != def->getParent() || isa<PHINode>(u.getUser()))
        uses.push_back(&u);
    for (Use *u : uses) {
      DenseMap<Value *, Value *> done;
      u->set(rematerialize(def, insertionPointFor(*u), done));
    }
  }
  // Position placeholders: recomputed next to each use in another block.
  std::vector<CallInst *> positions;
  for (Instruction &i : instructions(*wg_))
    if (auto *call = dyn_cast<CallInst>(&i); call && call->getCalledFunction() == localIdFn_)
      positions.push_back(call);
  for (CallInst *call : positions)
      for (Use &u : make_early_inc_range(call->uses()))
        if (useBlock(u) != call->getParent() || isa<PHINode>(u.getUser())) {
          IRBuilder<> b(insertionPointFor(u));
          u.set(b.CreateCall(localIdFn_, {call->getArgOperand(0)}));
        }
  const DataLayout &dl = m_.getDataLayout();
  for (Instruction *def : demote) {
    AllocaInst *array = contextArray(def->getType(), dl.getABITypeAlign(def->getType()), def->getName() + ".ctx");
    SmallVector<Use *, 8> uses;
    for (Use &u : def->uses())
      if (useBlock(u) != def->getParent() || isa<PHINode>(u.getUser()))
        uses.push_back(&u);
    Instruction *after = isa<PHINode>(def) ? &*def->getParent()->getFirstInsertionPt() : def->getNextNode();
    {
      Value *p = slot(array, after);
      IRBuilder<> b(after);
      b.CreateStore(def, p);
    }
    for (Use *u : uses) {
      Instruction *at = insertionPointFor(*u);
      Value *p = slot(array, at);
      IRBuilder<> b(at);
      u->set(b.CreateLoad(def->getType(), p, def->getName() + ".reload"));
    }
  }
}

BasicBlock *Builder::emitLoop(BasicBlock *pre, Value *count, const Twine &name,
                              function_ref<void(IRBuilder<> &, Value *)> body) {
  BasicBlock *loop = BasicBlock::Create(ctx_, name, wg_, pre->getNextNode());
  BasicBlock *done = BasicBlock::Create(ctx_, name + ".done", wg_, loop->getNextNode());
  IRBuilder<> b(pre);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  PHINode *i = b.CreatePHI(i32_, 2, name + ".i");
  i->addIncoming(b.getInt32(0), pre);
  body(b, i);
  Value *i1 = b.CreateAdd(i, b.getInt32(1), "", /*HasNUW=*/true);
  i->addIncoming(i1, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpULT(i1, count), loop, done);
  return done;
}

// Before the work-items at exchange `id` resume: their SIMD-groups' published
// words are copied (a resumed work-item may publish again before the others
// of its group have read), and each group's mask of the work-items at `id`.
BasicBlock *Builder::emitSnapshot(BasicBlock *pre, Value *total, AllocaInst *next, unsigned id) {
  IRBuilder<> b(pre);
  Type *i64 = b.getInt64Ty();
  Value *n = b.CreateZExt(total, i64);
  const uint64_t slotBytes = 8 * kExchangeWords;
  b.CreateMemCpy(snapshot_, snapshot_->getAlign(), published_, published_->getAlign(),
                 b.CreateMul(n, b.getInt64(slotBytes)));
  Value *groups = b.CreateLShr(b.CreateAdd(n, b.getInt64(kSimdWidth - 1)), b.getInt64(5));
  b.CreateMemSet(masks_, b.getInt8(0), b.CreateMul(groups, b.getInt64(8)), masks_->getAlign());
  return emitLoop(pre, total, "wg.mask" + Twine(id), [&](IRBuilder<> &lb, Value *i) {
    Value *at = lb.CreateLoad(i32_, lb.CreateInBoundsGEP(next->getAllocatedType(), next,
                                                         {lb.getInt64(0), lb.CreateZExt(i, i64)}));
    Value *bit = lb.CreateShl(lb.CreateZExt(lb.CreateICmpEQ(at, lb.getInt32(id)), i64),
                              lb.CreateZExt(lb.CreateAnd(i, lb.getInt32(kSimdWidth - 1)), i64));
    Value *p = lb.CreateInBoundsGEP(masks_->getAllocatedType(), masks_,
                                    {lb.getInt64(0), lb.CreateZExt(lb.CreateLShr(i, lb.getInt32(5)), i64)});
    lb.CreateStore(lb.CreateOr(lb.CreateLoad(i64, p), bit), p);
  });
}

// The dispatcher with per-item resumption: the smallest id any work-item
// stopped at (cuts are numbered in reverse post-order; the exit is last).
BasicBlock *Builder::emitPickEarliest(Value *total, AllocaInst *next, const std::vector<BasicBlock *> &starts,
                                      BasicBlock *ret) {
  BasicBlock *pick = BasicBlock::Create(ctx_, "wg.pick", wg_, ret);
  PHINode *best = nullptr;
  BasicBlock *done = emitLoop(pick, total, "wg.pick", [&](IRBuilder<> &lb, Value *i) {
    best = lb.CreatePHI(i32_, 2, "wg.earliest");
    best->addIncoming(lb.getInt32(starts.size()), pick);
    Value *at = lb.CreateLoad(i32_, lb.CreateInBoundsGEP(next->getAllocatedType(), next,
                                                         {lb.getInt64(0), lb.CreateZExt(i, lb.getInt64Ty())}));
    Value *earlier = lb.CreateBinaryIntrinsic(Intrinsic::umin, best, at);
    best->addIncoming(earlier, lb.GetInsertBlock());
  });
  // The phi's back-edge value is the umin; the loop's result is the last one.
  Value *earliest = best->getIncomingValue(1);
  IRBuilder<> b(done);
  SwitchInst *sw = b.CreateSwitch(earliest, ret, starts.size());
  for (unsigned id = 0; id < starts.size(); ++id)
    sw->addCase(b.getInt32(id), starts[id]);
  return pick;
}

void Builder::formSubCfgs() {
  // Start points: the body (id 0) and the block after each barrier (id k+1).
  std::vector<BasicBlock *> starts{body_};
  DenseMap<BasicBlock *, unsigned> barrierId;
  for (unsigned k = 0; k < barriers_.size(); ++k) {
    barrierId[barriers_[k]] = k + 1;
    starts.push_back(barriers_[k]->getSingleSuccessor());
  }
  const unsigned exitId = starts.size();
  std::vector<BasicBlock *> original;
  for (BasicBlock &bb : *wg_)
    if (&bb != prologue_)
      original.push_back(&bb);

  IRBuilder<> pb(prologue_->getTerminator());
  Value *launch = wg_->getArg(1);
  Value *size[3];
  for (unsigned c = 0; c < 3; ++c)
    size[c] = pb.CreateLoad(i32_, pb.CreateConstInBoundsGEP1_32(i32_, launch, 6 + c), "wg.size");
  Value *total = pb.CreateMul(pb.CreateMul(size[0], size[1]), size[2], "wg.threads");
  // Without per-item resumption all work-items stop at the same cut: one id.
  AllocaInst *next = perItem_ ? contextArray(i32_, Align(4), "wg.next") : nullptr;
  auto nextSlot = [&](IRBuilder<> &b, Value *flat) {
    return b.CreateInBoundsGEP(next->getAllocatedType(), next, {b.getInt64(0), b.CreateZExt(flat, b.getInt64Ty())});
  };

  BasicBlock *ret = BasicBlock::Create(ctx_, "wg.return", wg_);
  ReturnInst::Create(ctx_, ret);
  BasicBlock *dispatch = nullptr;
  std::vector<BasicBlock *> preheaders(starts.size());
  for (unsigned j = 0; j < starts.size(); ++j)
    preheaders[j] = BasicBlock::Create(ctx_, "wg.sub" + Twine(j), wg_, ret);
  auto target = [&](unsigned id) { return id == exitId ? ret : preheaders[id]; };

  for (unsigned j = 0; j < starts.size(); ++j) {
    // The blocks reachable from the start without crossing a barrier.
    std::vector<BasicBlock *> region;
    DenseSet<BasicBlock *> inRegion;
    std::set<unsigned> exits;
    SmallVector<BasicBlock *, 16> work{starts[j]};
    inRegion.insert(starts[j]);
    while (!work.empty()) {
      BasicBlock *bb = work.pop_back_val();
      if (isa<ReturnInst>(bb->getTerminator()))
        exits.insert(exitId);
      for (BasicBlock *s : successors(bb)) {
        if (auto it = barrierId.find(s); it != barrierId.end()) {
          exits.insert(it->second);
          continue;
        }
        if (inRegion.insert(s).second)
          work.push_back(s);
      }
    }
    for (BasicBlock *bb : original) // in function order
      if (inRegion.count(bb))
        region.push_back(bb);
    // No exit at all: the region never ends (an endless kernel; the runtime's
    // time limit stops it). Its loop nest then falls through to the return.
    const bool oneExit = exits.size() <= 1;

    // The loop nest: z, y, x (innermost).
    BasicBlock *pre = preheaders[j];
    auto block = [&](const Twine &n) { return BasicBlock::Create(ctx_, "wg.sub" + Twine(j) + "." + n, wg_, ret); };
    BasicBlock *zh = block("z"), *yh = block("y"), *xh = block("x");
    BasicBlock *xl = block("x.latch"), *yl = block("y.latch"), *zl = block("z.latch");
    if (j > 0 && exchanges_.count(barriers_[j - 1]))
      pre = emitSnapshot(pre, total, next, j);
    BranchInst::Create(zh, pre);
    IRBuilder<> b(zh);
    PHINode *z = b.CreatePHI(i32_, 2, "wg.z");
    b.CreateBr(yh);
    b.SetInsertPoint(yh);
    PHINode *y = b.CreatePHI(i32_, 2, "wg.y");
    b.CreateBr(xh);
    b.SetInsertPoint(xh);
    PHINode *x = b.CreatePHI(i32_, 2, "wg.x");
    Value *flat = b.CreateAdd(x, b.CreateMul(size[0], b.CreateAdd(y, b.CreateMul(size[1], z))), "wg.flat");

    ValueToValueMapTy vmap;
    std::vector<BasicBlock *> clones;
    for (BasicBlock *bb : region) {
      BasicBlock *c = CloneBasicBlock(bb, vmap, ".s" + Twine(j), wg_);
      c->moveBefore(xl);
      vmap[bb] = c;
      clones.push_back(c);
    }
    DenseSet<BasicBlock *> cloneSet(clones.begin(), clones.end());
    if (perItem_ && j > 0) // only the work-items stopped at this cut resume
      b.CreateCondBr(b.CreateICmpEQ(b.CreateLoad(i32_, nextSlot(b, flat)), b.getInt32(j)),
                     cast<BasicBlock>(vmap[starts[j]]), xl);
    else
      b.CreateBr(cast<BasicBlock>(vmap[starts[j]]));
    std::map<unsigned, BasicBlock *> exitBlocks;
    auto exitBlock = [&](unsigned id) {
      auto [it, inserted] = exitBlocks.emplace(id, nullptr);
      if (inserted) {
        it->second = BasicBlock::Create(ctx_, "wg.sub" + Twine(j) + ".to" + Twine(id), wg_, xl);
        IRBuilder<> eb(it->second);
        if (perItem_) {
          eb.CreateStore(eb.getInt32(id), nextSlot(eb, flat));
        } else if (!oneExit) {
          if (!next) {
            IRBuilder<> ab(prologue_, prologue_->begin());
            next = ab.CreateAlloca(i32_, nullptr, "wg.next");
          }
          eb.CreateStore(eb.getInt32(id), next);
        }
        eb.CreateBr(xl);
      }
      return it->second;
    };
    MDNode *accessGroup = MDNode::getDistinct(ctx_, {});
    for (BasicBlock *c : clones) {
      for (Instruction &i : make_early_inc_range(*c)) {
        RemapInstruction(&i, vmap, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
        if (auto *phi = dyn_cast<PHINode>(&i)) {
          for (unsigned k = phi->getNumIncomingValues(); k-- > 0;)
            if (!cloneSet.count(phi->getIncomingBlock(k)))
              phi->removeIncomingValue(k, /*DeletePHIIfEmpty=*/false);
        } else if (auto *call = dyn_cast<CallInst>(&i)) {
          if (call->getCalledFunction() == localIdFn_) {
            unsigned dim = unsigned(cast<ConstantInt>(call->getArgOperand(0))->getZExtValue());
            call->replaceAllUsesWith(dim == 0 ? x : dim == 1 ? y : static_cast<Value *>(z));
            call->eraseFromParent();
            continue;
          }
          if (call->getCalledFunction() == flatIdFn_) {
            call->replaceAllUsesWith(flat);
            call->eraseFromParent();
            continue;
          }
        }
        // Work-items do not depend on each other between barriers (a data
        // race is undefined in Metal; atomics are left unmarked).
        if (auto *load = dyn_cast<LoadInst>(&i); load && load->isSimple())
          i.setMetadata(LLVMContext::MD_access_group, accessGroup);
        if (auto *store = dyn_cast<StoreInst>(&i); store && store->isSimple())
          i.setMetadata(LLVMContext::MD_access_group, accessGroup);
      }
      Instruction *term = c->getTerminator();
      if (isa<ReturnInst>(term)) {
        BranchInst::Create(exitBlock(exitId), c);
        term->eraseFromParent();
        continue;
      }
      for (unsigned s = 0; s < term->getNumSuccessors(); ++s)
        if (auto it = barrierId.find(term->getSuccessor(s)); it != barrierId.end())
          term->setSuccessor(s, exitBlock(it->second));
    }
    // Latches.
    b.SetInsertPoint(xl);
    Value *x1 = b.CreateAdd(x, b.getInt32(1), "", /*HasNUW=*/true);
    BranchInst *xBack = b.CreateCondBr(b.CreateICmpULT(x1, size[0]), xh, yl);
    MDNode *parallel = MDNode::get(ctx_, {MDString::get(ctx_, "llvm.loop.parallel_accesses"), accessGroup});
    MDNode *loopId = MDNode::getDistinct(ctx_, {nullptr, parallel});
    loopId->replaceOperandWith(0, loopId);
    xBack->setMetadata(LLVMContext::MD_loop, loopId);
    b.SetInsertPoint(yl);
    Value *y1 = b.CreateAdd(y, b.getInt32(1), "", true);
    b.CreateCondBr(b.CreateICmpULT(y1, size[1]), yh, zl);
    b.SetInsertPoint(zl);
    Value *z1 = b.CreateAdd(z, b.getInt32(1), "", true);
    BasicBlock *after = block("done");
    b.CreateCondBr(b.CreateICmpULT(z1, size[2]), zh, after);
    x->addIncoming(b.getInt32(0), yh);
    x->addIncoming(x1, xl);
    y->addIncoming(b.getInt32(0), zh);
    y->addIncoming(y1, yl);
    z->addIncoming(b.getInt32(0), pre);
    z->addIncoming(z1, zl);
    b.SetInsertPoint(after);
    if (exits.empty()) {
      b.CreateBr(ret);
    } else if (perItem_) {
      if (!dispatch)
        dispatch = emitPickEarliest(total, next, preheaders, ret);
      b.CreateBr(dispatch);
    } else if (oneExit) {
      b.CreateBr(target(*exits.begin()));
    } else {
      if (!dispatch) {
        dispatch = BasicBlock::Create(ctx_, "wg.dispatch", wg_, ret);
        IRBuilder<> db(dispatch);
        SwitchInst *sw = db.CreateSwitch(db.CreateLoad(i32_, next, "wg.next.id"), ret, starts.size());
        for (unsigned id = 0; id < starts.size(); ++id)
          sw->addCase(db.getInt32(id), preheaders[id]);
      }
      b.CreateBr(dispatch);
    }
  }

  // The original blocks are dead now.
  for (BasicBlock *bb : original)
    bb->dropAllReferences();
  for (BasicBlock *bb : original)
    bb->eraseFromParent();

  // Guard: nothing to run, or more work-items than the context arrays hold.
  prologue_->getTerminator()->eraseFromParent();
  BasicBlock *tooMany = BasicBlock::Create(ctx_, "wg.too_many", wg_, ret);
  BasicBlock *nonEmpty = BasicBlock::Create(ctx_, "wg.check", wg_, preheaders[0]);
  IRBuilder<> gb(prologue_);
  gb.CreateCondBr(gb.CreateICmpEQ(total, gb.getInt32(0)), ret, nonEmpty);
  gb.SetInsertPoint(nonEmpty);
  // Also rejects sizes whose product wrapped around.
  Value *bad = gb.CreateICmpUGT(total, gb.getInt32(maxThreads_));
  for (unsigned c = 0; c < 3; ++c)
    bad = gb.CreateOr(bad, gb.CreateICmpUGT(size[c], gb.getInt32(maxThreads_)));
  gb.CreateCondBr(bad, tooMany, preheaders[0]);
  gb.SetInsertPoint(tooMany);
  gb.CreateCall(Intrinsic::getDeclaration(&m_, Intrinsic::trap));
  gb.CreateUnreachable();
}

// A threadgroup runs on one OS thread: atomics on its threadgroup variables
// need no hardware atomicity (a locked RMW costs ~20 cycles; a histogram in
// threadgroup atomics is all RMWs). The plain accesses carry no parallel
// access group, so the vectorizer still sees the work-items' dependences.
void Builder::lowerThreadgroupAtomics() {
  auto inThreadgroupMemory = [&](Value *p) { return getUnderlyingObject(p, 16) == wg_->getArg(2); };
  std::vector<Instruction *> atomics;
  for (Instruction &i : instructions(*wg_))
    if (auto *rmw = dyn_cast<AtomicRMWInst>(&i); rmw && inThreadgroupMemory(rmw->getPointerOperand()))
      atomics.push_back(rmw);
    else if (auto *cx = dyn_cast<AtomicCmpXchgInst>(&i); cx && inThreadgroupMemory(cx->getPointerOperand()))
      atomics.push_back(cx);
    else if (auto *load = dyn_cast<LoadInst>(&i); load && load->isAtomic() &&
                                                   inThreadgroupMemory(load->getPointerOperand()))
      load->setAtomic(AtomicOrdering::NotAtomic);
    else if (auto *store = dyn_cast<StoreInst>(&i); store && store->isAtomic() &&
                                                     inThreadgroupMemory(store->getPointerOperand()))
      store->setAtomic(AtomicOrdering::NotAtomic);
  for (Instruction *i : atomics)
    if (auto *rmw = dyn_cast<AtomicRMWInst>(i))
      lowerAtomicRMWInst(rmw);
    else
      lowerAtomicCmpXchgInst(cast<AtomicCmpXchgInst>(i));
}

Expected<WorkGroupFunction> Builder::run() {
  if (maxThreads_ == 0)
    return fail("maxThreads must be at least 1");
  if (entry_.isDeclaration())
    return fail("kernel entry '" + entry_.getName() + "' has no body");
  Type *ptr = PointerType::get(ctx_, 0);
  if (entry_.arg_size() != 2 || entry_.getArg(0)->getType() != ptr || entry_.getArg(1)->getType() != ptr ||
      !entry_.getReturnType()->isVoidTy())
    return fail("'" + entry_.getName() + "' is not a CPU kernel entry (void (ptr args, ptr launch))");
  if (Error e = cloneAndInline())
    return std::move(e);
  if (Error e = replaceLaunchLocalIds())
    return std::move(e);
  hoistUniformPrologue();
  relocateThreadgroupGlobals();
  replaceSimdLaneIds();
  if (Error e = isolateCuts())
    return std::move(e);
  splitStridedStreams();
  if (Error e = arrayifyAllocas())
    return std::move(e);
  demoteLiveAcrossBarriers();
  formSubCfgs();
  lowerThreadgroupAtomics();

  for (Function *f : {localIdFn_, flatIdFn_})
    if (f->use_empty())
      f->eraseFromParent();
    else
      return fail("internal error: a work-item position placeholder is left");
  std::string message;
  raw_string_ostream os(message);
  if (verifyFunction(*wg_, &os))
    return fail("internal error: invalid work-group function for '" + entry_.getName() + "': " + os.str());
  return result_;
}

} // namespace

Expected<WorkGroupFunction> buildWorkGroupFunction(Module &m, StringRef entry, unsigned maxThreads) {
  Function *f = m.getFunction(entry);
  if (!f)
    return fail("no kernel entry '" + entry + "' in the module");
  const bool existed = m.getNamedValue((entry + ".msl.wg").str()) != nullptr;
  Builder b(m, *f, maxThreads);
  Expected<WorkGroupFunction> r = b.run();
  if (!r) {
    // Leave the module as it was.
    if (Function *wg = m.getFunction((entry + ".msl.wg").str()); wg && !existed)
      wg->eraseFromParent();
    for (const char *n : {kLocalIdName, kFlatIdName})
      if (Function *p = m.getFunction(n); p && p->use_empty())
        p->eraseFromParent();
  }
  return r;
}

bool isBarrierHook(llvm::StringRef name) { return name == kThreadgroupBarrier || name == kSimdgroupBarrier; }

bool isWorkGroupHook(llvm::StringRef name) {
  return isBarrierHook(name) || name == kExchange || name == kExchangeMask || name == kSimdLaneId;
}

} // namespace msl::executor
