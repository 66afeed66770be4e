#include "Attributes.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/DiagnosticSema.h"
#include "clang/Basic/ParsedAttrInfo.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Sema/Lookup.h"
#include "clang/Sema/SemaConsumer.h"
#include "clang/Sema/ParsedAttr.h"
#include "clang/Sema/Scope.h"
#include "clang/Sema/Sema.h"
#include "llvm/ADT/StringExtras.h"

#include <array>

using namespace clang;

namespace msl::compiler {
namespace {

constexpr const char *kAnnotationPrefix = "msl:";

// What an attribute's parentheses hold.
enum class ArgShape {
  None,        // [[position]]
  Index,       // [[buffer(3)]]: an integer constant from 0 to maxIndex
  Name,        // [[user(locn0)]], [[depth(any)]]: an identifier
  IndexOrName, // [[function_constant(2)]] on a variable, (use_bias) on an argument
  Patch,       // [[patch(quad, 16)]]: an identifier and an optional count
  String,      // [[host_name("name")]]
};

// What an attribute may be written on.
enum Where : unsigned { Param = 1, Field = 2, Var = 4, Function = 8 };

enum class Category { Binding, ComputeBuiltin, GraphicsBuiltin, Other };

struct AttrSpec {
  const char *name;
  ArgShape shape;
  unsigned where;
  Category category;
  unsigned maxIndex = ~0u;
  /// The first Metal language version that has it (__METAL_VERSION__ spelling).
  int minVersion = 100;
  /// A compute built-in that fragment functions may take too (MSL 2.2).
  bool fragmentToo = false;
};

constexpr unsigned kIO = Param | Field; // stage inputs and outputs: arguments or struct members

// The catalog: MSL 2.0 chapter 4 (plus the later attributes the corpus uses).
// Binding limits: 31 buffer and threadgroup entries, 128 textures, 16
// samplers, 8 color attachments.
constexpr AttrSpec kCatalog[] = {
    // Resource bindings.
    {"buffer", ArgShape::Index, Param, Category::Binding, 30},
    {"texture", ArgShape::Index, Param, Category::Binding, 127},
    {"sampler", ArgShape::Index, Param, Category::Binding, 15},
    {"threadgroup", ArgShape::Index, Param, Category::Binding, 30},
    // `threadgroup` reaches Clang as `__local`: the address-space macro
    // expands inside [[...]] too.
    {"__local", ArgShape::Index, Param, Category::Binding, 30},
    {"stage_in", ArgShape::None, Param, Category::Binding},
    {"id", ArgShape::Index, Field, Category::Other, ~0u, 200}, // argument-buffer member
    // Compute built-ins (kernel arguments).
    {"thread_position_in_grid", ArgShape::None, Param, Category::ComputeBuiltin},
    {"thread_position_in_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin},
    {"thread_index_in_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin},
    {"threadgroup_position_in_grid", ArgShape::None, Param, Category::ComputeBuiltin},
    {"threads_per_grid", ArgShape::None, Param, Category::ComputeBuiltin},
    {"threads_per_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin},
    {"threadgroups_per_grid", ArgShape::None, Param, Category::ComputeBuiltin},
    {"dispatch_threads_per_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin},
    {"grid_origin", ArgShape::None, Param, Category::ComputeBuiltin},
    {"grid_size", ArgShape::None, Param, Category::ComputeBuiltin},
    {"thread_execution_width", ArgShape::None, Param, Category::ComputeBuiltin},
    {"threads_per_simdgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200, true},
    {"thread_index_in_simdgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200, true},
    {"simdgroup_index_in_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200},
    {"simdgroups_per_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200},
    {"dispatch_simdgroups_per_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200},
    {"thread_index_in_quadgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200, true},
    {"quadgroup_index_in_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200},
    {"quadgroups_per_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200},
    {"dispatch_quadgroups_per_threadgroup", ArgShape::None, Param, Category::ComputeBuiltin, ~0u, 200},
    // Vertex inputs.
    {"vertex_id", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"instance_id", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"base_vertex", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 110},
    {"base_instance", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 110},
    {"attribute", ArgShape::Index, kIO, Category::Other, 30},
    // Tessellation (post-tessellation vertex function inputs).
    {"patch_id", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 120},
    {"position_in_patch", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 120},
    // Vertex outputs / fragment inputs.
    {"position", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"point_size", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"clip_distance", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"render_target_array_index", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"viewport_array_index", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 200},
    {"invariant", ArgShape::None, kIO, Category::Other, ~0u, 210},
    {"user", ArgShape::Name, kIO, Category::Other},
    {"flat", ArgShape::None, kIO, Category::Other},
    {"center_perspective", ArgShape::None, kIO, Category::Other},
    {"center_no_perspective", ArgShape::None, kIO, Category::Other},
    {"centroid_perspective", ArgShape::None, kIO, Category::Other},
    {"centroid_no_perspective", ArgShape::None, kIO, Category::Other},
    {"sample_perspective", ArgShape::None, kIO, Category::Other},
    {"sample_no_perspective", ArgShape::None, kIO, Category::Other},
    // Fragment inputs and outputs.
    {"front_facing", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"point_coord", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"sample_id", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"sample_mask", ArgShape::None, kIO, Category::GraphicsBuiltin},
    {"primitive_id", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 220},
    {"barycentric_coord", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 220},
    {"amplification_id", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 230},
    {"amplification_count", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 230},
    {"color", ArgShape::Index, kIO, Category::Other, 7},
    {"index", ArgShape::Index, kIO, Category::Other, 1}, // dual-source blending
    {"raster_order_group", ArgShape::Index, kIO, Category::Other, ~0u, 200},
    {"depth", ArgShape::Name, kIO, Category::GraphicsBuiltin},
    {"stencil", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 210},
    {"primitive_culled", ArgShape::None, kIO, Category::GraphicsBuiltin, ~0u, 300},
    {"post_depth_coverage", ArgShape::None, Function | Param, Category::Other, ~0u, 200},
    {"payload", ArgShape::None, Param, Category::Binding, ~0u, 300},
    // Function constants and function attributes.
    {"function_constant", ArgShape::IndexOrName, Var | Param | Field, Category::Other, 65535, 120},
    {"max_total_threads_per_threadgroup", ArgShape::Index, Function, Category::Other},
    {"early_fragment_tests", ArgShape::None, Function, Category::Other},
    {"patch", ArgShape::Patch, Function, Category::Other, ~0u, 120},
    {"host_name", ArgShape::String, Function, Category::Other},
    // Mesh shading (Metal 3): the stage attributes of object and mesh functions.
    {"mesh", ArgShape::None, Function, Category::Other, ~0u, 300},
    {"object", ArgShape::None, Function, Category::Other, ~0u, 300},
    // `[[kernel]]`, the attribute spelling of the kernel qualifier (MLX); it
    // reaches Clang as `[[__kernel]]` (the prelude's macro expands inside).
    {"__kernel", ArgShape::None, Function, Category::Other},
};

const AttrSpec *specOf(llvm::StringRef name) {
  for (const auto &s : kCatalog)
    if (name == s.name)
      return &s;
  return nullptr;
}

constexpr size_t kCatalogSize = sizeof(kCatalog) / sizeof(kCatalog[0]);

constexpr auto makeSpellings() {
  std::array<ParsedAttrInfo::Spelling, kCatalogSize> s{};
  for (size_t i = 0; i < kCatalogSize; ++i)
    s[i] = {AttributeCommonInfo::AS_CXX11, kCatalog[i].name};
  return s;
}
constexpr auto kSpellings = makeSpellings();

std::string displayName(llvm::StringRef n) { return n == "__local" ? "threadgroup" : n.str(); }

// ---- function constants ------------------------------------------------------
struct CompileContext {
  const std::map<std::string, std::string> *functionConstants = nullptr;
  int metalVersion = 200;
  bool ios = false;
  Sema *sema = nullptr; // while a compile's parser runs (see KernelTemplates)
};
thread_local CompileContext tContext;

// "2.0 (-std=macos-metal2.0 or later)", with the platform being compiled for;
// Metal 3 dropped the platform from the -std= spelling.
std::string versionText(int version) {
  std::string v = std::to_string(version / 100) + "." + std::to_string(version / 10 % 10);
  std::string std = version >= 300 ? "metal" + v : (tContext.ios ? "ios-metal" : "macos-metal") + v;
  return v + " (-std=" + std + " or later)";
}

void error(Sema &S, SourceLocation loc, const std::string &message) {
  S.Diag(loc, S.getDiagnostics().getCustomDiagID(DiagnosticsEngine::Error, "%0")) << message;
}

// A literal of `type` (scalar, or a vector: "1,2" lane by lane, or one
// value for every lane) holding `text`, or null with an error.
Expr *literalOf(Sema &S, QualType type, const std::string &text, SourceLocation loc,
                const std::string &what) {
  ASTContext &ctx = S.Context;
  QualType t = type.getUnqualifiedType();
  t = ctx.removeAddrSpaceQualType(t);
  if (const auto *vector = t->getAs<ExtVectorType>()) {
    llvm::SmallVector<llvm::StringRef, 4> parts;
    llvm::StringRef(text).split(parts, ',');
    const unsigned n = vector->getNumElements();
    if (parts.size() != 1 && parts.size() != n) {
      error(S, loc, what + ": '" + text + "' has " + std::to_string(parts.size()) + " values for " +
                        std::to_string(n) + " lanes");
      return nullptr;
    }
    llvm::SmallVector<Expr *, 4> lanes;
    for (unsigned i = 0; i < n; ++i) {
      std::string text = parts[parts.size() == 1 ? 0 : i].trim().str();
      // boolN's lanes are chars (the prelude): true/false are 1/0.
      if (text == "true" || text == "false")
        text = text == "true" ? "1" : "0";
      Expr *lane = literalOf(S, vector->getElementType(), text, loc, what);
      if (!lane)
        return nullptr;
      lanes.push_back(lane);
    }
    auto *list = new (ctx) InitListExpr(ctx, loc, lanes, loc);
    list->setType(t);
    return list;
  }
  if (t->isBooleanType()) {
    if (text != "true" && text != "false" && text != "1" && text != "0") {
      error(S, loc, what + ": '" + text + "' is not a bool (true, false, 1 or 0)");
      return nullptr;
    }
    return CXXBoolLiteralExpr::Create(ctx, text == "true" || text == "1", t, loc);
  }
  if (t->isIntegerType()) {
    const unsigned bits = unsigned(ctx.getTypeSize(t));
    const bool isSigned = !t->isUnsignedIntegerType();
    llvm::StringRef s(text);
    bool negative = s.consume_front("-");
    llvm::APInt raw;
    // The magnitude's bound: 2^(bits-1) for a negative value of a signed
    // type (INT_MIN), else the type's maximum.
    llvm::APInt bound = negative ? llvm::APInt::getOneBitSet(bits + 1, bits - 1)
                                 : llvm::APInt::getLowBitsSet(bits + 1, isSigned ? bits - 1 : bits);
    bool valid = !s.getAsInteger(0, raw) && (isSigned || !negative || raw.isZero()) &&
                 raw.getActiveBits() <= bits + 1 && raw.zextOrTrunc(bits + 1).ule(bound);
    if (!valid) {
      llvm::APSInt min = llvm::APSInt::getMinValue(bits, !isSigned);
      llvm::APSInt max = llvm::APSInt::getMaxValue(bits, !isSigned);
      error(S, loc, what + ": '" + text + "' is not a value of type '" + t.getAsString() + "' (" +
                        llvm::toString(min, 10) + " to " + llvm::toString(max, 10) + ")");
      return nullptr;
    }
    llvm::APInt value = raw.zextOrTrunc(bits);
    if (negative)
      value = -value;
    // IntegerLiteral must be int-or-wider; narrower types get a cast.
    QualType litType = ctx.getTypeSize(t) < 32 ? ctx.IntTy : t;
    Expr *lit = IntegerLiteral::Create(ctx, value.sextOrTrunc(ctx.getTypeSize(litType)), litType, loc);
    if (litType == t)
      return lit;
    return ImplicitCastExpr::Create(ctx, t, CK_IntegralCast, lit, nullptr, VK_PRValue,
                                    FPOptionsOverride());
  }
  if (t->isRealFloatingType()) {
    llvm::APFloat v(ctx.getFloatTypeSemantics(t));
    auto status = v.convertFromString(text, llvm::APFloat::rmNearestTiesToEven);
    if (!status) {
      llvm::consumeError(status.takeError());
      error(S, loc, what + ": '" + text + "' is not a floating-point value");
      return nullptr;
    }
    return FloatingLiteral::Create(ctx, v, /*isexact=*/true, t, loc);
  }
  error(S, loc, what + ": function constants of type '" + t.getAsString() +
                    "' are not supported (use a scalar bool, integer, half or float)");
  return nullptr;
}

// `constant T name [[function_constant(i)]];`: the request's value (by index
// or name) becomes the initializer; without one the constant is undefined
// (zero, and is_function_constant_defined(name) is false). The companion
// `constexpr bool __msl_fc_defined_<name>` carries that fact.
bool applyFunctionConstant(Sema &S, VarDecl *var, unsigned index, SourceLocation loc) {
  ASTContext &ctx = S.Context;
  std::string name = var->getName().str();
  const std::string what = "function constant '" + name + "' (index " + std::to_string(index) + ")";
  if (var->getType().getAddressSpace() != LangAS::opencl_constant || !var->hasGlobalStorage()) {
    error(S, loc, what + " must be a program-scope variable in the constant address space");
    return false;
  }
  std::optional<std::string> text;
  if (const auto *values = tContext.functionConstants) {
    auto byIndex = values->find(std::to_string(index));
    auto byName = values->find(name);
    if (byIndex != values->end())
      text = byIndex->second;
    else if (byName != values->end())
      text = byName->second;
  }
  Expr *init = literalOf(S, var->getType(), text.value_or("0"), loc, what);
  if (!init && text) // the value was bad (reported); keep the declaration valid
    init = literalOf(S, var->getType(), "0", loc, what);
  if (!init)
    return false;
  var->setInit(init);

  // The companion flag, declared in the same scope.
  IdentifierInfo &flagName = ctx.Idents.get("__msl_fc_defined_" + name);
  QualType flagType = ctx.BoolTy.withConst();
  auto *flag = VarDecl::Create(ctx, var->getDeclContext(), loc, loc, &flagName, flagType,
                               ctx.getTrivialTypeSourceInfo(flagType, loc), SC_Static);
  flag->setConstexpr(true);
  flag->setImplicit(true);
  flag->setInit(CXXBoolLiteralExpr::Create(ctx, text.has_value(), ctx.BoolTy, loc));
  S.PushOnScopeChains(flag, S.getCurScope(), /*AddToContext=*/true);
  return true;
}

struct MslAttrInfo : public ParsedAttrInfo {
  MslAttrInfo() {
    OptArgs = 2;
    Spellings = kSpellings;
  }

  bool diagAppertainsToDecl(Sema &S, const ParsedAttr &A, const Decl *D) const override {
    const AttrSpec *spec = specOf(A.getAttrName()->getName());
    unsigned where = isa<ParmVarDecl>(D)  ? Param
                     : isa<FieldDecl>(D)  ? Field
                     : isa<VarDecl>(D)    ? Var
                     : isa<FunctionDecl>(D) ? Function
                                            : 0;
    if (spec && (spec->where & where))
      return true;
    std::string allowed;
    auto add = [&](unsigned bit, const char *what) {
      if (spec && (spec->where & bit))
        allowed += std::string(allowed.empty() ? "" : " or ") + what;
    };
    add(Param, "function arguments");
    add(Field, "struct members");
    add(Var, "program-scope constants");
    add(Function, "functions");
    error(S, A.getLoc(),
          "attribute '" + displayName(A.getAttrName()->getName()) + "' applies only to " + allowed);
    return false;
  }

  // The argument as annotation text, or nullopt (with an error).
  static std::optional<std::string> argumentOf(Sema &S, const AttrSpec &spec, const ParsedAttr &A,
                                               const Decl *D) {
    std::string n = displayName(spec.name);
    unsigned args = A.getNumArgs();
    auto identArg = [&](unsigned i) -> std::optional<std::string> {
      if (i < args && A.isArgIdent(i) && A.getArgAsIdent(i))
        return A.getArgAsIdent(i)->Ident->getName().str();
      return std::nullopt;
    };
    auto intArg = [&](unsigned i) -> std::optional<llvm::APSInt> {
      if (i >= args)
        return std::nullopt;
      if (A.isArgExpr(i) && A.getArgAsExpr(i))
        return A.getArgAsExpr(i)->getIntegerConstantExpr(S.Context);
      // A lone identifier reaches us unparsed: a named integer constant.
      if (auto name = identArg(i)) {
        LookupResult r(S, &S.Context.Idents.get(*name), A.getLoc(), Sema::LookupOrdinaryName);
        if (S.LookupName(r, S.getCurScope()) && r.isSingleResult())
          if (auto *v = dyn_cast<VarDecl>(r.getFoundDecl()))
            if (v->getInit())
              return v->getInit()->getIntegerConstantExpr(S.Context);
      }
      return std::nullopt;
    };
    auto fail = [&](const std::string &expected) -> std::optional<std::string> {
      error(S, A.getLoc(), "attribute '" + n + "' " + expected);
      return std::nullopt;
    };
    switch (spec.shape) {
    case ArgShape::None:
      if (args != 0)
        return fail("takes no arguments");
      return std::string();
    case ArgShape::Index:
    case ArgShape::IndexOrName: {
      // function_constant(name) on an argument or member: present only when
      // that bool function constant is true.
      if (spec.shape == ArgShape::IndexOrName && (isa<ParmVarDecl>(D) || isa<FieldDecl>(D))) {
        if (args == 1)
          if (auto name = identArg(0))
            return *name;
        return fail("on an argument or member needs the name of a bool function constant");
      }
      auto v = intArg(0);
      if (args != 1 || !v || v->isNegative() || v->getActiveBits() > 32 ||
          v->getZExtValue() > spec.maxIndex)
        return fail("needs an integer constant index from 0 to " + std::to_string(spec.maxIndex));
      return std::to_string(v->getZExtValue());
    }
    case ArgShape::Name:
      if (args == 1)
        if (auto name = identArg(0))
          return *name;
      return fail("needs a name, as in [[" + n + "(name)]]");
    case ArgShape::Patch: {
      auto kind = identArg(0);
      if (!kind || (*kind != "quad" && *kind != "triangle") || args > 2)
        return fail("needs quad or triangle and an optional control-point count");
      if (args == 1)
        return *kind;
      auto count = intArg(1);
      if (!count || count->isNegative() || count->getZExtValue() > 32)
        return fail("needs a control-point count from 0 to 32");
      return *kind + "," + std::to_string(count->getZExtValue());
    }
    case ArgShape::String:
      if (args == 1 && A.isArgExpr(0))
        if (auto *s = dyn_cast_or_null<StringLiteral>(A.getArgAsExpr(0)->IgnoreParenImpCasts()))
          return s->getString().str();
      return fail("needs a string literal");
    }
    return std::nullopt;
  }

  AttrHandling handleDeclAttribute(Sema &S, Decl *D, const ParsedAttr &A) const override {
    const AttrSpec *spec = specOf(A.getAttrName()->getName());
    if (!spec)
      return AttributeNotApplied;
    std::string n = displayName(spec->name);
    if (tContext.metalVersion < spec->minVersion) {
      error(S, A.getLoc(), "attribute '" + n + "' needs Metal " + versionText(spec->minVersion));
      // Keep a function constant's declaration valid (it needs an initializer).
      if (auto *var = dyn_cast<VarDecl>(D); var && !isa<ParmVarDecl>(D) && !var->getInit())
        if (Expr *zero = literalOf(S, var->getType(), "0", A.getLoc(), n))
          var->setInit(zero);
      D->addAttr(AnnotateAttr::CreateImplicit(S.Context, kAnnotationPrefix + n + ":?", nullptr, 0,
                                              A.getRange()));
      return AttributeNotApplied;
    }
    auto argument = argumentOf(S, *spec, A, D);
    if (!argument) {
      // Reported; mark it so that checks of the declaration do not also say
      // the attribute is missing.
      D->addAttr(AnnotateAttr::CreateImplicit(S.Context, kAnnotationPrefix + n + ":?", nullptr, 0,
                                              A.getRange()));
      return AttributeNotApplied;
    }
    for (const auto &existing : mslAttributes(D))
      if (existing.name == n) {
        error(S, A.getLoc(), "attribute '" + n + "' is given twice");
        return AttributeNotApplied;
      }
    if (n == "function_constant" && isa<VarDecl>(D) && !isa<ParmVarDecl>(D) &&
        !applyFunctionConstant(S, cast<VarDecl>(D), unsigned(std::stoul(*argument)), A.getLoc()))
      return AttributeNotApplied;
    // Object and mesh functions run as threadgroups, like kernels: Clang's
    // kernel mark lets them declare threadgroup variables (OpenCL allows
    // those only in kernels). The stage collector tells them apart by the
    // annotation and entry lowering leaves them alone.
    // (Not when it returns a value: the stage collector reports that, in
    // the stage's words.)
    // `template <...> [[kernel]] void f(...)`: Clang's own error for a
    // kernel template (what `kernel` gets), which source repair rewrites
    // (see kernel templates below); as a kernel mark on the pattern it would
    // check the dependent parameter types as a kernel's.
    if (n == "__kernel" && cast<FunctionDecl>(D)->isTemplated()) {
      S.Diag(D->getLocation(), diag::err_template_kernel);
      return AttributeNotApplied;
    }
    if ((n == "mesh" || n == "object" || n == "__kernel") && !D->hasAttr<OpenCLKernelAttr>() &&
        cast<FunctionDecl>(D)->getReturnType()->isVoidType())
      D->addAttr(OpenCLKernelAttr::CreateImplicit(S.Context, A.getRange()));
    if (n == "__kernel") {
      if (!cast<FunctionDecl>(D)->getReturnType()->isVoidType())
        error(S, A.getLoc(), "a [[kernel]] function must return void");
      return AttributeApplied; // the kernel mark is all it is
    }
    std::string annotation = kAnnotationPrefix + n;
    if (!argument->empty())
      annotation += ":" + *argument;
    D->addAttr(AnnotateAttr::CreateImplicit(S.Context, annotation, nullptr, 0, A.getRange()));
    return AttributeApplied;
  }
};

ParsedAttrInfoRegistry::Add<MslAttrInfo> gRegistration("msl-attributes",
                                                       "Metal Shading Language attributes");

// ---- kernel templates ------------------------------------------------------
// `template <typename T> kernel void f(...)` with `template [[host_name("x")]]
// kernel void f<float>(...);` instantiations (PyTorch, MLX) is not C++ for
// OpenCL: kernels cannot be templates. Source repair (SourceRepair.cpp)
// rewrites the template into a plain one returning `auto` whose body starts
// with `_Pragma("msl kernel")`, and each instantiation into a kernel that
// calls it. The pragma marks the template a kernel once its declaration is
// checked, so its body may declare threadgroup variables; the `auto` makes
// each call instantiate the body right there, in the calling kernel's
// outermost scope, where OpenCL allows them; and once instantiated, the
// instantiation stops being a kernel, so it is an ordinary (mangled)
// function that the kernel calls.
struct KernelBodyPragma : public PragmaHandler {
  KernelBodyPragma() : PragmaHandler("msl") {}
  void HandlePragma(Preprocessor &pp, PragmaIntroducer introducer, Token &) override {
    Token what;
    pp.LexUnexpandedToken(what);
    FunctionDecl *fd = tContext.sema ? tContext.sema->getCurFunctionDecl() : nullptr;
    // (`kernel` is a keyword token in OpenCL mode, not an identifier.)
    if (fd && what.getIdentifierInfo() && what.getIdentifierInfo()->getName() == "kernel" &&
        !fd->hasAttr<OpenCLKernelAttr>())
      fd->addAttr(OpenCLKernelAttr::CreateImplicit(fd->getASTContext(), introducer.Loc));
  }
};
PragmaHandlerRegistry::Add<KernelBodyPragma> gPragmaRegistration("msl-kernel-body",
                                                                 "#pragma msl kernel");

class KernelTemplates : public SemaConsumer {
  void InitializeSema(Sema &S) override { tContext.sema = &S; }
  void ForgetSema() override { tContext.sema = nullptr; }
  // Sema hands an instantiated body to the consumers as a top-level
  // declaration; this consumer comes first, so the others (the stage
  // collector, code generation) see an ordinary function.
  bool HandleTopLevelDecl(DeclGroupRef group) override {
    for (Decl *d : group)
      if (auto *fd = dyn_cast<FunctionDecl>(d); fd && fd->isTemplateInstantiation())
        fd->dropAttr<OpenCLKernelAttr>();
    return true;
  }
  void HandleCXXImplicitFunctionInstantiation(FunctionDecl *fd) override {
    HandleTopLevelDecl(DeclGroupRef(fd));
  }
};

} // namespace

AttributeScope::AttributeScope(const std::map<std::string, std::string> &functionConstants,
                               int metalVersion, bool ios) {
  tContext = {&functionConstants, metalVersion, ios};
}
AttributeScope::~AttributeScope() { tContext = {}; }

void ensureAttributesRegistered() {
  (void)&gRegistration;
  (void)&gPragmaRegistration;
}

std::unique_ptr<clang::ASTConsumer> createKernelTemplatesConsumer() {
  return std::make_unique<KernelTemplates>();
}

bool isComputeBuiltin(const std::string &name) {
  const AttrSpec *s = specOf(name);
  return s && s->category == Category::ComputeBuiltin;
}

bool isFragmentComputeBuiltin(const std::string &name) {
  const AttrSpec *s = specOf(name);
  return s && s->fragmentToo;
}

bool isGraphicsBuiltin(const std::string &name) {
  const AttrSpec *s = specOf(name);
  return s && s->category == Category::GraphicsBuiltin;
}

std::vector<MslAttribute> mslAttributes(const Decl *D) {
  std::vector<MslAttribute> out;
  for (const auto *a : D->specific_attrs<AnnotateAttr>()) {
    llvm::StringRef s = a->getAnnotation();
    if (!s.consume_front(kAnnotationPrefix))
      continue;
    MslAttribute attr;
    auto [name, argument] = s.split(':');
    attr.name = name.str();
    attr.argument = argument.str();
    unsigned v;
    if (!argument.empty() && !argument.getAsInteger(10, v))
      attr.index = v;
    out.push_back(std::move(attr));
  }
  return out;
}

std::optional<MslAttribute> findMslAttribute(const Decl *D, const std::string &name) {
  for (auto &a : mslAttributes(D))
    if (a.name == name)
      return a;
  return std::nullopt;
}

} // namespace msl::compiler
