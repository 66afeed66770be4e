#include "msl/compiler/Compiler.h"

#include "Attributes.h"
#include "ConstantCopies.h"
#include "Cxx17Extensions.h"
#include "InlineAsm.h"
#include "NvptxTuning.h"
#include "SourceRepair.h"
#include "EntryPoints.h"
#include "PreciseMath.h"
#include "TemplateFloatLiterals.h"
#include "Reflection.h"
#include "msl/compiler/Options.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/CodeGen/ModuleBuilder.h"
#include "clang/Basic/DiagnosticLex.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Frontend/Utils.h"
#include "clang/Lex/Lexer.h"
#include "clang/Serialization/ASTWriter.h"
#include "clang/Serialization/PCHContainerOperations.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/Demangle/Demangle.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"
#include "llvm/TargetParser/Host.h"

#include <array>
#include <chrono>
#include <list>
#include <set>
#include <mutex>
#include <optional>

#ifndef MSLD_VERSION
#define MSLD_VERSION "0.0.0"
#endif

namespace msl::compiler {

// Defined in the generated EmbeddedStdlib.cpp.
extern const std::map<std::string, std::string> &generatedStdlibFiles();

namespace {

constexpr const char *kSourceRoot = "/msl/src/";
constexpr const char *kStdlibRoot = "/msl/stdlib/";
constexpr const char *kDefaultSm = "sm_90";
// The precompiled stdlib (see StdlibPchCache) and the header it is built from.
constexpr const char *kStdlibPchPath = "/msl/pch/metal_stdlib.pch";
constexpr const char *kStdlibPchSource = "/msl/pch/metal_stdlib.h";
constexpr const char *kVectorTypedefsPath = "/msl/gen/vector_typedefs.h";

std::string displayPath(llvm::StringRef path) {
  if (path.consume_front(kSourceRoot))
    return path.str();
  if (path.consume_front(kStdlibRoot))
    return "<stdlib>/" + path.str();
  return path.str();
}

Severity severityOf(clang::DiagnosticsEngine::Level level) {
  switch (level) {
  case clang::DiagnosticsEngine::Note:
    return Severity::Note;
  case clang::DiagnosticsEngine::Remark:
    return Severity::Remark;
  case clang::DiagnosticsEngine::Warning:
    return Severity::Warning;
  case clang::DiagnosticsEngine::Fatal:
    return Severity::Fatal;
  default:
    return Severity::Error;
  }
}

/// `message` cut to at most `max` bytes, ending in "... (N bytes)", at a
/// UTF-8 character boundary (messages go into protobuf strings).
void cutMessage(std::string &message, size_t max) {
  if (message.size() <= max)
    return;
  std::string tail = "... (" + std::to_string(message.size()) + " bytes)";
  size_t keep = max > tail.size() ? max - tail.size() : 0;
  while (keep > 0 && (static_cast<unsigned char>(message[keep]) & 0xC0) == 0x80)
    --keep;
  message.resize(keep);
  message += tail;
}

/// Collects Clang's diagnostics as data; notes attach to the diagnostic
/// before them. Records at most the job's limits (CompileJob::maxDiagnostics
/// and maxDiagnosticBytes): past them, diagnostics are only counted, and the
/// compile stops at its next error.
class DiagnosticCollector : public clang::DiagnosticConsumer {
public:
  /// `repairs`: where to record source repairs for errors (see
  /// SourceRepair.h); null when this compile is itself the repaired one.
  DiagnosticCollector(std::vector<Diagnostic> &out, RepairCollector *repairs, const CompileJob &job)
      : out_(out), repairs_(repairs), job_(job) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    if (repairs_ && level >= clang::DiagnosticsEngine::Error)
      repairs_->error(info);
    else if (repairs_ && level == clang::DiagnosticsEngine::Note)
      repairs_->note(info);
    if (dropped_ > 0) {
      ++dropped_;
      stopped_ |= info.getID() == clang::diag::fatal_too_many_errors;
      return;
    }
    Diagnostic d;
    d.severity = severityOf(level);
    llvm::SmallString<256> message;
    info.FormatDiagnostic(message);
    d.message = message.str().str();
    cutMessage(d.message, job_.maxDiagnosticMessageBytes);
    if (info.getLocation().isValid() && info.hasSourceManager()) {
      clang::PresumedLoc loc = info.getSourceManager().getPresumedLoc(info.getLocation());
      if (loc.isValid()) {
        d.file = displayPath(loc.getFilename());
        d.line = loc.getLine();
        d.column = loc.getColumn();
      }
    }
    size_t size = d.message.size() + d.file.size();
    if (recorded_ >= job_.maxDiagnostics || bytes_ + size > job_.maxDiagnosticBytes) {
      dropped_ = 1;
      overBytes_ = recorded_ < job_.maxDiagnostics;
      stopAtNextError();
      return;
    }
    ++recorded_;
    bytes_ += size;
    if (d.severity == Severity::Note && !out_.empty()) {
      out_.back().notes.push_back(std::move(d));
      return;
    }
    out_.push_back(std::move(d));
    // An #error in a stdlib header (what msld lacks: <metal_tensor>) points
    // back at the request's #include that reached it.
    if (info.getID() == clang::diag::err_pp_hash_error && info.hasSourceManager() && recorded_ < job_.maxDiagnostics) {
      const clang::SourceManager &sm = info.getSourceManager();
      for (clang::SourceLocation at = sm.getIncludeLoc(sm.getFileID(info.getLocation())); at.isValid();
           at = sm.getIncludeLoc(sm.getFileID(at))) {
        clang::PresumedLoc loc = sm.getPresumedLoc(at);
        if (!loc.isValid() || !llvm::StringRef(loc.getFilename()).starts_with(kSourceRoot))
          continue;
        Diagnostic note;
        note.severity = Severity::Note;
        note.message = "included here";
        note.file = displayPath(loc.getFilename());
        note.line = loc.getLine();
        note.column = loc.getColumn();
        ++recorded_;
        out_.back().notes.push_back(std::move(note));
        break;
      }
    }
  }

  /// The compile's engine, whose error limit stops it once this is full.
  void stopsCompile(clang::DiagnosticsEngine &diags) {
    compile_ = &diags;
    if (dropped_ > 0)
      stopAtNextError();
  }

  /// Appends the note on what was dropped, if anything was.
  void finish() {
    if (dropped_ == 0)
      return;
    Diagnostic d;
    d.file = "<msld>";
    d.severity = Severity::Note;
    d.message = std::to_string(dropped_) + (dropped_ == 1 ? " more diagnostic" : " more diagnostics") +
                " not shown: a compile reports at most " +
                (overBytes_ ? std::to_string(job_.maxDiagnosticBytes) + " bytes of diagnostics"
                            : std::to_string(job_.maxDiagnostics) + " diagnostics (notes included)") +
                (stopped_ ? "; compiling stopped at the next error" : "");
    out_.push_back(std::move(d));
    dropped_ = 0;
  }

private:
  // As -ferror-limit: once NumErrors passes the limit, Clang reports a fatal
  // error and stops compiling. With no error yet, 1 lets one more through.
  void stopAtNextError() {
    if (compile_)
      compile_->setErrorLimit(std::max(1u, compile_->getNumErrors()));
  }

  std::vector<Diagnostic> &out_;
  RepairCollector *repairs_;
  const CompileJob &job_;
  clang::DiagnosticsEngine *compile_ = nullptr;
  size_t recorded_ = 0, bytes_ = 0, dropped_ = 0;
  bool overBytes_ = false, stopped_ = false;
};

std::string addressSpaceName(clang::LangAS as) {
  switch (as) {
  case clang::LangAS::opencl_global:
    return "device";
  case clang::LangAS::opencl_constant:
    return "constant";
  case clang::LangAS::opencl_local:
    return "threadgroup";
  default:
    return "thread";
  }
}

/// Finds kernel, vertex and fragment functions as they are parsed, checks the
/// argument rules of MSL chapter 4 that Clang cannot know, and records their
/// interface.
class StageCollector : public clang::ASTConsumer {
public:
  StageCollector(clang::CompilerInstance &ci, std::vector<ShaderFunction> &out,
                 std::vector<std::string> &threadgroupVars)
      : ci_(ci), out_(out), threadgroupVars_(threadgroupVars), policy_(ci.getLangOpts()) {
    policy_.SuppressTagKeyword = true;
    for (size_t i = 0; i < out_.size(); ++i)
      entryNames_.try_emplace(entrySymbol(out_[i]), i);
  }

