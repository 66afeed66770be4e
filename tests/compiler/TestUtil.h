// Helpers shared by the msl_compiler tests.
#pragma once

#include "msl/compiler/Compiler.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace msl::compiler::test {

inline std::string readSourceFile(const std::string &relative) {
  std::ifstream in(std::string(MSLD_SOURCE_DIR) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << relative;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline const char *severityName(Severity s) {
  switch (s) {
  case Severity::Note:
    return "note";
  case Severity::Remark:
    return "remark";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  case Severity::Fatal:
    return "fatal";
  }
  return "?";
}

/// All diagnostics as "file:line:col: severity: message" lines, for failure
/// messages and substring checks.
inline std::string dump(const CompileResult &r) {
  std::string out;
  for (const auto &d : r.diagnostics) {
    out += d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " +
           severityName(d.severity) + ": " + d.message + "\n";
    for (const auto &n : d.notes)
      out += "  " + n.file + ":" + std::to_string(n.line) + ":" + std::to_string(n.column) +
             ": note: " + n.message + "\n";
  }
  return out;
}

inline bool isErrorSeverity(Severity s) { return s == Severity::Error || s == Severity::Fatal; }

inline std::vector<Diagnostic> errorsOf(const CompileResult &r) {
  std::vector<Diagnostic> out;
  for (const auto &d : r.diagnostics)
    if (isErrorSeverity(d.severity))
      out.push_back(d);
  return out;
}

inline std::vector<Diagnostic> warningsOf(const CompileResult &r) {
  std::vector<Diagnostic> out;
  for (const auto &d : r.diagnostics)
    if (d.severity == Severity::Warning)
      out.push_back(d);
  return out;
}

/// The first error whose message contains `needle`, or nullptr.
inline const Diagnostic *findError(const CompileResult &r, const std::string &needle) {
  for (const auto &d : r.diagnostics)
    if (isErrorSeverity(d.severity) && d.message.find(needle) != std::string::npos)
      return &d;
  return nullptr;
}

inline CompileJob makeJob(std::string source, std::vector<std::string> options = {},
                          std::vector<OutputKind> outputs = {OutputKind::LLVMIR},
                          Arch arch = Arch::X86_64) {
  CompileJob job;
  job.mainSource = std::move(source);
  job.options = std::move(options);
  job.outputs = std::move(outputs);
  job.target.arch = arch;
  return job;
}

/// Compiles to optimized LLVM IR for x86-64.
inline CompileResult compileIR(const std::string &source, std::vector<std::string> options = {}) {
  return compile(makeJob(source, std::move(options)));
}

inline size_t countOccurrences(const std::string &haystack, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + needle.size()))
    ++n;
  return n;
}

} // namespace msl::compiler::test
