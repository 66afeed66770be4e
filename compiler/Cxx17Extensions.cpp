#include "Cxx17Extensions.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/DiagnosticParse.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <map>

using namespace clang;

namespace msl::compiler {
namespace {

/// Reports, with Clang's own diagnostic ids, the C++17 features that
/// Clang's C++14 mode takes as extensions (see Cxx17Extensions.h), in the
/// declarations it traverses: what the user wrote, template definitions
/// included, instantiations not.
class Visitor : public RecursiveASTVisitor<Visitor> {
  using Base = RecursiveASTVisitor<Visitor>;

public:
  Visitor(ASTContext &ctx, llvm::StringRef sourceRoot)
      : sm_(ctx.getSourceManager()), lang_(ctx.getLangOpts()), diags_(ctx.getDiagnostics()),
        root_(sourceRoot) {}

  // Declarations of the stdlib (its headers, the prelude and stage macros
  // that every compile includes) are not walked.
  bool TraverseDecl(Decl *d) {
    if (d && d->getLocation().isValid() && !inRequestFile(sm_.getExpansionLoc(d->getLocation())))
      return true;
    return Base::TraverseDecl(d);
  }

  bool VisitIfStmt(IfStmt *s) {
    if (s->isConstexpr()) // at `constexpr`, the token after `if`
      report(after(s->getIfLoc()).value_or(s->getIfLoc()), diag::ext_constexpr_if);
    if (s->getInit())
      initStatement(s->getInit(), /*isSwitch=*/false);
    return true;
  }

  bool VisitSwitchStmt(SwitchStmt *s) {
    if (s->getInit())
      initStatement(s->getInit(), /*isSwitch=*/true);
    return true;
  }

  bool VisitDecompositionDecl(DecompositionDecl *d) { // at `[`
    report(d->getLocation(), diag::ext_decomp_decl);
    return true;
  }

  bool VisitCXXFoldExpr(CXXFoldExpr *e) {
    report(e->getEllipsisLoc(), diag::ext_fold_expression);
    return true;
  }

  bool VisitVarDecl(VarDecl *v) {
    if (v->isInlineSpecified()) // written `inline`, not a constexpr static member
      report(keyword(v->getBeginLoc(), v->getLocation(), "inline", true).value_or(v->getBeginLoc()),
             diag::ext_inline_variable);
    return true;
  }

  // `namespace a::b::c`: once, at the first `::` (where b's declaration begins).
  bool VisitNamespaceDecl(NamespaceDecl *n) {
    auto *outer = dyn_cast<NamespaceDecl>(n->getLexicalDeclContext());
    if (n->isNested() && !(outer && outer->isNested()))
      report(n->getBeginLoc(), diag::ext_nested_namespace_definition);
    return true;
  }

  bool VisitLambdaExpr(LambdaExpr *l) {
    for (const LambdaCapture &c : l->explicit_captures())
      if (c.getCaptureKind() == LCK_StarThis)
        report(c.getLocation(), diag::ext_star_this_lambda_capture_cxx17);
    // A lambda whose call operator is constexpr only implicitly (every
    // lambda that can be, in C++17) does not warn: `constexpr` written
    // between the introducer and the body does.
    const CXXMethodDecl *call = l->getCallOperator();
    const CompoundStmt *body = l->getCompoundStmtBody();
    if (call && call->isConstexpr() && body)
      if (auto at = keyword(l->getIntroducerRange().getEnd(), body->getLBracLoc(), "constexpr", false))
        report(*at, diag::ext_constexpr_on_lambda_cxx17);
    return true;
  }

  bool VisitStaticAssertDecl(StaticAssertDecl *d) {
    if (!d->getMessage())
      report(d->getRParenLoc(), diag::ext_cxx_static_assert_no_message);
    return true;
  }

  bool VisitTemplateTemplateParmDecl(TemplateTemplateParmDecl *p) {
    if (p->wasDeclaredWithTypename()) { // at `typename`, after the parameter's own `template <...>`
      SourceLocation close = p->getTemplateParameters()->getRAngleLoc();
      report(after(close).value_or(p->getLocation()), diag::ext_template_template_param_typename);
    }
    return true;
  }