  bool HandleTopLevelDecl(clang::DeclGroupRef group) override {
    for (clang::Decl *d : group)
      visit(d);
    return true;
  }

private:
  void visit(clang::Decl *d) {
    // Entry functions may sit in namespaces, extern "C" blocks and the like.
    if (llvm::isa<clang::NamespaceDecl, clang::LinkageSpecDecl, clang::ExportDecl>(d)) {
      for (clang::Decl *inner : llvm::cast<clang::DeclContext>(d)->decls())
        visit(inner);
      return;
    }
    if (auto *var = llvm::dyn_cast<clang::VarDecl>(d)) {
      checkProgramScopeVariable(var);
      return;
    }
    auto *fd = llvm::dyn_cast<clang::FunctionDecl>(d);
    if (!fd || !fd->doesThisDeclarationHaveABody())
      return;
    if (findMslAttribute(fd, "mesh"))
      collect(fd, Stage::Mesh);
    else if (findMslAttribute(fd, "object"))
      collect(fd, Stage::Object);
    else if (fd->hasAttr<clang::OpenCLKernelAttr>())
      collect(fd, Stage::Kernel);
    else if (auto stage = findMslAttribute(fd, "stage"))
      collect(fd, stage->argument == "vertex" ? Stage::Vertex : Stage::Fragment);
  }

  // MSL 2.0 4.2: a program-scope variable lives in the constant address
  // space (OpenCL 2.0 would also allow device ones). `constexpr` ones
  // (`constexpr sampler s(...)`) are compile-time values, which Metal allows.
  // The stdlib's own declarations are not checked.
  void checkProgramScopeVariable(clang::VarDecl *var) {
    if (!var->hasGlobalStorage() || var->isStaticLocal() || var->isConstexpr() ||
        ci_.getSourceManager().isInSystemHeader(var->getLocation()))
      return;
    clang::LangAS as = var->getType().getAddressSpace();
    if (as == clang::LangAS::opencl_global || as == clang::LangAS::opencl_local)
      error(var->getLocation(), "program-scope variable '" + var->getNameAsString() +
                                    "' must be in the constant address space, not " +
                                    addressSpaceName(as));
  }

  void error(clang::SourceLocation loc, llvm::StringRef message) {
    auto &diags = ci_.getDiagnostics();
    diags.Report(loc, diags.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0")) << message;
  }

  std::string typeName(clang::QualType t) const {
    return t.getUnqualifiedType().getAsString(policy_);
  }

  static std::vector<std::string> attributeList(const clang::Decl *d) {
    std::vector<std::string> out;
    for (const auto &a : mslAttributes(d))
      if (a.name != "stage" && a.name != "mesh" && a.name != "object") // the stage itself
        out.push_back(a.argument.empty() ? a.name : a.name + ":" + a.argument);
    return out;
  }

  // Members of a [[stage_in]] or returned struct, flattened through nested
  // structs that have no attribute of their own.
  void membersOf(clang::QualType type, const std::string &prefix, std::vector<StageVariable> &out) {
    const auto *record = type->getAsRecordDecl();
    if (!record)
      return;
    for (const clang::FieldDecl *f : record->fields()) {
      StageVariable v;
      v.name = prefix + f->getNameAsString();
      v.type = typeName(f->getType());
      v.attributes = attributeList(f);
      if (v.attributes.empty() && f->getType()->isStructureType())
        membersOf(f->getType(), v.name + ".", out);
      else
        out.push_back(std::move(v));
    }
  }

  // The name of a class the stdlib declares directly in namespace metal
  // (texture2d, sampler, mesh, ...), or directly in namespace `ns` (for
  // metal::raytracing, "raytracing"), or "".
  static llvm::StringRef metalRecordName(clang::QualType t, llvm::StringRef ns = "metal") {
    const auto *record = t->getAsCXXRecordDecl();
    const auto *in = record ? llvm::dyn_cast<clang::NamespaceDecl>(record->getDeclContext()) : nullptr;
    return in && in->getName() == ns ? record->getName() : "";
  }

  // The texture or sampler kind of a type declared by the stdlib
  // (metal::texture2d<...>, metal::sampler, or a metal::array of them, whose
  // length goes to `arrayLength`).
  static std::optional<ArgKind> resourceKind(clang::QualType t, unsigned *arrayLength = nullptr) {
    if (const auto *spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
            t->getAsCXXRecordDecl());
        spec && spec->getName() == "array" && arrayLength && spec->getTemplateArgs().size() == 2 &&
        spec->getTemplateArgs()[0].getKind() == clang::TemplateArgument::Type &&
        spec->getTemplateArgs()[1].getKind() == clang::TemplateArgument::Integral) {
      auto kind = resourceKind(spec->getTemplateArgs()[0].getAsType());
      if (kind)
        *arrayLength = unsigned(spec->getTemplateArgs()[1].getAsIntegral().getZExtValue());
      return kind;
    }
    llvm::StringRef n = metalRecordName(t);
    if (n == "sampler")
      return ArgKind::Sampler;
    if (n.starts_with("texture") || n.starts_with("depth"))
      return ArgKind::Texture;
    return std::nullopt;
  }

  // An acceleration structure or intersection function table
  // (metal::raytracing), which binds to a [[buffer(n)]] as a handle.
  static bool isRaytracingHandle(clang::QualType t) {
    llvm::StringRef n = metalRecordName(t, "raytracing");
    return n == "acceleration_structure" || n == "intersection_function_table";
  }

  // "mesh" for a metal::mesh<...> argument, "mesh_grid_properties" for that one.
  static std::optional<std::string> gridOutputKind(clang::QualType t) {
    llvm::StringRef n = metalRecordName(t);
    if (n == "mesh" || n == "mesh_grid_properties")
      return n.str();
    return std::nullopt;
  }

  // A texture's access from its template arguments (metal::access::read, ...).
  static std::string textureAccess(clang::QualType t) {
    const auto *spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
        t->getAsCXXRecordDecl());
    if (!spec)
      return "sample";
    for (const auto &arg : spec->getTemplateArgs().asArray())
      if (arg.getKind() == clang::TemplateArgument::Integral &&
          arg.getIntegralType()->isEnumeralType()) {
        static const char *kNames[] = {"sample", "read", "write", "read_write"};
        uint64_t v = arg.getAsIntegral().getZExtValue();
        return v < 4 ? kNames[v] : "unknown";
      }
    return "sample";
  }

  // A texture's element type by its Metal name (template arguments are
  // canonical: `uint` would print as "unsigned int").
  std::string textureElementName(clang::QualType t) const {
    using BT = clang::BuiltinType;
    if (t->isHalfType())
      return "half";
    for (auto [kind, name] : {std::pair{BT::Float, "float"}, {BT::Int, "int"}, {BT::UInt, "uint"},
                              {BT::Short, "short"}, {BT::UShort, "ushort"}})
      if (t->isSpecificBuiltinType(kind))
        return name;
    return typeName(t);
  }

  // The value in this compile of the program-scope bool `name` that a
  // [[function_constant(name)]] argument names (a function constant, or a
  // constant computed from them); nullopt if it is not one.
  static std::optional<bool> functionConstantValue(clang::ASTContext &ctx, const std::string &name) {
    for (clang::NamedDecl *d : ctx.getTranslationUnitDecl()->lookup(&ctx.Idents.get(name))) {
      auto *var = llvm::dyn_cast<clang::VarDecl>(d);
      if (!var || !var->getType()->isBooleanType() || !var->getAnyInitializer())
        continue;
      if (const clang::APValue *v = var->evaluateValue(); v && v->isInt())
        return v->getInt().getBoolValue();
    }
    return std::nullopt;
  }

