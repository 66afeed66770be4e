//===- Reflection.h - What a kernel's interface is ------------------------===//
//
// Filled from the AST while parsing; drives entry-point lowering and becomes
// the REFLECTION artifact (JSON).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace msl::compiler {

enum class ArgKind { Buffer, Threadgroup, Builtin };

struct KernelArg {
  std::string name;
  ArgKind kind = ArgKind::Buffer;
  /// The value type (for pointers and references: the pointee), as written.
  std::string type;
  /// device, constant, threadgroup or thread.
  std::string addressSpace;
  /// "read" (const pointee) or "read_write".
  std::string access;
  bool isReference = false;
  std::optional<unsigned> index; // [[buffer(n)]], [[threadgroup(n)]]
  std::string builtin;           // [[thread_position_in_grid]], ...
  unsigned builtinWidth = 1;     // built-ins: components (1, 2 or 3)
  unsigned builtinBits = 32;     // built-ins: 16 (ushort) or 32 (uint)
};

struct KernelInfo {
  std::string name;   // as written in the source
  std::string symbol; // the LLVM symbol Clang gave it (and its entry point's)
  std::vector<KernelArg> args;
};

/// The REFLECTION artifact. `entryParams` documents, per kernel, the
/// parameters of the generated entry point for the target.
std::string reflectionJson(const std::vector<KernelInfo> &kernels, bool nvptx);

} // namespace msl::compiler
