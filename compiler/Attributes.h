//===- Attributes.h - MSL attributes registered with Clang ----------------===//
//
// Clang does not know [[buffer(n)]], [[thread_position_in_grid]] and the other
// MSL attributes. They are registered through ParsedAttrInfoRegistry so they
// are checked when parsed and kept on the declaration as an AnnotateAttr
// "msl:<name>" or "msl:<name>:<index>", which reflection and entry-point
// lowering read back.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>

namespace clang {
class Decl;
}

namespace msl::compiler {

/// An MSL attribute found on a declaration.
struct MslAttribute {
  std::string name;            // "buffer", "threadgroup", "thread_position_in_grid", ...
  std::optional<unsigned> index; // for buffer(n), threadgroup(n), texture(n), sampler(n)
};

/// The MSL attribute on `D`, if any (the first one).
std::optional<MslAttribute> findMslAttribute(const clang::Decl *D);

/// True for the compute built-in input attributes of MSL 2.0.
bool isComputeBuiltin(const std::string &name);

/// Forces the registration object's translation unit to be linked.
void ensureAttributesRegistered();

} // namespace msl::compiler
