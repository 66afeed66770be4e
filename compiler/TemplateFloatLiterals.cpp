#include "TemplateFloatLiterals.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"

using namespace clang;

namespace msl::compiler {
namespace {

// Finds `(float)<double literal>`, the form -cl-single-precision-constant
// gives an unsuffixed literal, inside template definitions (instantiations
// are not traversed) and makes the literal itself float.
class Visitor : public RecursiveASTVisitor<Visitor> {
  using Base = RecursiveASTVisitor<Visitor>;

public:
  explicit Visitor(ASTContext &ctx) : ctx_(ctx) {}

  bool VisitImplicitCastExpr(ImplicitCastExpr *cast) {
    auto *lit = dyn_cast<FloatingLiteral>(cast->getSubExpr());
    if (!templates_ || !lit || cast->getCastKind() != CK_FloatingCast ||
        !cast->getType()->isSpecificBuiltinType(BuiltinType::Float) ||
        !lit->getType()->isSpecificBuiltinType(BuiltinType::Double))
      return true;
    bool losesInfo = false;
    llvm::APFloat value = lit->getValue();
    value.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    lit->setSemantics(llvm::APFloat::IEEEsingle());
    lit->setValue(ctx_, value);
    lit->setType(ctx_.FloatTy);
    cast->setCastKind(CK_NoOp); // now float to float
    return true;
  }

  // Only template definitions: elsewhere the conversion stays and is right.
#define MSL_TEMPLATE_DEFINITION(KIND)                                          \
  bool Traverse##KIND(KIND *d) {                                               \
    Enter e(templates_);                                                       \
    return Base::Traverse##KIND(d);                                            \
  }
  MSL_TEMPLATE_DEFINITION(FunctionTemplateDecl)
  MSL_TEMPLATE_DEFINITION(ClassTemplateDecl)
  MSL_TEMPLATE_DEFINITION(ClassTemplatePartialSpecializationDecl)
  MSL_TEMPLATE_DEFINITION(VarTemplateDecl)
#undef MSL_TEMPLATE_DEFINITION

private:
  struct Enter {
    explicit Enter(int &depth) : depth_(depth) { ++depth_; }
    ~Enter() { --depth_; }
    int &depth_;
  };
  ASTContext &ctx_;
  int templates_ = 0; // template definitions entered
};

class TemplateFloatLiterals : public ASTConsumer {
public:
  void Initialize(ASTContext &ctx) override { ctx_ = &ctx; }
  // A template is handed over once its definition is complete, before
  // anything is instantiated from it (instantiation of function bodies
  // waits for the end of the file).
  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl *d : group)
      visit(d);
    return true;
  }

private:
  // Templates, also inside namespaces, extern "C" blocks and classes; the
  // bodies of ordinary functions are not walked.
  void visit(Decl *d) {
    if (isa<FunctionTemplateDecl, ClassTemplateDecl, ClassTemplatePartialSpecializationDecl,
            VarTemplateDecl>(d))
      Visitor(*ctx_).TraverseDecl(d);
    else if (auto *dc = dyn_cast<DeclContext>(d); dc && isa<NamespaceDecl, LinkageSpecDecl, CXXRecordDecl>(d))
      for (Decl *inner : dc->decls())
        visit(inner);
  }

  ASTContext *ctx_ = nullptr;
};

} // namespace

std::unique_ptr<ASTConsumer> createTemplateFloatLiteralsConsumer() {
  return std::make_unique<TemplateFloatLiterals>();
}

} // namespace msl::compiler
