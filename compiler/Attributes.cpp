#include "Attributes.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/Basic/ParsedAttrInfo.h"
#include "clang/Sema/ParsedAttr.h"
#include "clang/Sema/Sema.h"

#include <array>

using namespace clang;

namespace msl::compiler {
namespace {

constexpr const char *kAnnotationPrefix = "msl:";

// MSL 2.0, "Attributes for kernel function input arguments".
constexpr std::array<const char *, 20> kComputeBuiltins{
    "thread_position_in_grid",        "thread_position_in_threadgroup",
    "thread_index_in_threadgroup",    "threadgroup_position_in_grid",
    "threads_per_grid",               "threads_per_threadgroup",
    "threadgroups_per_grid",          "dispatch_threads_per_threadgroup",
    "grid_origin",                    "grid_size",
    "thread_execution_width",         "threads_per_simdgroup",
    "thread_index_in_simdgroup",      "simdgroup_index_in_threadgroup",
    "simdgroups_per_threadgroup",     "dispatch_simdgroups_per_threadgroup",
    "thread_index_in_quadgroup",      "quadgroup_index_in_threadgroup",
    "quadgroups_per_threadgroup",     "dispatch_quadgroups_per_threadgroup",
};

// Attributes that carry a binding index. `threadgroup` reaches Clang as
// `__local`, because the address-space macro expands inside [[...]] too.
constexpr std::array<const char *, 4> kIndexed{"buffer", "threadgroup", "texture", "sampler"};

// Largest index of each binding kind: Metal's argument tables have 31
// buffer and threadgroup entries, 128 textures and 16 samplers.
unsigned maxIndex(llvm::StringRef name) {
  if (name == "texture")
    return 127;
  if (name == "sampler")
    return 15;
  return 30;
}

constexpr auto makeSpellings() {
  std::array<ParsedAttrInfo::Spelling, kComputeBuiltins.size() + kIndexed.size() + 1> s{};
  size_t i = 0;
  for (const char *n : kComputeBuiltins)
    s[i++] = {AttributeCommonInfo::AS_CXX11, n};
  for (const char *n : kIndexed)
    s[i++] = {AttributeCommonInfo::AS_CXX11, n};
  s[i++] = {AttributeCommonInfo::AS_CXX11, "__local"};
  return s;
}
constexpr auto kSpellings = makeSpellings();

bool isIndexed(llvm::StringRef name) {
  for (const char *n : kIndexed)
    if (name == n)
      return true;
  return false;
}

struct MslAttrInfo : public ParsedAttrInfo {
  MslAttrInfo() {
    OptArgs = 1;
    Spellings = kSpellings;
  }

  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &A, const Decl *D) const override {
    if (isa<ParmVarDecl>(D))
      return true;
    S.Diag(A.getLoc(), S.getDiagnostics().getCustomDiagID(
                           DiagnosticsEngine::Error,
                           "attribute '%0' applies only to function arguments"))
        << name(A);
    return false;
  }

  static std::string name(const ParsedAttr &A) {
    llvm::StringRef n = A.getAttrName()->getName();
    return n == "__local" ? "threadgroup" : n.str();
  }

  AttrHandling handleDeclAttribute(Sema &S, Decl *D, const ParsedAttr &A) const override {
    auto &diags = S.getDiagnostics();
    std::string n = name(A);
    std::string annotation = kAnnotationPrefix + n;
    if (isIndexed(n)) {
      std::optional<llvm::APSInt> value;
      if (A.getNumArgs() == 1 && A.isArgExpr(0) && A.getArgAsExpr(0))
        value = A.getArgAsExpr(0)->getIntegerConstantExpr(S.Context);
      if (!value || value->isNegative() || value->getActiveBits() > 32 ||
          value->getZExtValue() > maxIndex(n)) {
        S.Diag(A.getLoc(), diags.getCustomDiagID(
                               DiagnosticsEngine::Error,
                               "attribute '%0' needs an integer constant index from 0 to %1"))
            << n << maxIndex(n);
        return AttributeNotApplied;
      }
      annotation += ":" + std::to_string(value->getZExtValue());
    } else if (A.getNumArgs() != 0) {
      S.Diag(A.getLoc(), diags.getCustomDiagID(DiagnosticsEngine::Error,
                                               "attribute '%0' takes no arguments"))
          << n;
      return AttributeNotApplied;
    }
    D->addAttr(AnnotateAttr::CreateImplicit(S.Context, annotation, nullptr, 0, A.getRange()));
    return AttributeApplied;
  }
};

ParsedAttrInfoRegistry::Add<MslAttrInfo> gRegistration("msl-attributes",
                                                       "Metal Shading Language attributes");

} // namespace

void ensureAttributesRegistered() { (void)&gRegistration; }

bool isComputeBuiltin(const std::string &name) {
  for (const char *n : kComputeBuiltins)
    if (name == n)
      return true;
  return false;
}

std::optional<MslAttribute> findMslAttribute(const Decl *D) {
  for (const auto *a : D->specific_attrs<AnnotateAttr>()) {
    llvm::StringRef s = a->getAnnotation();
    if (!s.consume_front(kAnnotationPrefix))
      continue;
    MslAttribute attr;
    auto [name, index] = s.split(':');
    attr.name = name.str();
    unsigned v;
    if (!index.empty() && !index.getAsInteger(10, v))
      attr.index = v;
    return attr;
  }
  return std::nullopt;
}

} // namespace msl::compiler
