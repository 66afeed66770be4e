#include "ConstantCopies.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/Sema/Sema.h"
#include "clang/Sema/SemaConsumer.h"

#include <algorithm>

using namespace clang;

namespace msl::compiler {
namespace {

// The sources a copy twin is added for: `constant` memory, and volatile
// generic memory (Metal's object_data and ray_data, volatile here: see the
// prelude), so that a struct is copied out of a mesh payload as in Metal.
struct Source {
  LangAS addressSpace;
  bool isVolatile;
};
constexpr Source kSources[] = {{LangAS::opencl_constant, false}, {LangAS::opencl_generic, true}};

bool takes(const CXXMethodDecl *m, Source source) {
  if (m->getNumParams() != 1)
    return false;
  QualType pointee = m->getParamDecl(0)->getType()->getPointeeType();
  return pointee.getAddressSpace() == source.addressSpace &&
         pointee.isVolatileQualified() == source.isVolatile;
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
    for (const CXXConstructorDecl *c : rd->ctors())
      if (c->isCopyConstructor() && !copy &&
          std::none_of(std::begin(kSources), std::end(kSources), [&](Source k) { return takes(c, k); }))
        copy = c;
    for (const CXXMethodDecl *m : rd->methods())
      if (m->isCopyAssignmentOperator() && !assign &&
          std::none_of(std::begin(kSources), std::end(kSources), [&](Source k) { return takes(m, k); }))
        assign = m;
    for (Source source : kSources) {
      bool hasCopy = std::any_of(rd->ctor_begin(), rd->ctor_end(), [&](const CXXConstructorDecl *c) {
        return c->isCopyConstructor() && takes(c, source);
      });
      bool hasAssign = std::any_of(rd->method_begin(), rd->method_end(), [&](const CXXMethodDecl *m) {
        return m->isCopyAssignmentOperator() && takes(m, source);
      });
      if (copy && !hasCopy && mirrorable(copy))
        addTwin(rd, copy, /*constructor=*/true, source);
      if (assign && !hasAssign && mirrorable(assign))
        addTwin(rd, assign, /*constructor=*/false, source);
    }
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
      if (!type || m->isImplicit() || !definedInClass(m))
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

  // Defined (or defaulted) inside the class, also for a class template's
  // instantiation: a member defined outside must keep the type its
  // out-of-line definition spells.
  static bool definedInClass(const CXXMethodDecl *m) {
    const FunctionDecl *pattern = m->getTemplateInstantiationPattern();
    const FunctionDecl *d = pattern ? pattern : m;
    return d->isDefaulted() || d->doesThisDeclarationHaveABody();
  }

  static bool mirrorable(const CXXMethodDecl *m) {
    return m->isDefaulted() && !m->isDeleted() && m->isTrivial();
  }

  // `const __constant T&`, `const volatile __generic T&`.
  QualType referenceTo(CXXRecordDecl *rd, Source source) {
    ASTContext &ctx = sema_->Context;
    QualType t = ctx.getTypeDeclType(rd).withConst();
    if (source.isVolatile)
      t = t.withVolatile();
    return ctx.getLValueReferenceType(ctx.getAddrSpaceQualType(t, source.addressSpace));
  }

  void addTwin(CXXRecordDecl *rd, const CXXMethodDecl *original, bool constructor, Source source) {
    ASTContext &ctx = sema_->Context;
    SourceLocation loc = rd->getLocation();
    QualType param = referenceTo(rd, source);
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
