#include "InlineAsm.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/Diagnostic.h"
#include "llvm/ADT/DenseSet.h"

using namespace clang;

namespace msl::compiler {
namespace {

class Visitor : public RecursiveASTVisitor<Visitor> {
public:
  Visitor(DiagnosticsEngine &diags, llvm::DenseSet<SourceLocation> &reported)
      : diags_(diags), reported_(reported),
        id_(diags.getCustomDiagID(DiagnosticsEngine::Error, "inline assembly is not supported in Metal")) {}

  // Template definitions are walked, lambdas' bodies too (by default).
  bool shouldVisitTemplateInstantiations() const { return false; }

  bool VisitAsmStmt(AsmStmt *s) { // GCCAsmStmt and MSAsmStmt
    report(s->getAsmLoc());
    return true;
  }
  bool VisitFileScopeAsmDecl(FileScopeAsmDecl *d) {
    report(d->getAsmLoc());
    return true;
  }

private:
  // Sema hands each instantiated function over as a top-level declaration
  // too: an asm of a template is reported once, at its definition.
  void report(SourceLocation loc) {
    if (reported_.insert(loc).second)
      diags_.Report(loc, id_);
  }

  DiagnosticsEngine &diags_;
  llvm::DenseSet<SourceLocation> &reported_;
  unsigned id_;
};

// Every top-level declaration as it is parsed (before code generation, which
// then sees the error and emits nothing). Declarations of a precompiled
// stdlib are not handed over again; the stdlib has no asm statements.
class InlineAsm : public ASTConsumer {
public:
  void Initialize(ASTContext &ctx) override { ctx_ = &ctx; }
  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl *d : group)
      Visitor(ctx_->getDiagnostics(), reported_).TraverseDecl(d);
    return true;
  }

private:
  ASTContext *ctx_ = nullptr;
  llvm::DenseSet<SourceLocation> reported_;
};

} // namespace

std::unique_ptr<ASTConsumer> createInlineAsmConsumer() { return std::make_unique<InlineAsm>(); }

} // namespace msl::compiler