  bool VisitUsingDecl(UsingDecl *d) {
    noteUsing(d->getUsingLoc(), d->getEndLoc());
    return true;
  }
  // `using B::f...;`: at the token after the `...`, as Clang.
  bool VisitUnresolvedUsingValueDecl(UnresolvedUsingValueDecl *d) {
    if (d->isPackExpansion())
      report(after(d->getEllipsisLoc()).value_or(d->getEllipsisLoc()), diag::ext_using_declaration_pack);
    noteUsing(d->getUsingLoc(), d->getEndLoc());
    return true;
  }
  bool VisitUnresolvedUsingTypenameDecl(UnresolvedUsingTypenameDecl *d) {
    if (d->isPackExpansion())
      report(after(d->getEllipsisLoc()).value_or(d->getEllipsisLoc()), diag::ext_using_declaration_pack);
    noteUsing(d->getUsingLoc(), d->getEndLoc());
    return true;
  }

  // C++17's standard attributes, written [[name]]: c++17-attribute-extensions,
  // off by default as in Clang.
  bool VisitDecl(Decl *d) {
    for (const Attr *a : d->attrs())
      attribute(a);
    return true;
  }
  bool VisitAttributedStmt(AttributedStmt *s) {
    for (const Attr *a : s->getAttrs())
      attribute(a);
    return true;
  }

  /// Reports the using declarations that declared several names (`using
  /// A::f, B::g;`) at their `;`, as Clang does: call once the whole
  /// declaration has been traversed.
  void finish() {
    for (const auto &[usingLoc, seen] : usings_)
      if (seen.count > 1)
        report(after(seen.lastEnd).value_or(seen.lastEnd), diag::ext_multi_using_declaration);
    usings_.clear();
  }

private:
  /// Whether `loc` is spelled in one of the request's files (the main
  /// source, its headers, -include files): what the user wrote, not the
  /// stdlib's (its macros expanded in user code included).
  bool inRequestFile(SourceLocation loc) const {
    if (loc.isInvalid())
      return false;
    OptionalFileEntryRef file = sm_.getFileEntryRefForID(sm_.getFileID(sm_.getSpellingLoc(loc)));
    return file && file->getName().starts_with(root_);
  }

  /// Reports `id` at `loc` when the user wrote the construct there.
  void report(SourceLocation loc, unsigned id) {
    if (inRequestFile(loc))
      diags_.Report(loc, id);
  }

  // At the declaration for `if (int i = f(); ...)`, else at the `;`
  // (`if (i = f(); ...)`, `if (; ...)`), where Clang's parser reports it.
  void initStatement(Stmt *init, bool isSwitch) {
    SourceLocation loc = init->getBeginLoc();
    if (auto *null = dyn_cast<NullStmt>(init))
      loc = null->getSemiLoc();
    else if (!isa<DeclStmt>(init))
      loc = after(init->getEndLoc()).value_or(loc);
    if (inRequestFile(loc))
      diags_.Report(loc, diag::ext_init_statement) << isSwitch;
  }

  void attribute(const Attr *a) {
    if (a->isImplicit() || a->isInherited() || !a->isCXX11Attribute() || a->getScopeName() || !a->getAttrName())
      return;
    llvm::StringRef name = a->getAttrName()->getName();
    if (name.size() > 4 && name.starts_with("__") && name.ends_with("__"))
      name = name.drop_front(2).drop_back(2);
    if ((name == "nodiscard" || name == "maybe_unused" || name == "fallthrough") && inRequestFile(a->getLocation()))
      diags_.Report(a->getLocation(), diag::ext_cxx17_attr) << a->getAttrName();
  }

  void noteUsing(SourceLocation usingLoc, SourceLocation end) {
    if (usingLoc.isInvalid())
      return;
    Using &u = usings_[usingLoc.getRawEncoding()];
    ++u.count;
    if (u.lastEnd.isInvalid() || sm_.isBeforeInTranslationUnit(u.lastEnd, end))
      u.lastEnd = end;
  }

