//===- SourceRepair.h - Rewrite what C++ for OpenCL rejects but Metal allows ===//
//
// A few valid Metal forms are errors, or mean something else, under Clang's
// C++-for-OpenCL rules, and no header can change that:
//  - a comparison of vectors initializing or assigned to a boolN (`bool4 b =
//    a < c;`, `b = a < c;`), held in an `auto` variable, or converted to a
//    number vector (`float4(a < b)`, `static_cast<V>(x > y)`, `V(x > y)` in
//    a template): OpenCL gives a -1/0 integer mask, Metal a boolN whose true
//    is 1; likewise `!`, `&&` and `||` of vectors;
//  - a float scalar with a half vector (`h * 255.0`): OpenCL's rank rule;
//  - static_cast, C-style and functional casts between vector types: an
//    error when the sizes differ, silently a bit reinterpretation when they
//    match (`(float4)int4v`); Metal converts lane by lane;
//  - `vec<bool, N>` (no bool lanes in OpenCL; boolN's lanes are plain char)
//    and `vec<T, 4>(a, b, c, d)` (a constructor call the prelude's macros
//    cannot see);
//  - `c ? temporary : local` with one struct type in two address spaces;
//  - attributes separated by a space (`[[color(0) index(1)]]`);
//  - a boolN beside a vector comparison in `||`/`&&`;
//  - `float4 (&out)[2]` (the constructor macro expands the type name:
//    written __msl_type<float4>), `uint2 v(a, b)` (direct initialization);
//  - reinterpret_cast dropping a pointee's const in an array of pointers
//    (written as the C-style cast);
//  - kernel templates and their `template [[host_name]] kernel void f<T>(..);`
//    instantiations (see kernelTemplateEdits and Attributes.cpp).
// The first compile records an edit for each such error (from Clang's
// diagnostics and their notes; once per place, however many template
// instantiations report it) and each such cast or comparison (from the
// AST, so a source that compiled is repaired too), in any of the request's
// files — the main source, its headers and -include preludes alike (also
// inside their macro definitions), never the stdlib — spelling the Metal meaning with a helper
// from __msl_stage.h (__msl_b, __msl_sc, __msl_scast, __msl_lanewise,
// __msl_value, __msl_type, metal::detail::make). The edited source is
// compiled again, for up to eight rounds while new repairs appear (a chain
// `0.5 * v + 0.25 * w - ...` over half vectors takes a round per operator:
// Clang checks the next one once the one before is valid). The
// repaired result stands, with diagnostics mapped back to the original
// columns, when it compiled, or when it failed with fewer errors and nothing
// left to repair (then what remains is the source's own error). Otherwise
// the original compile's result and diagnostics are reported.
// MSLD_DEBUG_REPAIR=1 prints each round's source and errors to stderr.
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
class FileID;
}

namespace msl::compiler {

struct SourceEdit {
  unsigned offset = 0; // in the file's bytes
  unsigned length = 0; // bytes replaced
  std::string text;
  /// The request file edited (its path as in the CompileJob: mainPath or a
  /// key of files).
  std::string file;
};

/// Watches a compile's errors and their notes; for each repairable form in
/// a request file (one whose path starts with `sourceRoot`, where the
/// compile mounts the request), appends the edits that repair it.
class RepairCollector {
public:
  RepairCollector(std::vector<SourceEdit> &edits, std::string sourceRoot)
      : edits_(edits), root_(std::move(sourceRoot)) {}
  void error(const clang::Diagnostic &info);
  void note(const clang::Diagnostic &info);

private:
  void errorEdits(const clang::Diagnostic &info, clang::FileID &fid);
  void noteEdits(const clang::Diagnostic &info, clang::FileID &fid);

  std::vector<SourceEdit> &edits_;
  std::string root_;
  bool lastErrorIsBoolVector_ = false; // what the notes that follow belong to
};

/// A consumer that records an edit for every C-style cast between vector
/// types with different element types in a request file (compiled as a bit
/// reinterpretation, meant as a conversion).
std::unique_ptr<clang::ASTConsumer> createCastRepairConsumer(std::vector<SourceEdit> &edits,
                                                              const std::string &sourceRoot);

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