  void collect(clang::FunctionDecl *fd, Stage stage) {
    clang::ASTContext &ctx = fd->getASTContext();
    ShaderFunction f;
    f.stage = stage;
    f.name = fd->getNameAsString();
    std::unique_ptr<clang::MangleContext> mangler(ctx.createMangleContext());
    if (mangler->shouldMangleDeclName(fd)) {
      llvm::raw_string_ostream os(f.symbol);
      mangler->mangleName(clang::GlobalDecl(fd), os);
    } else {
      f.symbol = f.name;
    }
    f.attributes = attributeList(fd);
    if (auto host = findMslAttribute(fd, "host_name"))
      f.hostName = host->argument;
    const std::string function = std::string(stageName(stage)) + " function '" + f.name + "'";
    std::map<std::pair<ArgKind, unsigned>, std::string> used;
    // Arguments without an index ([[buffer(n)]] and the like): Apple's
    // compiler assigns them in argument order, each the lowest index of its
    // kind that no argument names explicitly (and no earlier one took).
    std::vector<size_t> implicitIndex;
    bool hasStageIn = false;
    for (clang::ParmVarDecl *p : fd->parameters()) {
      ShaderArg a;
      bool needsIndex = false;
      a.name = p->getNameAsString();
      clang::QualType type = p->getType();
      clang::QualType value = type;
      if (type->isPointerType() || type->isReferenceType()) {
        a.isReference = type->isReferenceType();
        value = type->getPointeeType();
        a.addressSpace = addressSpaceName(value.getAddressSpace());
        a.access = value.isConstQualified() || a.addressSpace == "constant" ? "read" : "read_write";
      } else {
        a.addressSpace = "thread";
      }
      a.type = typeName(value);
      if (auto fc = findMslAttribute(p, "function_constant")) {
        a.functionConstant = fc->argument;
        a.present = functionConstantValue(ctx, fc->argument).value_or(true);
      }
      const std::string what = "argument '" + a.name + "' of " + function;

      std::optional<MslAttribute> builtin;
      bool invalidAttribute = false;
      for (const auto &attr : mslAttributes(p)) {
        if (isComputeBuiltin(attr.name) || isGraphicsBuiltin(attr.name))
          builtin = attr;
        invalidAttribute |= attr.argument == "?"; // already reported
      }
      if (invalidAttribute)
        continue;
      auto binding = [&](const char *name) { return findMslAttribute(p, name); };
      auto resource = resourceKind(value, &a.arrayLength);

      if (builtin && stage == Stage::Fragment && isFragmentComputeBuiltin(builtin->name)) {
        a.kind = ArgKind::Builtin;
        a.builtin = builtin->name;
      } else if (builtin && isComputeBuiltin(builtin->name)) {
        if (!isGridStage(stage)) {
          error(p->getLocation(), "[[" + builtin->name + "]] is a kernel built-in; " + what +
                                      " cannot use it");
          continue;
        }
        a.kind = ArgKind::Builtin;
        a.builtin = builtin->name;
        clang::QualType elem = type;
        if (auto *vt = type->getAs<clang::VectorType>()) {
          elem = vt->getElementType();
          a.builtinWidth = vt->getNumElements();
        }
        a.builtinBits = unsigned(ctx.getTypeSize(elem));
        bool intOk = elem->isUnsignedIntegerType() &&
                     (ctx.getTypeSize(elem) == 32 || ctx.getTypeSize(elem) == 16);
        if (type->isPointerType() || type->isReferenceType() || !intOk) {
          error(p->getLocation(), "built-in " + what + " [[" + builtin->name +
                                      "]] must be uint or ushort (or a vector of them), not '" +
                                      type.getAsString(policy_) + "'");
          continue;
        }
      } else if (builtin) {
        if (isGridStage(stage)) {
          error(p->getLocation(), "[[" + builtin->name + "]] is a vertex or fragment built-in; " +
                                      what + " cannot use it");
          continue;
        }
        a.kind = ArgKind::Builtin;
        a.builtin = builtin->name;
      } else if (auto output = gridOutputKind(value); output && isGridStage(stage) && stage != Stage::Kernel) {
        // The mesh a mesh function builds, or the grid of mesh threadgroups
        // an object function launches: the pipeline provides them.
        if ((stage == Stage::Mesh) != (*output == "mesh")) {
          error(p->getLocation(), what + ": " + (*output == "mesh" ? "a mesh" : "mesh_grid_properties") +
                                      " belongs to " + (*output == "mesh" ? "mesh" : "object") + " functions");
          continue;
        }
        a.kind = ArgKind::Builtin;
        a.builtin = *output;
      } else if (binding("payload")) {
        // The payload an object function writes and its mesh functions read.
        if (stage != Stage::Mesh && stage != Stage::Object) {
          error(p->getLocation(), "[[payload]] is for object and mesh functions; " + what + " cannot use it");
          continue;
        }
        a.kind = ArgKind::Builtin;
        a.builtin = "payload";
      } else if (auto color = binding("color"); color && stage == Stage::Fragment) {
        // Programmable blending: the attachment's current value as an input.
        a.kind = ArgKind::Builtin;
        a.builtin = "color:" + color->argument;
      } else if (binding("stage_in")) {
        a.kind = ArgKind::StageIn;
        if (hasStageIn)
          error(p->getLocation(), what + ": only one argument may be [[stage_in]]");
        hasStageIn = true;
        membersOf(value, "", a.members);
      } else if (isRaytracingHandle(value) && !type->isPointerType() && !type->isReferenceType()) {
        a.kind = ArgKind::Buffer;
        a.handle = true;
        a.access = "read";
        auto attr = binding("buffer");
        needsIndex = !attr && !binding("user");
        if (attr)
          a.index = attr->index;
      } else if (resource) {
        a.kind = *resource;
        a.handle = true;
        const char *attrName = a.kind == ArgKind::Texture ? "texture" : "sampler";
        auto attr = binding(attrName);
        needsIndex = !attr && !binding("user");
        if (attr)
          a.index = attr->index;
        clang::QualType element = value;
        if (a.arrayLength)
          element = llvm::cast<clang::ClassTemplateSpecializationDecl>(value->getAsCXXRecordDecl())
                        ->getTemplateArgs()[0]
                        .getAsType();
        a.access = a.kind == ArgKind::Texture ? textureAccess(element) : "read";
        if (a.kind == ArgKind::Texture) {
          a.textureType = metalRecordName(element).str();
          if (const auto *spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(
                  element->getAsCXXRecordDecl());
              spec && spec->getTemplateArgs().size() > 0 &&
              spec->getTemplateArgs()[0].getKind() == clang::TemplateArgument::Type)
            a.elementType = textureElementName(spec->getTemplateArgs()[0].getAsType());
        }
      } else if (a.addressSpace == "device" || a.addressSpace == "constant") {
        a.kind = ArgKind::Buffer;
        auto attr = binding("buffer");
        // [[user(name)]] instead of an index: an argument the API binds by
        // name (naga's unbound resources); it has no index to reflect.
        needsIndex = !attr && !binding("user");
        if (attr)
          a.index = attr->index;
      } else if (a.addressSpace == "threadgroup") {
        a.kind = ArgKind::Threadgroup;
        auto attr = binding("threadgroup");
        // A threadgroup reference without an index is a threadgroup variable
        // the kernel's caller provides (naga writes its workgroup variables
        // so); it has no index to reflect.
        bool implicitVariable = a.isReference && !attr;
        if (!isGridStage(stage)) {
          error(p->getLocation(), "threadgroup " + what + " is allowed only in kernel, object and mesh functions");
          continue;
        }
        needsIndex = !attr && !implicitVariable;
        if (attr)
          a.index = attr->index;
      } else if (binding("buffer") && !isGridStage(stage)) {
        // A small struct passed by value from a buffer (vertex and fragment only).
        a.kind = ArgKind::Buffer;
        a.index = binding("buffer")->index;
        a.access = "read";
      } else {
        error(p->getLocation(),
              what + " must be a device or constant buffer ([[buffer(n)]]), a texture "
                     "([[texture(n)]]), a sampler ([[sampler(n)]]), " +
                  std::string(isGridStage(stage) ? "a threadgroup buffer ([[threadgroup(n)]]) "
                                                       "or a built-in such as [[thread_position_in_grid]]"
                                                     : "[[stage_in]] or a built-in such as [[vertex_id]]"));
        continue;
      }
      // An array of textures or samplers takes `arrayLength` consecutive slots.
      for (unsigned slot = 0; a.index && slot < std::max(1u, a.arrayLength); ++slot) {
        static const char *kBindingNames[] = {"buffer", "threadgroup", "texture", "sampler"};
        auto [it, inserted] = used.emplace(std::make_pair(a.kind, *a.index + slot), a.name);
        // Arguments that exist under different function constants may share.
        if (!inserted && a.functionConstant.empty()) {
          error(p->getLocation(), what + " uses [[" + kBindingNames[unsigned(a.kind)] + "(" +
                                      std::to_string(*a.index + slot) + ")]], already taken by '" +
                                      it->second + "'");
          break;
        }
      }
      if (a.kind == ArgKind::Buffer && !a.handle) {
        if (!value->isIncompleteType() && !value->isDependentType()) {
          a.typeSize = uint64_t(ctx.getTypeSizeInChars(value).getQuantity());
          a.typeAlign = uint64_t(ctx.getTypeAlignInChars(value).getQuantity());
        }
        a.writable = a.addressSpace == "device" && (type->isPointerType() || type->isReferenceType()) &&
                     !value.isConstQualified();
      }
      if (needsIndex)
        implicitIndex.push_back(f.args.size());
      f.args.push_back(std::move(a));
    }
    for (size_t i : implicitIndex) {
      ShaderArg &a = f.args[i];
      unsigned slots = std::max(1u, a.arrayLength), n = 0;
      auto free = [&](unsigned at) {
        for (unsigned slot = 0; slot < slots; ++slot)
          if (used.count({a.kind, at + slot}))
            return false;
        return true;
      };
      while (!free(n))
        ++n;
      a.index = n;
      for (unsigned slot = 0; slot < slots; ++slot)
        used.emplace(std::make_pair(a.kind, n + slot), a.name);
    }
    if (isGridStage(stage) && fd->getBody()) {
      ThreadgroupVariables tv;
      tv.TraverseStmt(fd->getBody());
      uint64_t bytes = 0;
      for (const clang::VarDecl *v : tv.vars) {
        if (v->getType()->isIncompleteType() || v->getType()->isDependentType())
          continue;
        uint64_t align = uint64_t(ctx.getDeclAlign(v).getQuantity());
        bytes = llvm::alignTo(bytes, std::max<uint64_t>(align, 1)) +
                uint64_t(ctx.getTypeSizeInChars(v->getType()).getQuantity());
        // By its symbol, mangled now: the declaration may not outlive
        // the end of the action (seen: its DeclContext was gone by then).
        std::string symbol;
        llvm::raw_string_ostream os(symbol);
        mangler->mangleName(clang::GlobalDecl(v), os);
        threadgroupVars_.push_back(std::move(symbol));
      }
      f.threadgroupMemoryBytes = bytes;
    }

    clang::QualType ret = fd->getReturnType();
    if (isGridStage(stage)) {
      if (!ret->isVoidType())
        error(fd->getLocation(), std::string(stageName(stage)) + " function '" + f.name + "' must return void");
    } else if (!ret->isVoidType()) {
      if (ret->isStructureType()) {
        membersOf(ret, "", f.outputs);
      } else {
        // A vertex function's plain return is its position; a fragment
        // function's is color 0.
        f.outputs.push_back({"return", typeName(ret), {stage == Stage::Vertex ? "position" : "color:0"}});
      }
      if (stage == Stage::Vertex && ret->isStructureType()) {
        bool hasPosition = false;
        for (const auto &o : f.outputs)
          for (const auto &attr : o.attributes)
            hasPosition |= attr == "position";
        if (!hasPosition)
          error(fd->getLocation(), "vertex function '" + f.name +
                                       "' returns a struct without a [[position]] member");
      }
    }
    // Entry points are found by name: two may not share one. (By a table of
    // the names taken, not a scan of every function so far, which made a
    // file of N kernels O(N^2).)
    if (auto [it, inserted] = entryNames_.try_emplace(entrySymbol(f), out_.size()); !inserted) {
      const ShaderFunction &other = out_[it->second];
      error(fd->getLocation(), function + " would have the entry name '" + entrySymbol(f) + "', which " +
                                   stageName(other.stage) + " function '" + other.name + "' already has");
      return;
    }
    out_.push_back(std::move(f));
  }

