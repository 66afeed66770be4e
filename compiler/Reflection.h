//===- Reflection.h - The interface of each MSL function --------------------===//
//
// Filled from the AST while parsing (kernel, vertex, fragment, mesh and object
// functions);
// drives entry-point lowering (kernels) and becomes the REFLECTION artifact
// (JSON).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace msl::compiler {

enum class Stage { Kernel, Vertex, Fragment, Mesh, Object };

/// Kernel, mesh and object functions run as threadgroups of a grid: they take
/// the compute built-ins and threadgroup memory.
inline bool isGridStage(Stage s) { return s == Stage::Kernel || s == Stage::Mesh || s == Stage::Object; }

enum class ArgKind { Buffer, Threadgroup, Texture, Sampler, StageIn, Builtin };

/// A stage input or output: a [[stage_in]] struct member, a built-in, or a
/// member of the returned struct.
struct StageVariable {
  std::string name;
  std::string type;
  /// The attributes that place it: "attribute:0", "position", "user:locn0",
  /// "color:0", "flat", ...
  std::vector<std::string> attributes;
};

struct ShaderArg {
  std::string name;
  ArgKind kind = ArgKind::Buffer;
  /// The value type (for pointers and references: the pointee), as written.
  std::string type;
  /// device, constant, threadgroup or thread.
  std::string addressSpace;
  /// "read" (const pointee) or "read_write"; textures: their access.
  std::string access;
  bool isReference = false;
  /// Buffers (not handles): the size in bytes of the pointee or referenced
  /// type (`constant Params &`: sizeof(Params); `device float4 *`: 16), the
  /// least a bound buffer must hold; 0 when it has no size (void).
  uint64_t typeSize = 0;
  /// Buffers (not handles): the alignment in bytes of that type (`device
  /// uchar *`: 1, `device half4 *`: 8), which Metal requires of a binding
  /// offset; 0 when it has none (void). Not in the reflection JSON.
  uint64_t typeAlign = 0;
  /// Buffers: a non-const device pointer or reference, which the kernel
  /// may write through.
  bool writable = false;
  /// Passed as an opaque 64-bit handle (textures, samplers, acceleration
  /// structures and intersection function tables), not as memory.
  bool handle = false;
  std::optional<unsigned> index; // [[buffer(n)]], [[threadgroup(n)]], [[texture(n)]], [[sampler(n)]]
  std::string builtin;           // [[thread_position_in_grid]], [[vertex_id]], ...
  unsigned builtinWidth = 1;     // compute built-ins: components (1, 2 or 3)
  unsigned builtinBits = 32;     // compute built-ins: 16 (ushort) or 32 (uint)
  /// Textures and samplers: the N of a metal::array<T, N> argument (it binds
  /// N consecutive indices); 0 for a single one.
  unsigned arrayLength = 0;
  /// Textures: the stdlib type ("texture2d", "depth2d_array", ...) and its
  /// element type ("float", "half", "int", "uint", "short", "ushort"), what
  /// a runtime checks a bound texture against.
  std::string textureType;
  std::string elementType;
  /// [[function_constant(name)]]: the argument exists only when it is true.
  std::string functionConstant;
  /// False when that constant is false in this compile: the argument does
  /// not exist and needs no binding.
  bool present = true;
  /// [[stage_in]]: the members of the input struct.
  std::vector<StageVariable> members;
};

struct ShaderFunction {
  Stage stage = Stage::Kernel;
  std::string name;   // as written in the source
  std::string symbol; // the LLVM symbol Clang gave it
  /// [[host_name("...")]]: the name the API knows it by (kernels: their
  /// entry point's symbol).
  std::string hostName;
  std::vector<ShaderArg> args;
  /// What the function returns: one variable for a scalar/vector return,
  /// the members of a returned struct, nothing for void.
  std::vector<StageVariable> outputs;
  /// Function attributes: "max_total_threads_per_threadgroup:64",
  /// "early_fragment_tests", "patch:quad,4".
  std::vector<std::string> attributes;
  /// Kernels: the bytes of the `threadgroup` variables declared in the
  /// function (each at its alignment, laid out in declaration order), besides
  /// any [[threadgroup(n)]] arguments.
  uint64_t threadgroupMemoryBytes = 0;
};

/// The symbol a function is found by in the output: a kernel's entry point
/// (its host name, or Clang's symbol), any other function's Clang symbol.
inline const std::string &entrySymbol(const ShaderFunction &f) {
  return f.stage == Stage::Kernel && !f.hostName.empty() ? f.hostName : f.symbol;
}

const char *stageName(Stage s);

/// The REFLECTION artifact: {"functions": [...]} with, per kernel, the
/// parameters of the generated entry point for the target.
std::string reflectionJson(const std::vector<ShaderFunction> &functions, bool nvptx);

} // namespace msl::compiler
