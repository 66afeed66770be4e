//===- msl/compiler/Compiler.h - Compile MSL in-process with Clang 19 -----===//
//
// The compiler library's entry point: one call compiles one MSL source, with
// the headers it may include, into the artifacts asked for. Everything the
// compile can read is in the CompileJob (plus the embedded stdlib); nothing
// of the host file system is visible to it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/compiler/RequestChecks.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace msl::compiler {

enum class Arch { X86_64, NVPTX64 };

struct Target {
  Arch arch = Arch::X86_64;
  /// NVPTX: the SM, e.g. "sm_90". Empty means the default (sm_90).
  std::string cpu;
};

enum class OutputKind { LLVMBitcode, LLVMIR, PTX, Reflection };

struct CompileJob {
  /// Path of the main source relative to the compile root ("main.metal").
  std::string mainPath = "main.metal";
  std::string mainSource;
  /// Other readable files, by path relative to the compile root.
  std::map<std::string, std::string> files;
  /// The `metal` command line (see Options.h).
  std::vector<std::string> options;
  Target target;
  /// Empty means the target's defaults (see defaultOutputs).
  std::vector<OutputKind> outputs;
  /// Function constant values by index ("3") or name ("use_bias"), as
  /// literals ("true", "42", "0.5"); a constant without one is undefined.
  std::map<std::string, std::string> functionConstants;

  /// What the request may contain (RequestChecks.h), checked before
  /// compiling; msld checks with the same limits before queueing.
  RequestLimits requestLimits;

  /// Bounds on what the compile reports, so that a small source cannot make
  /// a huge result. Past either limit further diagnostics are dropped (not
  /// collected, not formatted), one final note (file "<msld>") says how many
  /// and why, and the compile stops at its next error, as clang's
  /// -ferror-limit does. Default: 200 diagnostics, notes included.
  size_t maxDiagnostics = 200;
  /// Default: 1 MiB of messages and file names.
  size_t maxDiagnosticBytes = size_t(1) << 20;
  /// A longer message is cut to this many bytes (default 4 KiB), ending in
  /// "... (N bytes)".
  size_t maxDiagnosticMessageBytes = 4096;
};

enum class Severity { Note, Remark, Warning, Error, Fatal };

struct Diagnostic {
  /// Relative to the compile root; "<command line>" for options, "<msld>"
  /// for the note on dropped diagnostics (see CompileJob::maxDiagnostics).
  std::string file;
  unsigned line = 0, column = 0;
  Severity severity = Severity::Error;
  std::string message;
  std::vector<Diagnostic> notes;
};

struct CompileResult {
  bool success = false;
  std::vector<Diagnostic> diagnostics;
  std::map<OutputKind, std::string> artifacts;
  int64_t compileTimeMicros = 0;
  /// The stdlib came from the process's precompiled copy (the source began
  /// with #include <metal_stdlib>) rather than being parsed.
  bool precompiledStdlib = false;
};

/// LLVM bitcode + reflection for x86-64, PTX + reflection for NVPTX.
std::vector<OutputKind> defaultOutputs(Arch arch);

/// Compiles `job`. Never throws for bad input: errors are diagnostics.
CompileResult compile(const CompileJob &job);

/// What produced a result, for the action key: msld version, LLVM version and
/// the SHA-256 of the embedded stdlib headers.
const std::string &compilerIdentity();

/// The embedded stdlib headers: file name -> contents.
const std::map<std::string, std::string> &embeddedStdlib();

/// For stdlib development only (msl-corpus, `msld-compile-worker --compile`):
/// read the stdlib headers from `dir` (a checkout's compiler/stdlib) instead of
/// the embedded copy, so editing a header needs no rebuild. Call before the
/// first compile; compilerIdentity() then hashes these files. False, with
/// `error` set, if the directory cannot be read.
bool useStdlibFromDirectory(const std::string &dir, std::string &error);

} // namespace msl::compiler