  // The `threadgroup` variables a grid function declares (static storage
  // in the OpenCL local address space), in declaration order.
  // Also those of the functions it calls: the kernel source repair writes
  // for a kernel template calls the template's instance, whose body holds
  // them (missed, parallel threadgroups on the CPU shared one copy).
  struct ThreadgroupVariables : clang::RecursiveASTVisitor<ThreadgroupVariables> {
    std::vector<const clang::VarDecl *> vars;
    std::set<const clang::FunctionDecl *> visited;
    bool shouldVisitTemplateInstantiations() const { return true; }
    bool VisitVarDecl(clang::VarDecl *v) {
      if (!llvm::isa<clang::ParmVarDecl>(v) &&
          v->getASTContext().getBaseElementType(v->getType()).getAddressSpace() ==
              clang::LangAS::opencl_local &&
          std::find(vars.begin(), vars.end(), v) == vars.end())
        vars.push_back(v);
      return true;
    }
    bool VisitCallExpr(clang::CallExpr *call) {
      const clang::FunctionDecl *definition = nullptr;
      if (const clang::FunctionDecl *callee = call->getDirectCallee();
          callee && callee->hasBody(definition) && visited.insert(definition).second)
        TraverseStmt(definition->getBody());
      return true;
    }
  };

  clang::CompilerInstance &ci_;
  std::vector<ShaderFunction> &out_;
  std::vector<std::string> &threadgroupVars_; // symbols of threadgroup variables
  clang::PrintingPolicy policy_;
  llvm::StringMap<size_t> entryNames_; // entrySymbol -> its function in out_
};

/// On NVPTX, Metal's `constant` memory (buffers bound to `constant T *`
/// arguments, and program-scope constants, which such pointers may also
/// point to) is read-only device memory, not the GPU's 64 KB constant bank
/// that Clang's OpenCL map sends `__constant` to (ld.const, which reads the
/// bank, not the buffer a runtime binds). The target's map is swapped for
/// one where `constant` is the global address space, before the AST is made.
void useGlobalMemoryForConstant(clang::TargetInfo &target) {
  // The map is a protected member of TargetInfo; a pointer to it formed
  // through a derived class is the standard way to reach it.
  struct Access : clang::TargetInfo {
    using clang::TargetInfo::AddrSpaceMap;
  };
  static const clang::LangASMap &map = [&]() -> const clang::LangASMap & {
    static clang::LangASMap m;
    std::copy(std::begin(target.getAddressSpaceMap()), std::end(target.getAddressSpaceMap()), m);
    m[unsigned(clang::LangAS::opencl_constant)] = m[unsigned(clang::LangAS::opencl_global)];
    return m;
  }();
  const clang::LangASMap *clang::TargetInfo::*member = &Access::AddrSpaceMap;
  target.*member = &map;
}

/// Parses, checks entry functions and emits LLVM IR (no optimization yet: entry
/// points are generated first, then the whole module is optimized once).
class MslAction : public clang::EmitLLVMOnlyAction {
public:
  /// `cxx14Language`: Metal 1-3, whose C++17 features warn as extensions
  /// (Cxx17Extensions.h).
  MslAction(llvm::LLVMContext *ctx, std::vector<ShaderFunction> &functions,
            std::vector<SourceEdit> *repairs, bool cxx14Language)
      : EmitLLVMOnlyAction(ctx), functions_(functions), repairs_(repairs), cxx14Language_(cxx14Language) {}

protected:
  // Apple's own library calls builtins its compiler reserves for it
  // (`#pragma METAL internals`), and some projects copy those calls (MFA's
  // async copies). msld does not have them; naming one is an error at the
  // use, saying which (rather than a later, unrelated failure).
  bool BeginSourceFileAction(clang::CompilerInstance &ci) override {
    static const char *const kApplePrivateBuiltins[] = {
        "__metal_simdgroup_async_copy_1d", "__metal_simdgroup_async_copy_2d",
        "__metal_wait_simdgroup_events", "__metal_simdgroup_event_t",
        "__metal_simdgroup_matrix_8x8_multiply_accumulate"};
    clang::Preprocessor &pp = ci.getPreprocessor();
    unsigned id = ci.getDiagnostics().getCustomDiagID(
        clang::DiagnosticsEngine::Error, "%0 is an Apple-private Metal builtin, which msld does not provide");
    for (const char *name : kApplePrivateBuiltins) {
      clang::IdentifierInfo *ii = pp.getIdentifierInfo(name);
      ii->setIsPoisoned();
      pp.SetPoisonReason(ii, id);
    }
    return EmitLLVMOnlyAction::BeginSourceFileAction(ci);
  }

  bool BeginInvocation(clang::CompilerInstance &ci) override {
    if (ci.hasTarget() && ci.getTarget().getTriple().isNVPTX())
      useGlobalMemoryForConstant(ci.getTarget());
    return EmitLLVMOnlyAction::BeginInvocation(ci);
  }

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci,
                                                        llvm::StringRef inFile) override {
    std::vector<std::unique_ptr<clang::ASTConsumer>> consumers;
    consumers.push_back(createInlineAsmConsumer());
    consumers.push_back(createKernelTemplatesConsumer());
    consumers.push_back(createTemplateFloatLiteralsConsumer());
    consumers.push_back(createConstantCopiesConsumer());
    if (cxx14Language_)
      consumers.push_back(createCxx17ExtensionsConsumer(kSourceRoot));
    consumers.push_back(std::make_unique<StageCollector>(ci, functions_, threadgroupVars_));
    if (repairs_)
      consumers.push_back(createCastRepairConsumer(*repairs_, kSourceRoot));
    consumers.push_back(EmitLLVMOnlyAction::CreateASTConsumer(ci, inFile));
    return std::make_unique<clang::MultiplexConsumer>(std::move(consumers));
  }

  // On the CPU, each global holding a `threadgroup` variable gets
  // `!msl.threadgroup !{}`: the execution runtime gives every threadgroup
  // its own copy (executor/WorkGroupFunction.h). They also go into
  // llvm.compiler.used: the optimizer keeps them (and their metadata) as
  // they are, and, their address having escaped, it cannot assume that the
  // barrier hooks (external calls) leave them alone, so threadgroup memory
  // accesses are not moved or folded across barriers.
  void EndSourceFileAction() override {
    clang::CodeGenerator *gen = getCodeGenerator();
    llvm::Module *m = gen ? gen->GetModule() : nullptr;
    if (m && !getCompilerInstance().getDiagnostics().hasErrorOccurred() && !llvm::Triple(m->getTargetTriple()).isNVPTX()) {
      std::vector<llvm::GlobalValue *> marked;
      for (const std::string &symbol : threadgroupVars_) {
        auto *g = m->getNamedGlobal(symbol);
        if (!g || g->getMetadata("msl.threadgroup"))
          continue;
        g->setMetadata("msl.threadgroup", llvm::MDNode::get(m->getContext(), {}));
        marked.push_back(g);
      }
      if (!marked.empty())
        llvm::appendToCompilerUsed(*m, marked);
    }
    EmitLLVMOnlyAction::EndSourceFileAction();
  }

