//===- Attributes.h - MSL attributes registered with Clang ----------------===//
//
// Clang does not know [[buffer(n)]], [[position]], [[user(name)]] and the
// other MSL attributes. They are registered through ParsedAttrInfoRegistry
// from one catalog (name, argument shape, what it may be written on), checked
// when parsed, and kept on the declaration as an AnnotateAttr
// "msl:<name>" or "msl:<name>:<argument>", which the stage collector,
// reflection and entry-point lowering read back.
//
// Function constants: `constant T x [[function_constant(i)]];` gets its value
// from the compile (see FunctionConstantScope) as its initializer, and a
// companion `__msl_fc_defined_x` that `is_function_constant_defined(x)` reads.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <memory>

namespace clang {
class ASTConsumer;
class Decl;
}

namespace msl::compiler {

/// An MSL attribute found on a declaration.
struct MslAttribute {
  std::string name;                // "buffer", "position", "user", ...
  std::string argument;            // "", "3", "locn0", "quad,16"
  std::optional<unsigned> index;   // the argument when it is a number
};

/// Every MSL attribute on `D`, in source order.
std::vector<MslAttribute> mslAttributes(const clang::Decl *D);

/// The MSL attribute named `name` on `D`, if any.
std::optional<MslAttribute> findMslAttribute(const clang::Decl *D, const std::string &name);

/// True for the compute built-in input attributes ([[thread_position_in_grid]], ...).
bool isComputeBuiltin(const std::string &name);

/// True for the compute built-ins a fragment function may also take
/// ([[thread_index_in_simdgroup]], [[threads_per_simdgroup]],
/// [[thread_index_in_quadgroup]]).
bool isFragmentComputeBuiltin(const std::string &name);

/// True for the vertex and fragment built-ins ([[vertex_id]], [[position]], ...).
bool isGraphicsBuiltin(const std::string &name);

/// What the attribute handlers need to know about the compile running on
/// this thread, installed for its duration: the function constant values by
/// index ("3") or name ("use_bias") as literals ("true", "2", "1.5"), and the
/// language version (__METAL_VERSION__ spelling, 200 for 2.0) and platform
/// that gate attributes.
class AttributeScope {
public:
  AttributeScope(const std::map<std::string, std::string> &functionConstants, int metalVersion,
                 bool ios);
  ~AttributeScope();
  AttributeScope(const AttributeScope &) = delete;
  AttributeScope &operator=(const AttributeScope &) = delete;
};

/// Forces the registration objects' translation unit to be linked (the
/// attributes and `#pragma msl kernel`).
void ensureAttributesRegistered();

/// The consumer behind kernel templates (see Attributes.cpp): gives
/// `#pragma msl kernel` the compile's Sema and turns instantiated kernel
/// templates into ordinary functions. Part of every compile's consumers.
std::unique_ptr<clang::ASTConsumer> createKernelTemplatesConsumer();

} // namespace msl::compiler
