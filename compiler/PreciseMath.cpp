#include "PreciseMath.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <vector>

using namespace llvm;

namespace msl::compiler {
namespace {

// Itanium-mangled names: metal::precise::... ("5metal7precise", which also
// names their lambdas) and __msl_libm::... ("10__msl_libm"). What they call
// under other names (metal::detail helpers instantiated with a precise
// lambda) is inlined into them first.
bool isPreciseName(StringRef name) {
  return name.contains("5metal7precise") || name.contains("10__msl_libm");
}

// Inlines every call to a function with a body (except noinline ones: the
// public __msl_libm kernels, made precise on their own), also those the
// inlined code brings in. The stdlib's helpers are small; the bound keeps a
// pathological (recursive) body from growing without end.
void inlineCallees(Function &f) {
  for (int pass = 0; pass < 64; ++pass) {
    std::vector<CallBase *> calls;
    for (Instruction &i : instructions(f))
      if (auto *call = dyn_cast<CallBase>(&i))
        if (Function *callee = call->getCalledFunction(); callee && !callee->isDeclaration() &&
                                                          callee != &f && !callee->hasFnAttribute(Attribute::NoInline))
          calls.push_back(call);
    if (calls.empty())
      return;
    for (CallBase *call : calls) {
      InlineFunctionInfo info;
      InlineFunction(*call, info);
    }
  }
}

void dropNoFPClass(CallBase &call) {
  call.removeRetAttr(Attribute::NoFPClass);
  for (unsigned i = 0; i < call.arg_size(); ++i)
    call.removeParamAttr(i, Attribute::NoFPClass);
}

} // namespace

void makePreciseMathPrecise(Module &m) {
  std::vector<Function *> precise;
  for (Function &f : m)
    if (!f.isDeclaration() && isPreciseName(f.getName()))
      precise.push_back(&f);
  for (Function *f : precise) {
    inlineCallees(*f);
    for (Instruction &i : instructions(*f)) {
      if (isa<FPMathOperator>(&i)) {
        i.copyFastMathFlags(FastMathFlags());
        i.setMetadata(LLVMContext::MD_fpmath, nullptr); // OpenCL's 2.5 ulp division
      }
      if (auto *call = dyn_cast<CallBase>(&i))
        dropNoFPClass(*call);
    }
    f->removeRetAttr(Attribute::NoFPClass);
    for (unsigned i = 0; i < f->arg_size(); ++i)
      f->removeParamAttr(i, Attribute::NoFPClass);
    for (const char *attr : {"unsafe-fp-math", "no-nans-fp-math", "no-infs-fp-math",
                             "no-signed-zeros-fp-math", "approx-func-fp-math"})
      f->addFnAttr(attr, "false");
    for (User *u : f->users())
      if (auto *call = dyn_cast<CallBase>(u))
        dropNoFPClass(*call);
  }
}

void correctlyRoundHalfDivision(Module &m) {
  std::vector<BinaryOperator *> divisions;
  for (Function &f : m) {
    if (f.isDeclaration())
      continue;
    bool unsafeFunction = f.getFnAttribute("unsafe-fp-math").getValueAsString() == "true";
    for (Instruction &i : instructions(f))
      if (auto *div = dyn_cast<BinaryOperator>(&i); div && div->getOpcode() == Instruction::FDiv &&
                                                    div->getType()->getScalarType()->isHalfTy() &&
                                                    (unsafeFunction || div->hasAllowReciprocal() || div->hasApproxFunc()))
        divisions.push_back(div);
  }
  for (BinaryOperator *div : divisions) {
    IRBuilder<> b(div);
    Type *floatTy = b.getFloatTy();
    Function *divRn = Intrinsic::getDeclaration(&m, Intrinsic::nvvm_div_rn_f);
    auto quotient = [&](Value *x, Value *y) -> Value * {
      return b.CreateFPTrunc(b.CreateCall(divRn, {b.CreateFPExt(x, floatTy), b.CreateFPExt(y, floatTy)}),
                             b.getHalfTy());
    };
    Value *result;
    if (auto *vt = dyn_cast<FixedVectorType>(div->getType())) {
      result = PoisonValue::get(vt);
      for (unsigned lane = 0; lane < vt->getNumElements(); ++lane)
        result = b.CreateInsertElement(
            result, quotient(b.CreateExtractElement(div->getOperand(0), lane), b.CreateExtractElement(div->getOperand(1), lane)),
            lane);
    } else {
      result = quotient(div->getOperand(0), div->getOperand(1));
    }
    result->takeName(div);
    div->replaceAllUsesWith(result);
    div->eraseFromParent();
  }
}

} // namespace msl::compiler