private:
  std::vector<ShaderFunction> &functions_;
  std::vector<SourceEdit> *repairs_; // null on a repaired compile
  bool cxx14Language_;
  std::vector<std::string> threadgroupVars_; // their symbols
};

void initializeTargetsOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    ensureAttributesRegistered();
  });
}

std::string tripleOf(Arch arch) {
  return arch == Arch::NVPTX64 ? "nvptx64-nvidia-cuda" : "x86_64-unknown-linux-gnu";
}

Diagnostic commandLineError(std::string message) {
  Diagnostic d;
  d.file = "<command line>";
  d.severity = Severity::Error;
  d.message = std::move(message);
  return d;
}

/// The Clang driver command line for a compile: the frontend contract the
/// stdlib headers are written against (see compiler/stdlib/README.md).
std::vector<std::string> clangArgs(const CompileJob &job, const MetalOptions &opts,
                                   bool withStdlibPch = false) {
  std::vector<std::string> args = {
      "clang", "-x", "clcpp", "-cl-std=clc++1.0", "-cl-no-stdinc", "-nostdinc",
      "-target", tripleOf(job.target.arch), "-O2", "-Xclang", "-disable-llvm-passes",
      "-fno-discard-value-names",
      // half arithmetic on every target, and no double from unsuffixed
      // literals (see stdlib/FLAGS.txt).
      "-Xclang", "-cl-ext=+cl_khr_fp16,+cl_khr_int64_base_atomics,+cl_khr_int64_extended_atomics",
      "-cl-single-precision-constant",
      "-isystem", std::string(kStdlibRoot)};
  // By absolute path: a relative -include is looked up in the working
  // directory (the request's files) first.
  if (withStdlibPch)
    args.insert(args.end(), {"-include-pch", kStdlibPchPath});
  else
    args.insert(args.end(), {"-include", std::string(kStdlibRoot) + "__msl_prelude.h", "-include",
                             std::string(kStdlibRoot) + "__msl_stage.h"});
  args.insert(args.end(), {
      "-D__METAL_VERSION__=" + std::to_string(opts.std.metalVersionMacro()),
      opts.std.platform == Platform::IOS ? "-D__METAL_IOS__=1" : "-D__METAL_MACOS__=1",
      opts.fastMath ? "-ffast-math" : "-fno-fast-math"});
  // -fmetal-math-mode=relaxed: fast math that keeps INF and NaN.
  if (opts.fastMath && opts.honorInfNaN)
    args.insert(args.end(), {"-fhonor-infinities", "-fhonor-nans"});
  // Which the unqualified math functions are (metal_math):
  // -fmetal-math-fp32-functions=, else fast with fast math.
  if (opts.fastFunctions())
    args.push_back("-D__MSL_FAST_FUNCTIONS__=1");
  if (job.target.arch == Arch::NVPTX64) {
    // The driver takes -mcpu only for CUDA; say it to cc1 directly.
    std::string sm = job.target.cpu.empty() ? std::string(kDefaultSm) : job.target.cpu;
    args.insert(args.end(), {"-Xclang", "-target-cpu", "-Xclang", sm});
    // vec3 stores as <3 x T>, not widened to <4 x T>: the optimizer can then
    // evaluate program-scope constant initializers built from other
    // constants (`constant int3 b = int3(a.x, 0, a.z);`), which a GPU
    // module cannot run as a constructor.
    args.insert(args.end(), {"-Xclang", "-fpreserve-vec3-type"});
  }
  for (const auto &d : opts.defines)
    args.push_back("-D" + d.name + "=" + d.value.value_or("1"));
  for (const auto &dir : opts.includeDirs)
    args.push_back("-I" + std::string(kSourceRoot) + dir);
  // Valid Metal that Clang's C++17/OpenCL view warns about; Apple's compiler
  // does not, and -Werror builds must not fail on them: explicit template
  // arguments on an ADL call (C++20 in Clang's view) and INFINITY/NAN under
  // fast math; and a kernel template's instantiation returning `auto` while
  // it is still marked a kernel (see Attributes.cpp, kernel templates). The
  // user's own -W flags come after and can turn them back on.
  args.insert(args.end(), {"-Wno-c++20-extensions", "-Wno-nan-infinity-disabled",
                           "-Wno-return-type-c-linkage"});
  for (const auto &w : opts.warningFlags) // -Werror among them, in order
    args.push_back(w);
  if (opts.suppressWarnings)
    args.push_back("-w");
  args.push_back("-Qunused-arguments");
  args.push_back(kSourceRoot + job.mainPath);
  return args;
}

/// The cc1 invocation the driver makes of `args`, over the in-memory `fs`.
std::shared_ptr<clang::CompilerInvocation>
invocationOf(const std::vector<std::string> &args,
             llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> diags,
             llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs) {
  std::vector<const char *> argv;
  for (const auto &a : args)
    argv.push_back(a.c_str());
  clang::CreateInvocationOptions cio;
  cio.Diags = std::move(diags);
  cio.VFS = std::move(fs);
  cio.ProbePrecompiled = false;
  return clang::createInvocation(argv, cio);
}

/// The globals that static constructors (llvm.global_ctors) still write after
/// optimization, as "'a', 'b'" (demangled); empty if there are none.
std::string dynamicallyInitializedGlobals(llvm::Module &m) {
  auto *ctors = m.getGlobalVariable("llvm.global_ctors");
  if (!ctors || !ctors->hasInitializer())
    return {};
  // GlobalOpt folds the constructors it can evaluate and leaves an empty list.
  auto *list = llvm::dyn_cast<llvm::ConstantArray>(ctors->getInitializer());
  if (!list || list->getNumOperands() == 0)
    return {};
  std::set<std::string> names;
  for (unsigned i = 0; i < list->getNumOperands(); ++i) {
    auto *entry = llvm::dyn_cast<llvm::ConstantStruct>(list->getOperand(i));
    auto *fn = entry ? llvm::dyn_cast<llvm::Function>(entry->getOperand(1)->stripPointerCasts()) : nullptr;
    if (!fn)
      continue;
    // The constructor and what it calls (Clang's per-variable initializers).
    // Clang marks each initialized constant with llvm.invariant.start; on
    // NVPTX the store itself may be gone (constant memory).
    auto noteGlobal = [&](const llvm::Value *pointer) {
      if (const auto *g = llvm::dyn_cast<llvm::GlobalVariable>(llvm::getUnderlyingObject(pointer)))
        names.insert("'" + llvm::demangle(g->getName().str()) + "'");
    };
    std::vector<const llvm::Function *> work{fn};
    std::set<const llvm::Function *> seen{fn};
    while (!work.empty()) {
      const llvm::Function *f = work.back();
      work.pop_back();
      for (const auto &inst : llvm::instructions(*f)) {
        if (const auto *store = llvm::dyn_cast<llvm::StoreInst>(&inst))
          noteGlobal(store->getPointerOperand());
        const auto *call = llvm::dyn_cast<llvm::CallBase>(&inst);
        const llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
        if (!callee)
          continue;
        if (callee->getIntrinsicID() == llvm::Intrinsic::invariant_start)
          noteGlobal(call->getArgOperand(1));
        else if (!callee->isDeclaration() && seen.insert(callee).second)
          work.push_back(callee);
      }
    }
  }
  if (names.empty()) // written through calls the scan does not follow
    names.insert("(whose initializers call functions)");
  return llvm::join(names, ", ");
}

// ---- constructors through vector typedefs --------------------------------------
// `float4(a, b, c, d)` works because each vector name is also a function-like
// macro (see the prelude), but a typedef of a vector type
// (`typedef half4 ftype4;`, common in real shaders) is not. Every such
// typedef in the request's files gets the same kind of macro, forwarding to
// metal::detail::make<NAME>, so the macro is right whichever typedef of the
// name is active (#if-selected precisions) and expands only before `(`.

bool isVectorTypeName(llvm::StringRef name) {
  static const llvm::StringRef kElements[] = {"bool", "char", "uchar", "short", "ushort", "int",
                                              "uint", "long", "ulong", "half", "float"};
  if (name.size() < 2 || !llvm::is_contained(llvm::StringRef("234"), name.back()))
    return false;
  return llvm::is_contained(kElements, name.drop_back());
}

