#include "msl/compiler/Compiler.h"

#include "Attributes.h"
#include "EntryPoints.h"
#include "Reflection.h"
#include "msl/compiler/Options.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Frontend/Utils.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <chrono>
#include <mutex>

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

/// Collects Clang's diagnostics as data; notes attach to the diagnostic
/// before them.
class DiagnosticCollector : public clang::DiagnosticConsumer {
public:
  explicit DiagnosticCollector(std::vector<Diagnostic> &out) : out_(out) {}

  void HandleDiagnostic(clang::DiagnosticsEngine::Level level,
                        const clang::Diagnostic &info) override {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    Diagnostic d;
    d.severity = severityOf(level);
    llvm::SmallString<256> message;
    info.FormatDiagnostic(message);
    d.message = message.str().str();
    if (info.getLocation().isValid() && info.hasSourceManager()) {
      clang::PresumedLoc loc = info.getSourceManager().getPresumedLoc(info.getLocation());
      if (loc.isValid()) {
        d.file = displayPath(loc.getFilename());
        d.line = loc.getLine();
        d.column = loc.getColumn();
      }
    }
    if (d.severity == Severity::Note && !out_.empty())
      out_.back().notes.push_back(std::move(d));
    else
      out_.push_back(std::move(d));
  }

private:
  std::vector<Diagnostic> &out_;
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

/// Finds kernel functions as they are parsed, checks the argument rules that
/// Clang cannot know, and records their interface.
class KernelCollector : public clang::ASTConsumer {
public:
  KernelCollector(clang::CompilerInstance &ci, std::vector<KernelInfo> &out) : ci_(ci), out_(out) {}

  bool HandleTopLevelDecl(clang::DeclGroupRef group) override {
    for (clang::Decl *d : group)
      visit(d);
    return true;
  }

private:
  void visit(clang::Decl *d) {
    // Kernels may sit in namespaces, extern "C" blocks and the like.
    if (llvm::isa<clang::NamespaceDecl, clang::LinkageSpecDecl, clang::ExportDecl>(d)) {
      for (clang::Decl *inner : llvm::cast<clang::DeclContext>(d)->decls())
        visit(inner);
      return;
    }
    auto *fd = llvm::dyn_cast<clang::FunctionDecl>(d);
    if (!fd || !fd->hasAttr<clang::OpenCLKernelAttr>() || !fd->doesThisDeclarationHaveABody())
      return;
    collect(fd);
  }