  /// The token after the one at `loc`, when both are in a file (not in a
  /// macro expansion).
  std::optional<SourceLocation> after(SourceLocation loc) {
    if (loc.isInvalid() || loc.isMacroID())
      return std::nullopt;
    std::optional<Token> next = Lexer::findNextToken(loc, sm_, lang_);
    if (!next || next->getLocation().isMacroID())
      return std::nullopt;
    return next->getLocation();
  }

  /// Where the keyword `word` is written from the token at `from` (or
  /// after it, unless `includeFrom`) up to the one at `to` (a file range,
  /// or one inside a single macro's spelling), outside any (), [] and {} (a
  /// nested lambda's own); nullopt if it is not.
  std::optional<SourceLocation> keyword(SourceLocation from, SourceLocation to, llvm::StringRef word,
                                        bool includeFrom) {
    if (from.isInvalid() || to.isInvalid())
      return std::nullopt;
    from = sm_.getSpellingLoc(from);
    to = sm_.getSpellingLoc(to);
    auto [fileId, begin] = sm_.getDecomposedLoc(from);
    auto [toFileId, end] = sm_.getDecomposedLoc(to);
    if (fileId != toFileId || begin > end)
      return std::nullopt;
    bool invalid = false;
    llvm::StringRef text = sm_.getBufferData(fileId, &invalid);
    if (invalid)
      return std::nullopt;
    Lexer lexer(sm_.getLocForStartOfFile(fileId), lang_, text.begin(), text.begin() + begin, text.end());
    int depth = 0;
    Token tok;
    for (bool first = true;; first = false) {
      lexer.LexFromRawLexer(tok);
      if (tok.is(tok::eof) || sm_.getFileOffset(tok.getLocation()) >= end)
        break;
      if (first && !includeFrom)
        continue;
      if (tok.isOneOf(tok::l_paren, tok::l_square, tok::l_brace))
        ++depth;
      else if (tok.isOneOf(tok::r_paren, tok::r_square, tok::r_brace))
        --depth;
      else if (depth == 0 && tok.is(tok::raw_identifier) && tok.getRawIdentifier() == word)
        return tok.getLocation();
    }
    return std::nullopt;
  }

  struct Using {
    int count = 0;
    SourceLocation lastEnd;
  };

  SourceManager &sm_;
  const LangOptions &lang_;
  DiagnosticsEngine &diags_;
  llvm::StringRef root_; // where the request's files are mounted
  std::map<SourceLocation::UIntTy, Using> usings_; // by the `using` keyword's location
};

/// A template instantiation (Sema hands instantiated functions and
/// variables to the consumer too): its pattern has been reported.
bool isInstantiation(const Decl *d) {
  if (const auto *f = dyn_cast<FunctionDecl>(d))
    return isTemplateInstantiation(f->getTemplateSpecializationKind());
  if (const auto *v = dyn_cast<VarDecl>(d))
    return isTemplateInstantiation(v->getTemplateSpecializationKind());
  if (const auto *r = dyn_cast<CXXRecordDecl>(d))
    return isTemplateInstantiation(r->getTemplateSpecializationKind());
  return false;
}

class Cxx17Extensions : public ASTConsumer {
public:
  explicit Cxx17Extensions(std::string sourceRoot) : root_(std::move(sourceRoot)) {}
  void Initialize(ASTContext &ctx) override { ctx_ = &ctx; }

  // Each declaration once it is complete, as the parser hands it over.
  bool HandleTopLevelDecl(DeclGroupRef group) override {
    Visitor visitor(*ctx_, root_);
    for (Decl *d : group)
      if (!d->isFromASTFile() && !isInstantiation(d))
        visitor.TraverseDecl(d);
    visitor.finish();
    return true;
  }

private:
  ASTContext *ctx_ = nullptr;
  std::string root_;
};

} // namespace

std::unique_ptr<ASTConsumer> createCxx17ExtensionsConsumer(std::string sourceRoot) {
  return std::make_unique<Cxx17Extensions>(std::move(sourceRoot));
}

} // namespace msl::compiler