/// Adds the names `text` declares as vector types, `typedef [metal::]V NAME;`
/// or `using NAME = [metal::]V;`, to `names`. Raw-lexed, so comments and
/// string literals declare nothing; linear in the text. `text` must be
/// NUL-terminated (a std::string's data is), as the lexer reads one past it.
void collectVectorTypedefs(const std::string &text, std::set<std::string> &names) {
  clang::LangOptions lang;
  lang.CPlusPlus = lang.CPlusPlus11 = lang.CPlusPlus14 = lang.CPlusPlus17 = true;
  clang::Lexer lexer(clang::SourceLocation(), lang, text.data(), text.data(), text.data() + text.size());
  // The last tokens, enough for the longest form (`using N = metal :: V ;`).
  constexpr size_t kWindow = 7;
  std::array<clang::Token, kWindow> last;
  size_t count = 0;
  auto at = [&](size_t back) -> const clang::Token & { return last[(count - back) % kWindow]; };
  auto isWord = [&](size_t back, llvm::StringRef word) {
    return back <= count && at(back).is(clang::tok::raw_identifier) &&
           (word.empty() || at(back).getRawIdentifier() == word);
  };
  auto isPunct = [&](size_t back, clang::tok::TokenKind kind) { return back <= count && at(back).is(kind); };
  // `[metal ::] V` ending `back` tokens before the `;`; its length, or 0.
  auto vectorType = [&](size_t back) -> size_t {
    if (!isWord(back, "") || !isVectorTypeName(at(back).getRawIdentifier()))
      return 0;
    return isPunct(back + 1, clang::tok::coloncolon) && isWord(back + 2, "metal") ? 3 : 1;
  };
  clang::Token tok;
  do {
    lexer.LexFromRawLexer(tok);
    last[count++ % kWindow] = tok;
    if (!tok.is(clang::tok::semi))
      continue;
    // typedef [metal::]V NAME ;
    if (size_t n = vectorType(3); n && isWord(2, "") && isWord(3 + n, "typedef"))
      names.insert(at(2).getRawIdentifier().str());
    // using NAME = [metal::]V ;
    if (size_t n = vectorType(2); n && isPunct(2 + n, clang::tok::equal) && isWord(3 + n, "") &&
                                  isWord(4 + n, "using"))
      names.insert(at(3 + n).getRawIdentifier().str());
  } while (tok.isNot(clang::tok::eof));
}

std::string vectorTypedefMacros(const CompileJob &job) {
  std::set<std::string> names;
  collectVectorTypedefs(job.mainSource, names);
  for (const auto &[path, contents] : job.files)
    collectVectorTypedefs(contents, names);
  std::string out;
  for (const auto &n : names)
    out += "#define " + n + "(...) (::metal::detail::make<" + n + ">(__VA_ARGS__))\n";
  return out;
}

// ---- the precompiled stdlib --------------------------------------------------
// Parsing <metal_stdlib> costs far more than a small kernel, so each process
// keeps a few precompiled copies (prelude + stage macros + metal_stdlib), one
// per configuration that changes how the headers parse: target, language
// version and platform, fast-math and warning flags. A source uses one only
// when it begins with `#include <metal_stdlib>` (after comments, blank lines
// and #pragma lines), so the PCH is exactly the prefix the source would have
// parsed anyway: what a program sees never depends on the cache.
//
// No request can change a PCH: it is built over a file system holding only
// the stdlib (under /msl/stdlib/, which request paths cannot reach) and its
// one-line source, and is keyed by its command line and the stdlib's digest.
// A request whose own file would be found in place of a stdlib header (one
// at <-I dir>/metal_math) parses the headers itself, seeing its file as
// Clang's search order gives it, for that request only.

/// The SHA-256 of the stdlib headers, names and contents.
const std::string &stdlibDigest() {
  static const std::string digest = [] {
    llvm::SHA256 hash;
    for (const auto &[name, contents] : embeddedStdlib()) {
      // Length-prefixed so that moving bytes between files changes the digest.
      std::string header = name + '\0' + std::to_string(contents.size()) + '\0';
      hash.update(header);
      hash.update(contents);
    }
    return llvm::toHex(hash.final(), /*LowerCase=*/true);
  }();
  return digest;
}

/// A file system holding the stdlib and the PCH's source, nothing of a
/// request; the working directory is the (empty) compile root.
llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> stdlibFileSystem() {
  auto fs = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  fs->setCurrentWorkingDirectory(kSourceRoot);
  for (const auto &[name, contents] : embeddedStdlib())
    fs->addFile(kStdlibRoot + name, 0, llvm::MemoryBuffer::getMemBuffer(contents, name, false));
  fs->addFile(kStdlibPchSource, 0, llvm::MemoryBuffer::getMemBuffer("#include <metal_stdlib>\n"));
  return fs;
}

/// True when one of the job's files is at <-I dir>/<stdlib header>, where
/// `#include <header>` finds it before the stdlib's.
bool shadowsStdlibHeader(const CompileJob &job, const MetalOptions &opts) {
  for (const std::string &dir : opts.includeDirs) {
    const std::string prefix = dir == "." ? "" : dir + "/";
    for (const auto &[name, contents] : embeddedStdlib())
      if (job.files.count(prefix + name) || job.mainPath == prefix + name)
        return true;
  }
  return false;
}

/// True when the first directive of `source` (after comments, blank lines and
/// #pragma lines) is `#include <metal_stdlib>`.
bool beginsWithStdlibInclude(llvm::StringRef source) {
  while (!source.empty()) {
    source = source.ltrim();
    if (source.consume_front("//")) {
      source = source.drop_until([](char c) { return c == '\n'; });
    } else if (source.consume_front("/*")) {
      size_t end = source.find("*/");
      if (end == llvm::StringRef::npos)
        return false;
      source = source.drop_front(end + 2);
    } else if (source.starts_with("#")) {
      llvm::StringRef line = source.take_until([](char c) { return c == '\n'; });
      llvm::StringRef directive = line.drop_front(1).ltrim();
      if (directive.consume_front("include")) {
        directive = directive.ltrim();
        return directive.starts_with("<metal_stdlib>");
      }
      if (!directive.starts_with("pragma") || line.ends_with("\\"))
        return false;
      source = source.drop_front(line.size());
    } else {
      return false;
    }
  }
  return false;
}

class StdlibPchAction : public clang::ASTFrontendAction {
public:
  explicit StdlibPchAction(std::shared_ptr<clang::PCHBuffer> buffer) : buffer_(std::move(buffer)) {}

protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci,
                                                        llvm::StringRef) override {
    // The stdlib's classes get the same constant-memory copies as when the
    // headers are parsed with the source.
    std::vector<std::unique_ptr<clang::ASTConsumer>> consumers;
    consumers.push_back(createTemplateFloatLiteralsConsumer());
    consumers.push_back(createConstantCopiesConsumer());
    consumers.push_back(std::make_unique<clang::PCHGenerator>(
        ci.getPreprocessor(), ci.getModuleCache(), kStdlibPchPath, /*isysroot=*/"", buffer_,
        llvm::ArrayRef<std::shared_ptr<clang::ModuleFileExtension>>(),
        /*AllowASTWithErrors=*/false, /*IncludeTimestamps=*/false));
    return std::make_unique<clang::MultiplexConsumer>(std::move(consumers));
  }
  clang::TranslationUnitKind getTranslationUnitKind() override { return clang::TU_Prefix; }
  bool hasASTFileSupport() const override { return false; }
  bool BeginSourceFileAction(clang::CompilerInstance &ci) override {
    ci.getLangOpts().CompilingPCH = true;
    return true;
  }

private:
  std::shared_ptr<clang::PCHBuffer> buffer_;
};

class StdlibPchCache {
public:
  /// The PCH for this compile's configuration, built on first use; null if
  /// it cannot be built (the compile then parses the headers itself).
  std::shared_ptr<const std::string> get(const CompileJob &job, const MetalOptions &opts) {
    // Only what changes how the stdlib parses; user macros and include
    // directories are added after the PCH by the compile itself.
    MetalOptions config = opts;
    config.defines.clear();
    config.includeDirs.clear();
    std::vector<std::string> args = clangArgs(job, config);
    args.back() = kStdlibPchSource;
    // Everything the PCH is made of: its command line and its files.
    std::string key = llvm::join(args, "\x1f") + "\x1f" + stdlibDigest();
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it)
      if (it->first == key) {
        entries_.splice(entries_.begin(), entries_, it); // most recently used first
        return it->second;
      }
    auto pch = build(args, stdlibFileSystem());
    entries_.emplace_front(key, pch);
    if (entries_.size() > kMaxEntries)
      entries_.pop_back();
    return pch;
  }