  void error(clang::SourceLocation loc, llvm::StringRef message) {
    auto &diags = ci_.getDiagnostics();
    diags.Report(loc, diags.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0")) << message;
  }

  void collect(clang::FunctionDecl *fd) {
    clang::ASTContext &ctx = fd->getASTContext();
    KernelInfo k;
    k.name = fd->getNameAsString();
    std::unique_ptr<clang::MangleContext> mangler(ctx.createMangleContext());
    if (mangler->shouldMangleDeclName(fd)) {
      llvm::raw_string_ostream os(k.symbol);
      mangler->mangleName(clang::GlobalDecl(fd), os);
    } else {
      k.symbol = k.name;
    }
    std::map<std::pair<ArgKind, unsigned>, std::string> used;
    clang::PrintingPolicy policy(ctx.getLangOpts());
    policy.SuppressTagKeyword = true;
    for (clang::ParmVarDecl *p : fd->parameters()) {
      KernelArg a;
      a.name = p->getNameAsString();
      auto attr = findMslAttribute(p);
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
      a.type = value.getUnqualifiedType().getAsString(policy);
      const std::string what = "argument '" + a.name + "' of kernel '" + k.name + "'";

      if (attr && isComputeBuiltin(attr->name)) {
        a.kind = ArgKind::Builtin;
        a.builtin = attr->name;
        clang::QualType elem = type;
        if (auto *vt = type->getAs<clang::VectorType>()) {
          elem = vt->getElementType();
          a.builtinWidth = vt->getNumElements();
        }
        a.builtinBits = unsigned(ctx.getTypeSize(elem));
        bool intOk = elem->isUnsignedIntegerType() &&
                     (ctx.getTypeSize(elem) == 32 || ctx.getTypeSize(elem) == 16);
        if (type->isPointerType() || type->isReferenceType() || !intOk) {
          error(p->getLocation(), "built-in " + what + " [[" + attr->name +
                                      "]] must be uint or ushort (or a vector of them), not '" +
                                      type.getAsString(policy) + "'");
          continue;
        }
      } else if (a.addressSpace == "device" || a.addressSpace == "constant") {
        a.kind = ArgKind::Buffer;
        if (!attr || attr->name != "buffer") {
          error(p->getLocation(), a.addressSpace + " " + what + " needs a [[buffer(n)]] index");
          continue;
        }
        a.index = attr->index;
      } else if (a.addressSpace == "threadgroup") {
        a.kind = ArgKind::Threadgroup;
        if (!attr || attr->name != "threadgroup") {
          error(p->getLocation(), "threadgroup " + what + " needs a [[threadgroup(n)]] index");
          continue;
        }
        a.index = attr->index;
      } else {
        error(p->getLocation(),
              what + " must be a device or constant buffer ([[buffer(n)]]), a threadgroup "
                     "buffer ([[threadgroup(n)]]) or a built-in such as "
                     "[[thread_position_in_grid]]");
        continue;
      }
      if (a.index) {
        auto [it, inserted] = used.emplace(std::make_pair(a.kind, *a.index), a.name);
        if (!inserted)
          error(p->getLocation(), what + " uses [[" +
                                      std::string(a.kind == ArgKind::Buffer ? "buffer" : "threadgroup") +
                                      "(" + std::to_string(*a.index) + ")]], already taken by '" +
                                      it->second + "'");
      }
      k.args.push_back(std::move(a));
    }
    if (!fd->getReturnType()->isVoidType())
      error(fd->getLocation(), "kernel function '" + k.name + "' must return void");
    out_.push_back(std::move(k));
  }

  clang::CompilerInstance &ci_;
  std::vector<KernelInfo> &out_;
};

/// Parses, checks kernels and emits LLVM IR (no optimization yet: entry
/// points are generated first, then the whole module is optimized once).
class MslAction : public clang::EmitLLVMOnlyAction {
public:
  MslAction(llvm::LLVMContext *ctx, std::vector<KernelInfo> &kernels)
      : EmitLLVMOnlyAction(ctx), kernels_(kernels) {}

protected:
  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance &ci,
                                                        llvm::StringRef inFile) override {
    std::vector<std::unique_ptr<clang::ASTConsumer>> consumers;
    consumers.push_back(std::make_unique<KernelCollector>(ci, kernels_));
    consumers.push_back(EmitLLVMOnlyAction::CreateASTConsumer(ci, inFile));
    return std::make_unique<clang::MultiplexConsumer>(std::move(consumers));
  }

private:
  std::vector<KernelInfo> &kernels_;
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
std::vector<std::string> clangArgs(const CompileJob &job, const MetalOptions &opts) {
  std::vector<std::string> args = {
      "clang", "-x", "clcpp", "-cl-std=clc++1.0", "-cl-no-stdinc", "-nostdinc",
      "-target", tripleOf(job.target.arch), "-O2", "-Xclang", "-disable-llvm-passes",
      "-fno-discard-value-names",
      // half arithmetic on every target, and no double from unsuffixed
      // literals (see stdlib/FLAGS.txt).
      "-Xclang", "-cl-ext=+cl_khr_fp16", "-cl-single-precision-constant",
      "-isystem", std::string(kStdlibRoot), "-include", "__msl_prelude.h",
      "-D__METAL_VERSION__=" + std::to_string(opts.std.metalVersionMacro()),
      opts.std.platform == Platform::IOS ? "-D__METAL_IOS__=1" : "-D__METAL_MACOS__=1",
      opts.fastMath ? "-ffast-math" : "-fno-fast-math"};
  if (job.target.arch == Arch::NVPTX64) {
    // The driver takes -mcpu only for CUDA; say it to cc1 directly.
    std::string sm = job.target.cpu.empty() ? std::string(kDefaultSm) : job.target.cpu;
    args.insert(args.end(), {"-Xclang", "-target-cpu", "-Xclang", sm});
  }
  for (const auto &d : opts.defines)
    args.push_back("-D" + d.name + "=" + d.value.value_or("1"));
  for (const auto &dir : opts.includeDirs)
    args.push_back("-I" + std::string(kSourceRoot) + dir);
  for (const auto &w : opts.warningFlags) // -Werror among them, in order
    args.push_back(w);
  if (opts.suppressWarnings)
    args.push_back("-w");
  args.push_back("-Qunused-arguments");
  args.push_back(kSourceRoot + job.mainPath);
  return args;
}

std::unique_ptr<llvm::TargetMachine> createTargetMachine(const Target &target, bool fastMath,
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
  options.NoInfsFPMath = fastMath;
  options.NoNaNsFPMath = fastMath;
  options.NoSignedZerosFPMath = fastMath;
  return std::unique_ptr<llvm::TargetMachine>(t->createTargetMachine(
      triple, cpu, "", options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Default));
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

const std::map<std::string, std::string> &embeddedStdlib() { return generatedStdlibFiles(); }

const std::string &compilerIdentity() {
  static const std::string identity = [] {
    llvm::SHA256 hash;
    for (const auto &[name, contents] : embeddedStdlib()) {
      // Length-prefixed so that moving bytes between files changes the digest.
      std::string header = name + '\0' + std::to_string(contents.size()) + '\0';
      hash.update(header);
      hash.update(contents);
    }
    auto digest = hash.final();
    return std::string("msld/") + MSLD_VERSION + " llvm/" + LLVM_VERSION_STRING +
           " stdlib/sha256:" + llvm::toHex(digest, /*LowerCase=*/true);
  }();
  return identity;
}

CompileResult compile(const CompileJob &job) {
  auto start = std::chrono::steady_clock::now();
  CompileResult result;
  auto finish = [&]() -> CompileResult {
    result.compileTimeMicros = std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();
    return std::move(result);
  };
  initializeTargetsOnce();

  std::string optionError;
  auto opts = parseMetalOptions(job.options, optionError);
  if (!opts) {
    result.diagnostics.push_back(commandLineError(optionError));
    return finish();
  }
  for (const auto &dir : opts->includeDirs)
    if (!isCanonicalRelativePath(dir) && dir != ".") {
      result.diagnostics.push_back(commandLineError(
          "-I " + dir + ": include directories must be relative to the compile root, without '.', '..' or empty parts"));
      return finish();
    }
  std::vector<OutputKind> outputs = job.outputs.empty() ? defaultOutputs(job.target.arch) : job.outputs;
  for (OutputKind o : outputs)
    if (o == OutputKind::PTX && job.target.arch != Arch::NVPTX64) {
      result.diagnostics.push_back(commandLineError("PTX output needs the nvptx64 target"));
      return finish();
    }

  // The compiler's whole world: the request's files and the stdlib.
  auto fs = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  fs->setCurrentWorkingDirectory(kSourceRoot);
  for (const auto &[name, contents] : embeddedStdlib())
    fs->addFile(kStdlibRoot + name, 0, llvm::MemoryBuffer::getMemBuffer(contents, name, false));
  for (const auto &[path, contents] : job.files) {
    if (path == job.mainPath) {
      result.diagnostics.push_back(commandLineError("file '" + path + "' is also the main source"));
      return finish();
    }
    if (!isCanonicalRelativePath(path)) {
      result.diagnostics.push_back(commandLineError(
          "file path '" + path + "' must be relative to the compile root, without '.', '..' or empty parts"));
      return finish();
    }
    if (!fs->addFile(kSourceRoot + path, 0, llvm::MemoryBuffer::getMemBuffer(contents, path, false))) {
      result.diagnostics.push_back(commandLineError(
          "file '" + path + "' conflicts with another file's path (a file cannot also be a directory)"));
      return finish();
    }
  }
  if (!isCanonicalRelativePath(job.mainPath)) {
    result.diagnostics.push_back(commandLineError(
        "main path '" + job.mainPath + "' must be relative to the compile root, without '.', '..' or empty parts"));
    return finish();
  }
  if (!fs->addFile(kSourceRoot + job.mainPath, 0,
                   llvm::MemoryBuffer::getMemBuffer(job.mainSource, job.mainPath, false))) {
    result.diagnostics.push_back(commandLineError(
        "main path '" + job.mainPath + "' conflicts with a file's path"));
    return finish();
  }

  DiagnosticCollector collector(result.diagnostics);
  auto diagOpts = llvm::makeIntrusiveRefCnt<clang::DiagnosticOptions>();
  auto diags = clang::CompilerInstance::createDiagnostics(diagOpts.get(), &collector, false);

  std::vector<std::string> args = clangArgs(job, *opts);
  std::vector<const char *> argv;
  for (const auto &a : args)
    argv.push_back(a.c_str());
  clang::CreateInvocationOptions cio;
  cio.Diags = diags;
  cio.VFS = fs;
  cio.ProbePrecompiled = false;
  std::shared_ptr<clang::CompilerInvocation> invocation = clang::createInvocation(argv, cio);
  if (!invocation) {
    if (result.diagnostics.empty())
      result.diagnostics.push_back(commandLineError("could not set up the compiler invocation"));
    return finish();
  }

  clang::CompilerInstance ci;
  ci.setInvocation(std::move(invocation));
  ci.createDiagnostics(&collector, false);
  // Diagnostics are data here; no "N errors generated." on the worker's stderr.
  ci.getDiagnosticOpts().ShowCarets = false;
  ci.createFileManager(fs);
  llvm::LLVMContext context;
  std::vector<KernelInfo> kernels;
  MslAction action(&context, kernels);
  bool ok = ci.ExecuteAction(action);
  std::unique_ptr<llvm::Module> module = action.takeModule();
  if (!ok || !module || ci.getDiagnostics().hasErrorOccurred())
    return finish();

  auto internalError = [&](const std::string &what) {
    result.diagnostics.push_back(commandLineError("internal compiler error: " + what));
    return finish();
  };
  if (std::string err = lowerEntryPoints(*module, kernels, job.target.arch); !err.empty())
    return internalError(err);
  std::string verifyMessage;
  llvm::raw_string_ostream verifyStream(verifyMessage);
  if (llvm::verifyModule(*module, &verifyStream))
    return internalError("invalid module after entry-point lowering: " + verifyMessage);

  std::string tmError;
  auto tm = createTargetMachine(job.target, opts->fastMath, tmError);
  if (!tm)
    return internalError(tmError);
  module->setDataLayout(tm->createDataLayout());
  optimize(*module, *tm);

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
      out = reflectionJson(kernels, job.target.arch == Arch::NVPTX64);
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

} // namespace msl::compiler
