#include "ConstantCopies.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/Sema/Sema.h"
#include "clang/Sema/SemaConsumer.h"

using namespace clang;

namespace msl::compiler {
namespace {

bool takesConstant(const CXXMethodDecl *m) {
  return m->getNumParams() == 1 &&
         m->getParamDecl(0)->getType()->getPointeeType().getAddressSpace() ==
             LangAS::opencl_constant;
}

class ConstantCopies : public SemaConsumer {
public:
  void InitializeSema(Sema &s) override { sema_ = &s; }
  void ForgetSema() override { sema_ = nullptr; }

  void HandleTagDeclDefinition(TagDecl *tag) override {
    auto *rd = dyn_cast<CXXRecordDecl>(tag);
    if (!sema_ || !rd || !rd->isCompleteDefinition() || rd->isDependentContext() ||
        rd->isInvalidDecl() || rd->isLambda())
      return;
    // Declare the implicit members now; otherwise Sema would take the twin
    // for the copy constructor already declared and never declare its own.
    sema_->ForceDeclarationOfImplicitMembers(rd);
    const CXXConstructorDecl *copy = nullptr;
    const CXXMethodDecl *assign = nullptr;
    bool haveConstantCopy = false, haveConstantAssign = false;
    for (const CXXConstructorDecl *c : rd->ctors()) {
      if (!c->isCopyConstructor())
        continue;
      if (takesConstant(c))
        haveConstantCopy = true;
      else
        copy = c;
    }
    for (const CXXMethodDecl *m : rd->methods()) {
      if (!m->isCopyAssignmentOperator())
        continue;
      if (takesConstant(m))
        haveConstantAssign = true;
      else
        assign = m;
    }
    if (copy && !haveConstantCopy && mirrorable(copy))
      addTwin(rd, copy, /*constructor=*/true);
    if (assign && !haveConstantAssign && mirrorable(assign))
      addTwin(rd, assign, /*constructor=*/false);
  }

private:
  static bool mirrorable(const CXXMethodDecl *m) {
    return m->isDefaulted() && !m->isDeleted() && m->isTrivial();
  }

  // `const __constant T&`.
  QualType constantReferenceTo(CXXRecordDecl *rd) {
    ASTContext &ctx = sema_->Context;
    QualType t = ctx.getAddrSpaceQualType(ctx.getTypeDeclType(rd).withConst(), LangAS::opencl_constant);
    return ctx.getLValueReferenceType(t);
  }

  void addTwin(CXXRecordDecl *rd, const CXXMethodDecl *original, bool constructor) {
    ASTContext &ctx = sema_->Context;
    SourceLocation loc = rd->getLocation();
    QualType param = constantReferenceTo(rd);
    FunctionProtoType::ExtProtoInfo info;
    info.ExceptionSpec.Type = EST_BasicNoexcept;
    info.ExtInfo = info.ExtInfo.withCallingConv(ctx.getDefaultCallingConvention(false, true));
    info.TypeQuals.addAddressSpace(sema_->getDefaultCXXMethodAddrSpace());
    ConstexprSpecKind constexprKind =
        original->isConstexpr() ? ConstexprSpecKind::Constexpr : ConstexprSpecKind::Unspecified;
    CXXMethodDecl *twin;
    if (constructor) {
      DeclarationName name =
          ctx.DeclarationNames.getCXXConstructorName(ctx.getCanonicalType(ctx.getTypeDeclType(rd)));
      twin = CXXConstructorDecl::Create(ctx, rd, loc, DeclarationNameInfo(name, loc), QualType(),
                                        nullptr, ExplicitSpecifier(), false, /*isInline=*/true,
                                        /*isImplicitlyDeclared=*/true, constexprKind);
      twin->setType(ctx.getFunctionType(ctx.VoidTy, {param}, info));
    } else {
      DeclarationName name = ctx.DeclarationNames.getCXXOperatorName(OO_Equal);
      twin = CXXMethodDecl::Create(ctx, rd, loc, DeclarationNameInfo(name, loc), QualType(), nullptr,
                                   SC_None, false, /*isInline=*/true, constexprKind, loc);
      twin->setImplicit();
      twin->setType(ctx.getFunctionType(original->getReturnType(), {param}, info));
    }
    twin->setAccess(AS_public);
    twin->setDefaulted();
    twin->setParams(ParmVarDecl::Create(ctx, twin, loc, loc, nullptr, param, nullptr, SC_None, nullptr));
    twin->setTrivial(original->isTrivial());
    twin->setTrivialForCall(original->isTrivialForCall());
    rd->addDecl(twin);
  }

  Sema *sema_ = nullptr;
};

} // namespace

std::unique_ptr<ASTConsumer> createConstantCopiesConsumer() {
  return std::make_unique<ConstantCopies>();
}

} // namespace msl::compiler