private:
  static constexpr size_t kMaxEntries = 6;

  static std::shared_ptr<const std::string> build(const std::vector<std::string> &args,
                                                  llvm::IntrusiveRefCntPtr<llvm::vfs::FileSystem> fs) {
    clang::IgnoringDiagConsumer ignore;
    auto diagOpts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
    auto diags = clang::CompilerInstance::createDiagnostics(diagOpts.get(), &ignore, false);
    auto invocation = invocationOf(args, diags, fs);
    if (!invocation)
      return nullptr;
    clang::CompilerInstance ci;
    ci.setInvocation(std::move(invocation));
    ci.createDiagnostics(&ignore, false);
    ci.createFileManager(fs);
    auto buffer = std::make_shared<clang::PCHBuffer>();
    StdlibPchAction action(buffer);
    if (!ci.ExecuteAction(action) || !buffer->IsComplete || ci.getDiagnostics().hasErrorOccurred())
      return nullptr;
    return std::make_shared<const std::string>(buffer->Data.data(), buffer->Data.size());
  }

  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<const std::string>>> entries_;
};

StdlibPchCache &stdlibPchCache() {
  static StdlibPchCache cache;
  return cache;
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const Target &target, bool fastMath, bool finiteMath,
                                                         std::string &error) {
  std::string triple = tripleOf(target.arch);
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!t)
    return nullptr;
  std::string cpu = target.arch == Arch::NVPTX64
                        ? (target.cpu.empty() ? std::string(kDefaultSm) : target.cpu)
                        : std::string("x86-64");
  llvm::TargetOptions options;
  options.UnsafeFPMath = fastMath;
  options.NoInfsFPMath = finiteMath;
  options.NoNaNsFPMath = finiteMath;
  options.NoSignedZerosFPMath = fastMath;
  return std::unique_ptr<llvm::TargetMachine>(t->createTargetMachine(
      triple, cpu, "", options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Default));
}

// atomic_thread_fence with thread_scope_thread is a compiler-only fence
// (`fence syncscope("singlethread")`, from __atomic_signal_fence), which the
// NVPTX backend of LLVM 19 cannot select. Once the optimizer has honoured it
// it orders nothing a GPU thread can observe (there are no signal handlers),
// so on NVPTX it is dropped after optimization, before any artifact.
void dropSingleThreadFences(llvm::Module &m) {
  std::vector<llvm::Instruction *> fences;
  for (llvm::Function &f : m)
    for (llvm::Instruction &i : llvm::instructions(f))
      if (auto *fence = llvm::dyn_cast<llvm::FenceInst>(&i);
          fence && fence->getSyncScopeID() == llvm::SyncScope::SingleThread)
        fences.push_back(fence);
  for (llvm::Instruction *fence : fences)
    fence->eraseFromParent();
}

void optimize(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  if (tm.getTargetTriple().isNVPTX())
    registerNvptxFullUnroll(pb);
  pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(m, mam);
}

std::optional<std::string> emitPtx(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return std::nullopt;
  pm.run(m);
  return buffer.str().str();
}

} // namespace

std::vector<OutputKind> defaultOutputs(Arch arch) {
  if (arch == Arch::NVPTX64)
    return {OutputKind::PTX, OutputKind::Reflection};
  return {OutputKind::LLVMBitcode, OutputKind::Reflection};
}

namespace {
// Set once, before the first compile, by development tools (see
// useStdlibFromDirectory); msld and its workers never set it.
std::optional<std::map<std::string, std::string>> &stdlibOverride() {
  static std::optional<std::map<std::string, std::string>> files;
  return files;
}
} // namespace

const std::map<std::string, std::string> &embeddedStdlib() {
  return stdlibOverride() ? *stdlibOverride() : generatedStdlibFiles();
}

bool useStdlibFromDirectory(const std::string &dir, std::string &error) {
  std::map<std::string, std::string> files;
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (it->type() != llvm::sys::fs::file_type::regular_file)
      continue;
    llvm::StringRef rel = llvm::StringRef(it->path()).drop_front(dir.size()).ltrim('/');
    if (rel == "README.md" || rel == "FLAGS.txt")
      continue; // as cmake/EmbedFiles.cmake leaves them out
    auto buffer = llvm::MemoryBuffer::getFile(it->path());
    if (!buffer) {
      error = it->path() + ": " + buffer.getError().message();
      return false;
    }
    files[rel.str()] = (*buffer)->getBuffer().str();
  }
  if (ec || files.empty()) {
    error = dir + ": " + (ec ? ec.message() : "no stdlib headers there");
    return false;
  }
  stdlibOverride() = std::move(files);
  return true;
}

const std::string &compilerIdentity() {
  static const std::string identity = std::string("msld/") + MSLD_VERSION + " llvm/" + LLVM_VERSION_STRING +
                                      " stdlib/sha256:" + stdlibDigest();
  return identity;
}

namespace {
CompileResult compileOnce(const CompileJob &job, std::vector<SourceEdit> *repairs);
} // namespace

CompileResult compile(const CompileJob &job) {
  // A repair can uncover the next repairable error in the same expression
  // (`h * 2.0 + 1.0`: the second operator is checked once the first is
  // valid), so repairs accumulate over a few rounds.
  constexpr int kMaxRepairRounds = 8;
  // Repairs also come from a source that compiles (a C-style vector cast
  // compiled as a bit reinterpretation). A compile that found repairs stops
  // after the frontend, so only "no repairs" has a complete result here.
  std::vector<SourceEdit> repairs;
  CompileResult first = compileOnce(job, &repairs);
  if (repairs.empty())
    return first;
  CompileJob repaired = job;
  // The text of each request file by path: the main source or a header.
  auto textOf = [&](const std::string &path) -> std::string * {
    if (path == repaired.mainPath)
      return &repaired.mainSource;
    auto it = repaired.files.find(path);
    return it == repaired.files.end() ? nullptr : &it->second;
  };
  // One per round, each back to the round before; per file.
  std::vector<std::map<std::string, ColumnMap>> maps;
  int64_t micros = first.compileTimeMicros;
  auto errorCount = [](const CompileResult &r) {
    return std::count_if(r.diagnostics.begin(), r.diagnostics.end(),
                         [](const Diagnostic &d) { return d.severity == Severity::Error; });
  };
  std::optional<CompileResult> last;
  std::set<std::pair<std::string, unsigned>> editedLines; // edits never add or remove lines
  for (int round = 0; round < kMaxRepairRounds && !repairs.empty(); ++round) {
    maps.emplace_back();
    std::map<std::string, std::vector<SourceEdit>> byFile;
    for (SourceEdit &e : repairs)
      byFile[e.file].push_back(std::move(e));
    for (auto &[path, edits] : byFile) {
      std::string *text = textOf(path);
      if (!text)
        continue;
      // The lines edited, counted in one pass over the text.
      std::vector<size_t> offsets;
      for (const SourceEdit &e : edits)
        offsets.push_back(std::min<size_t>(e.offset, text->size()));
      std::sort(offsets.begin(), offsets.end());
      unsigned line = 1;
      size_t counted = 0;
      for (size_t offset : offsets) {
        line += unsigned(std::count(text->begin() + counted, text->begin() + offset, '\n'));
        counted = offset;
        editedLines.insert({path, line});
      }
      *text = applyEdits(*text, std::move(edits), maps.back()[path]);
    }
    repairs.clear();
    last = compileOnce(repaired, &repairs);
    micros += last->compileTimeMicros;
    if (std::getenv("MSLD_DEBUG_REPAIR")) { // developer aid: each round's sources and errors
      for (const auto &[path, unused] : maps.back())
        llvm::errs() << "=== repair round " << round + 1 << ": " << path << "\n" << *textOf(path) << "\n";
      for (const auto &d : last->diagnostics)
        llvm::errs() << d.file << ":" << d.line << ":" << d.column << ": " << d.message << "\n";
    }
    // More to repair: from errors, or from the AST of a round that compiled
    // (`int4(isnan(x) || __msl_b(x > y))` once the `||` is valid), whose
    // result is incomplete (a compile that found repairs stops after the
    // frontend).
    if (!repairs.empty())
      continue;
    break;
  }
  // The repaired sources' result stands when it compiled, or when it failed
  // with fewer errors, nothing left to repair and no error on an edited line
  // (which could be the repair's own doing): the repairs removed errors and
  // what remains is the source's own, so a real error next to a repaired
  // construct is reported alone. Otherwise the original's result.
  auto onEditedLine = [&](const CompileResult &r) {
    return std::any_of(r.diagnostics.begin(), r.diagnostics.end(), [&](const Diagnostic &d) {
      return d.severity == Severity::Error && editedLines.count({d.file, d.line});
    });
  };
  if (last && repairs.empty() &&
      (last->success || (errorCount(*last) < errorCount(first) && !onEditedLine(*last)))) {
    auto remap = [&](Diagnostic &d) {
      for (auto m = maps.rbegin(); m != maps.rend(); ++m)
        if (auto it = m->find(d.file); it != m->end())
          d.column = it->second.original(d.line, d.column);
    };
    for (auto &d : last->diagnostics) {
      remap(d);
      for (auto &n : d.notes)
        remap(n);
    }
    last->compileTimeMicros = micros;
    return std::move(*last);
  }
  // Not (only) repairable: the original source's result and diagnostics,
  // compiled in full.
  CompileResult original = compileOnce(job, nullptr);
  original.compileTimeMicros += micros;
  return original;
}

