//===- NvptxTuning.cpp - what nvcc's NVVM does that LLVM's NVPTX path does not -===//

#include "NvptxTuning.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/ConstantRange.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Utils/Local.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

using namespace llvm;

namespace msl::compiler {

void alignSharedMemory(Module &m) {
  constexpr unsigned kSharedAddressSpace = 3; // NVPTX's .shared
  for (GlobalVariable &g : m.globals())
    if (g.getAddressSpace() == kSharedAddressSpace && g.getAlign().valueOrOne() < Align(16))
      g.setAlignment(Align(16));
}

void readConstantReferencesOnce(Module &m) {
  for (Function &f : m) {
    // Kernel entries only: on NVPTX every other function is internal
    // (lowerEntryPoints), and only an entry's parameters carry the
    // dispatch-wide facts (bound, read-only for the whole kernel).
    if (f.isDeclaration() || f.hasLocalLinkage())
      continue;
    for (Argument &arg : f.args()) {
      if (!arg.getType()->isPointerTy() || !arg.hasNoAliasAttr() || !arg.onlyReadsMemory() ||
          arg.getDereferenceableBytes() == 0)
        continue;
      SmallVector<LoadInst *, 4> loads;
      Type *type = nullptr;
      bool whole = true; // every use a plain load of the same type from the argument itself
      for (User *u : arg.users()) {
        auto *load = dyn_cast<LoadInst>(u);
        if (!load || !load->isSimple() || (type && load->getType() != type)) {
          whole = false;
          break;
        }
        type = load->getType();
        loads.push_back(load);
      }
      if (!whole || loads.size() < 2 ||
          m.getDataLayout().getTypeStoreSize(type).getFixedValue() > arg.getDereferenceableBytes())
        continue;
      Align align = loads.front()->getAlign();
      for (LoadInst *load : loads)
        align = std::min(align, load->getAlign());
      IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
      LoadInst *once = b.CreateAlignedLoad(type, &arg, align, arg.getName() + ".once");
      once->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(m.getContext(), {}));
      for (LoadInst *load : loads) {
        load->replaceAllUsesWith(once);
        load->eraseFromParent();
      }
    }
  }
}

void compareLoopCountersAfterTheirStep(Module &m) {
  const DataLayout &dl = m.getDataLayout();
  for (Function &f : m)
    for (BasicBlock &latch : f) {
      // `latch: step = counter + S; c = counter < C; br c, header, exit`,
      // with counter = phi [start, preheader], [step, latch] in header.
      auto *br = dyn_cast<BranchInst>(latch.getTerminator());
      auto *cmp = br && br->isConditional() ? dyn_cast<ICmpInst>(br->getCondition()) : nullptr;
      if (!cmp || cmp->getParent() != &latch)
        continue;
      auto *counter = dyn_cast<PHINode>(cmp->getOperand(0));
      auto *bound = dyn_cast<ConstantInt>(cmp->getOperand(1));
      const ICmpInst::Predicate pred = cmp->getPredicate();
      const bool isUnsigned = pred == ICmpInst::ICMP_ULT || pred == ICmpInst::ICMP_ULE;
      const bool isSigned = pred == ICmpInst::ICMP_SLT || pred == ICmpInst::ICMP_SLE;
      if (!counter || !bound || (!isUnsigned && !isSigned) || counter->getNumIncomingValues() != 2 ||
          br->getSuccessor(0) != counter->getParent())
        continue;
      const int fromLatch = counter->getBasicBlockIndex(&latch);
      if (fromLatch < 0)
        continue;
      auto *step = dyn_cast<BinaryOperator>(counter->getIncomingValue(unsigned(fromLatch)));
      Value *start = counter->getIncomingValue(unsigned(1 - fromLatch));
      BasicBlock *preheader = counter->getIncomingBlock(unsigned(1 - fromLatch));
      if (!step || step->getOpcode() != Instruction::Add || step->getOperand(0) != counter ||
          step->getParent() != &latch || !step->comesBefore(cmp))
        continue;
      auto *by = dyn_cast<ConstantInt>(step->getOperand(1));
      if (!by || !by->getValue().isStrictlyPositive())
        continue;
      // The step never wraps, whatever its flags say: each time the latch
      // runs, counter <= C + S (the first time, start <= C + S, proven
      // below; later, counter = previous + S with previous <= C, as the
      // loop went on), so counter + S <= C + 2S, which fits. Then
      // counter < C and counter + S < C + S agree (<= alike).
      bool overflow = false;
      auto plusStep = [&](const APInt &v) {
        bool o = false;
        APInt sum = isUnsigned ? v.uadd_ov(by->getValue(), o) : v.sadd_ov(by->getValue(), o);
        overflow |= o;
        return sum;
      };
      const APInt once = plusStep(bound->getValue());
      plusStep(once); // bound + 2 steps must fit too
      if (overflow)
        continue;
      const ICmpInst::Predicate atMost = isUnsigned ? ICmpInst::ICMP_ULE : ICmpInst::ICMP_SLE;
      bool startFits = false;
      if (auto *k = dyn_cast<ConstantInt>(start))
        startFits = isUnsigned ? k->getValue().ule(once) : k->getValue().sle(once);
      if (!startFits) {
        ConstantRange range = computeConstantRange(start, isSigned, true, nullptr, preheader->getTerminator());
        startFits = isUnsigned ? range.getUnsignedMax().ule(once) : range.getSignedMax().sle(once);
      }
      if (!startFits) {
        auto implied = isImpliedByDomCondition(atMost, start, ConstantInt::get(bound->getType(), once),
                                               preheader->getTerminator(), dl);
        startFits = implied && *implied;
      }
      if (!startFits)
        continue;
      cmp->setOperand(0, step);
      cmp->setOperand(1, ConstantInt::get(bound->getType(), once));
    }
}

