//===- SourceRepair.h - Rewrite what C++ for OpenCL rejects but Metal allows ===//
//
// A few valid Metal forms are errors under Clang's C++-for-OpenCL rules and
// no header can change that (besides those below, `vec<bool, N>`, which
// becomes vec<char, N>: boolN's lanes are plain char):
//  - a comparison of vectors initializing a boolN (`bool4 b = a < c;`):
//    OpenCL gives an integer mask, Metal a boolN;
//  - a float scalar with a half vector (`h * 255.0`): OpenCL's rank rule;
//  - static_cast between vector types (Metal: lane-wise value conversion);
//  - a C-style cast between vector types: an error when the sizes differ,
//    and silently a bit reinterpretation when they match (`(float4)int4v`),
//    where Metal converts lane by lane. The latter is found in the AST
//    (createCastRepairConsumer), so a source that compiled is repaired too.
// The first compile records, for each such error in the main file (outside
// macros), an edit that spells the Metal meaning with a stdlib helper
// (__msl_b, __msl_sc, __msl_scast in __msl_stage.h). If the compile failed
// and edits exist, the edited source is compiled once more; when that
// succeeds its result stands, with diagnostics mapped back to the original
// columns. Otherwise the first compile's diagnostics are reported.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace clang {
class ASTConsumer;
class Diagnostic;
}

namespace msl::compiler {

struct SourceEdit {
  unsigned offset = 0; // in the main file's bytes
  unsigned length = 0; // bytes replaced
  std::string text;
};

/// Watches a compile's errors and their notes; for each repairable form in
/// the main file, appends the edits that repair it.
class RepairCollector {
public:
  explicit RepairCollector(std::vector<SourceEdit> &edits) : edits_(edits) {}
  void error(const clang::Diagnostic &info);
  void note(const clang::Diagnostic &info);

private:
  std::vector<SourceEdit> &edits_;
  bool lastErrorIsBoolVector_ = false; // what the notes that follow belong to
};

/// A consumer that records an edit for every C-style cast between vector
/// types with different element types in the main file (compiled as a bit
/// reinterpretation, meant as a conversion).
std::unique_ptr<clang::ASTConsumer> createCastRepairConsumer(std::vector<SourceEdit> &edits);

/// Where the edited source's columns came from: per line, the edits'
/// (original column, growth), so a column can be mapped back.
class ColumnMap {
public:
  unsigned original(unsigned line, unsigned column) const;
  void add(unsigned line, unsigned column, int growth) { shifts_[line].push_back({column, growth}); }

private:
  std::map<unsigned, std::vector<std::pair<unsigned, int>>> shifts_;
};

/// `source` with `edits` applied (overlapping edits after the first are
/// dropped), and the column map back to `source`.
std::string applyEdits(const std::string &source, std::vector<SourceEdit> edits, ColumnMap &map);

} // namespace msl::compiler