namespace {
/// "" when `job` is a request msld would queue (RequestChecks.h), else why not.
std::string checkRequest(const CompileJob &job) {
  const RequestLimits &limits = job.requestLimits;
  if (std::string e = checkRequestCounts(job.files.size(), job.functionConstants.size(), limits); !e.empty())
    return e;
  if (std::string e = checkRequestPath("main_path", job.mainPath, limits); !e.empty())
    return e;
  for (const auto &[path, contents] : job.files) {
    if (std::string e = checkRequestPath("file path", path, limits); !e.empty())
      return e;
    if (path == job.mainPath)
      return "file " + quoteForMessage(path) + " is also the main source";
  }
  for (const auto &[key, value] : job.functionConstants)
    if (std::string e = checkFunctionConstant(key, value, limits); !e.empty())
      return e;
  if (job.target.arch == Arch::NVPTX64 && !job.target.cpu.empty())
    return checkNvptxCpu(job.target.cpu);
  return "";
}

CompileResult compileOnce(const CompileJob &job, std::vector<SourceEdit> *repairs) {
  auto start = std::chrono::steady_clock::now();
  CompileResult result;
  std::optional<RepairCollector> repairCollector;
  if (repairs)
    repairCollector.emplace(*repairs, kSourceRoot);
  DiagnosticCollector collector(result.diagnostics, repairCollector ? &*repairCollector : nullptr, job);
  auto finish = [&]() -> CompileResult {
    collector.finish();
    result.compileTimeMicros = std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();
    return std::move(result);
  };
  auto refuse = [&](std::string message) {
    result.diagnostics.push_back(commandLineError(std::move(message)));
    return finish();
  };
  initializeTargetsOnce();

  std::string optionError;
  auto opts = parseMetalOptions(job.options, optionError, job.requestLimits);
  if (!opts)
    return refuse(optionError);
  if (std::string e = checkRequest(job); !e.empty())
    return refuse(e);
  std::vector<OutputKind> outputs = job.outputs.empty() ? defaultOutputs(job.target.arch) : job.outputs;
  for (OutputKind o : outputs)
    if (o == OutputKind::PTX && job.target.arch != Arch::NVPTX64)
      return refuse("PTX output needs the nvptx64 target");

  // The compiler's whole world: the stdlib and the request's files.
  llvm::IntrusiveRefCntPtr<llvm::vfs::InMemoryFileSystem> fs = stdlibFileSystem();
  for (const auto &[path, contents] : job.files)
    if (!fs->addFile(kSourceRoot + path, 0, llvm::MemoryBuffer::getMemBuffer(contents, path, false)))
      return refuse("file " + quoteForMessage(path) +
                    " conflicts with another file's path (a file cannot also be a directory)");
  if (!fs->addFile(kSourceRoot + job.mainPath, 0,
                   llvm::MemoryBuffer::getMemBuffer(job.mainSource, job.mainPath, false)))
    return refuse("main path " + quoteForMessage(job.mainPath) + " conflicts with a file's path");

  auto diagOpts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  auto diags = clang::CompilerInstance::createDiagnostics(diagOpts.get(), &collector, false);

  // The precompiled stdlib, when the source starts by including it and
  // none of its files would be found in place of a stdlib header.
  std::shared_ptr<const std::string> pch;
  // What the compile reads first: the first -include file, else the main file.
  llvm::StringRef first = job.mainSource;
  if (!opts->forcedIncludes.empty()) {
    auto it = job.files.find(opts->forcedIncludes.front());
    first = it == job.files.end() ? llvm::StringRef() : llvm::StringRef(it->second);
  }
  if (beginsWithStdlibInclude(first) && !shadowsStdlibHeader(job, *opts)) {
    pch = stdlibPchCache().get(job, *opts);
    if (pch)
      fs->addFile(kStdlibPchPath, 0, llvm::MemoryBuffer::getMemBuffer(*pch, kStdlibPchPath, false));
  }
  result.precompiledStdlib = pch != nullptr;
  std::vector<std::string> args = clangArgs(job, *opts, pch != nullptr);
  // A compile that collects repairs sees every error (up to the job's
  // diagnostic limits, which stop it as -ferror-limit would), not the
  // driver's first 19: each round then repairs all it can.
  if (repairs)
    args.insert(args.end() - 1, "-ferror-limit=0");
  if (std::string macros = vectorTypedefMacros(job); !macros.empty()) {
    fs->addFile(kVectorTypedefsPath, 0, llvm::MemoryBuffer::getMemBufferCopy(macros, kVectorTypedefsPath));
    // Before the main file, after the prelude (or the PCH that holds it).
    args.insert(args.end() - 1, {"-include", kVectorTypedefsPath});
  }
  // The user's -include files, after the stdlib, just before the main file.
  for (const std::string &file : opts->forcedIncludes)
    args.insert(args.end() - 1, {"-include", kSourceRoot + file});
  std::shared_ptr<clang::CompilerInvocation> invocation = invocationOf(args, diags, fs);
  if (!invocation) {
    if (result.diagnostics.empty())
      result.diagnostics.push_back(commandLineError("could not set up the compiler invocation"));
    return finish();
  }

  clang::CompilerInstance ci;
  ci.setInvocation(std::move(invocation));
  ci.createDiagnostics(&collector, false);
  collector.stopsCompile(ci.getDiagnostics());
  // Diagnostics are data here; no "N errors generated." on the worker's stderr.
  ci.getDiagnosticOpts().ShowCarets = false;
  ci.createFileManager(fs);
  llvm::LLVMContext context;
  std::vector<ShaderFunction> functions;
  AttributeScope attributeScope(job.functionConstants, opts->std.metalVersionMacro(),
                                opts->std.platform == Platform::IOS);
  MslAction action(&context, functions, repairs, /*cxx14Language=*/opts->std.major < 4);
  bool ok = ci.ExecuteAction(action);
  std::unique_ptr<llvm::Module> module = action.takeModule();
  // A source to repair is compiled again: optimizing this one would be
  // wasted (compile() recompiles the original in full if repair fails).
  if (!ok || !module || ci.getDiagnostics().hasErrorOccurred() || (repairs && !repairs->empty()))
    return finish();

  auto internalError = [&](const std::string &what) {
    result.diagnostics.push_back(commandLineError("internal compiler error: " + what));
    return finish();
  };
  makePreciseMathPrecise(*module);
  if (std::string err = lowerEntryPoints(*module, functions, job.target.arch); !err.empty())
    return internalError(err);
  std::string verifyMessage;
  llvm::raw_string_ostream verifyStream(verifyMessage);
  if (llvm::verifyModule(*module, &verifyStream))
    return internalError("invalid module after entry-point lowering: " + verifyMessage);

  std::string tmError;
  auto tm = createTargetMachine(job.target, opts->fastMath, opts->fastMath && !opts->honorInfNaN, tmError);
  if (!tm)
    return internalError(tmError);
  module->setDataLayout(tm->createDataLayout());
  if (job.target.arch == Arch::NVPTX64)
    relaxByteVectorAlignment(*module);
  optimize(*module, *tm);
  if (job.target.arch == Arch::NVPTX64) {
    correctlyRoundHalfDivision(*module);
    dropSingleThreadFences(*module);
    alignSharedMemory(*module);
    readConstantReferencesOnce(*module);
    compareLoopCountersAfterTheirStep(*module);
  }
  if (job.target.arch == Arch::NVPTX64)
    if (std::string vars = dynamicallyInitializedGlobals(*module); !vars.empty()) {
      Diagnostic d;
      d.file = job.mainPath;
      d.severity = Severity::Error;
      d.message = "program-scope variable(s) " + vars +
                  " need an initializer that runs code, which the nvptx64 target cannot run "
                  "(GPU code has no static constructors): give them constant initializers";
      result.diagnostics.push_back(std::move(d));
      return finish();
    }

  for (OutputKind o : outputs) {
    std::string &out = result.artifacts[o];
    switch (o) {
    case OutputKind::LLVMBitcode: {
      llvm::raw_string_ostream os(out);
      llvm::WriteBitcodeToFile(*module, os);
      break;
    }
    case OutputKind::LLVMIR: {
      llvm::raw_string_ostream os(out);
      module->print(os, nullptr);
      break;
    }
    case OutputKind::Reflection:
      out = reflectionJson(functions, job.target.arch == Arch::NVPTX64);
      break;
    case OutputKind::PTX:
      break; // last: code generation changes the module
    }
  }
  if (result.artifacts.count(OutputKind::PTX)) {
    auto ptx = emitPtx(*module, *tm);
    if (!ptx)
      return internalError("the NVPTX backend cannot emit assembly");
    result.artifacts[OutputKind::PTX] = std::move(*ptx);
  }
  result.success = true;
  return finish();
}
} // namespace

} // namespace msl::compiler
