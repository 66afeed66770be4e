//===- NvptxTuning.cpp - what nvcc's NVVM does that LLVM's NVPTX path does not -===//

#include "NvptxTuning.h"

#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Utils/LoopUtils.h"

using namespace llvm;

namespace msl::compiler {

void alignSharedMemory(Module &m) {
  constexpr unsigned kSharedAddressSpace = 3; // NVPTX's .shared
  for (GlobalVariable &g : m.globals())
    if (g.getAddressSpace() == kSharedAddressSpace && g.getAlign().valueOrOne() < Align(16))
      g.setAlignment(Align(16));
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