void relaxByteVectorAlignment(Module &m) {
  constexpr unsigned kGlobalAddressSpace = 1;   // NVPTX's .global: device and constant buffers
  constexpr unsigned kConstantAddressSpace = 4; // NVPTX's .const
  const DataLayout &dl = m.getDataLayout();
  for (Function &f : m)
    for (Instruction &i : instructions(f)) {
      Value *address;
      Type *type;
      if (auto *load = dyn_cast<LoadInst>(&i)) {
        address = load->getPointerOperand();
        type = load->getType();
      } else if (auto *store = dyn_cast<StoreInst>(&i)) {
        address = store->getPointerOperand();
        type = store->getValueOperand()->getType();
      } else {
        continue;
      }
      auto *vector = dyn_cast<FixedVectorType>(type);
      unsigned space = address->getType()->getPointerAddressSpace();
      if (!vector || !vector->getElementType()->isIntegerTy(8) ||
          (space != kGlobalAddressSpace && space != kConstantAddressSpace))
        continue;
      Align known = getKnownAlignment(address, dl, &i);
      if (auto *load = dyn_cast<LoadInst>(&i); load && known < load->getAlign())
        load->setAlignment(known);
      else if (auto *store = dyn_cast<StoreInst>(&i); store && known < store->getAlign())
        store->setAlignment(known);
    }
}

namespace {

/// Marks small constant-trip-count inner loops for full unrolling (see
/// registerNvptxFullUnroll).
struct NvptxFullUnrollHint : PassInfoMixin<NvptxFullUnrollHint> {
  PreservedAnalyses run(Loop &loop, LoopAnalysisManager &, LoopStandardAnalysisResults &ar, LPMUpdater &) {
    if (!loop.isInnermost() || hasUnrollTransformation(&loop) != TM_Unspecified)
      return PreservedAnalyses::all();
    unsigned trips = ar.SE.getSmallConstantTripCount(&loop);
    if (trips < 2 || trips > kNvptxFullUnrollMaxTrips)
      return PreservedAnalyses::all();
    uint64_t size = 0;
    for (BasicBlock *block : loop.blocks())
      size += block->sizeWithoutDebug();
    if (size * trips > kNvptxFullUnrollMaxSize)
      return PreservedAnalyses::all();
    addStringMetadataToLoop(&loop, "llvm.loop.unroll.full", 1);
    return PreservedAnalyses::all(); // metadata only
  }
};

} // namespace

void registerNvptxFullUnroll(PassBuilder &pb) {
  pb.registerLateLoopOptimizationsEPCallback(
      [](LoopPassManager &lpm, OptimizationLevel) { lpm.addPass(NvptxFullUnrollHint()); });
}

} // namespace msl::compiler
