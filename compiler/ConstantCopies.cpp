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
    widenThreadQualifiers(rd);
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
  // Metal's temporaries live in thread memory; Clang's OpenCL ones have no
  // address space, so a constructor qualified `thread` cannot build one
  // (`spvStorageMatrix(m)` in spirv-cross's storage matrices) and a
  // `const thread T&` parameter cannot bind one (its `m = T(...)`). Such
  // constructors, and such parameters of the class's member functions, are
  // widened to the generic address space, which includes thread memory (and
  // is the same memory as thread in the IR of both targets). Skipped where
  // the widened member would repeat one the class already has.
  void widenThreadQualifiers(CXXRecordDecl *rd) {
    ASTContext &ctx = sema_->Context;
    for (CXXMethodDecl *m : rd->methods()) {
      const auto *type = m->getType()->getAs<FunctionProtoType>();
      if (!type || m->isImplicit())
        continue;
      FunctionProtoType::ExtProtoInfo info = type->getExtProtoInfo();
      std::vector<QualType> params(type->param_types().begin(), type->param_types().end());
      bool changed = false;
      if (isa<CXXConstructorDecl>(m) && info.TypeQuals.getAddressSpace() == LangAS::opencl_private) {
        info.TypeQuals.removeAddressSpace();
        info.TypeQuals.addAddressSpace(LangAS::opencl_generic);
        changed = true;
      }
      for (QualType &p : params)
        if (const auto *ref = p->getAs<LValueReferenceType>()) {
          QualType pointee = ref->getPointeeType();
          if (pointee.isConstQualified() && pointee.getAddressSpace() == LangAS::opencl_private) {
            p = ctx.getLValueReferenceType(
                ctx.getAddrSpaceQualType(ctx.removeAddrSpaceQualType(pointee), LangAS::opencl_generic));
            changed = true;
          }
        }
      if (!changed)
        continue;
      QualType widened = ctx.getFunctionType(type->getReturnType(), params, info);
      bool repeats = false;
      for (const CXXMethodDecl *other : rd->methods())
        repeats |= other != m && other->getDeclName() == m->getDeclName() &&
                   ctx.hasSameType(other->getType(), widened);
      if (repeats)
        continue;
      m->setType(widened);
      for (unsigned i = 0; i < m->getNumParams(); ++i)
        m->getParamDecl(i)->setType(params[i]);
    }
  }

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
