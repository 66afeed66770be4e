// `mslc run`: compiles a kernel on msld and runs it with Executor.Execute,
// with its buffers given on the command line. Kept apart from main() so that
// parsing, value encoding and formatting can be unit-tested.
//
//   mslc run FILE.metal --kernel NAME [metal options] [--constant KEY=VALUE]...
//            [--device cpu|cuda[:N]]
//            (--grid X[,Y[,Z]] | --threadgroups X[,Y[,Z]]) --threadgroup x[,y[,z]]
//            [--buffer N=SPEC]... [--threadgroup-memory N=BYTES]... [--texture N=...]
//            [--sampler N=...] [--out [texture:]N=FILE]... [--print [texture:]N[:TYPE]]...
//            [--repeat R] [--timeout-ms MS] [--stats]
//   SPEC: @FILE | zeros:BYTES | TYPE:V,V,...
//   TYPE: float half bfloat int uint short ushort char uchar long ulong
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "msl/client/MslcDriver.h"
#include "msl/v1/execute.pb.h"

namespace msl::client::mslc {

// --- half and bfloat (IEEE binary16 and the upper half of binary32) --------

// Round to nearest, ties to even; overflow gives infinity, NaN stays NaN
// (quiet, sign kept).
std::uint16_t floatToHalf(float value);
std::uint16_t doubleToHalf(double value);
float halfToFloat(std::uint16_t bits);
std::uint16_t floatToBFloat(float value);
std::uint16_t doubleToBFloat(double value);
float bfloatToFloat(std::uint16_t bits);

// --- element types ----------------------------------------------------------

enum class ValueType { kFloat, kHalf, kBFloat, kInt, kUInt, kShort, kUShort, kChar, kUChar, kLong, kULong };

// "float", "half", ... (the TYPE names above).
std::optional<ValueType> parseValueType(std::string_view name);
std::string_view valueTypeName(ValueType type);
std::size_t valueTypeSize(ValueType type);

// The scalar type whose values make up a reflection type name: "float" and
// "float4", "packed_half3", "float4x4" -> float; "atomic_uint" -> uint;
// "uint32_t" -> uint; "bool" -> uchar. nullopt for structs and the rest.
std::optional<ValueType> elementTypeOf(std::string_view reflection_type);

// "V,V,..." as consecutive little-endian values of `type`. Integers are
// decimal or 0x hex (a leading '-' for the signed types) and must fit the
// type; floats are what strtod takes (1.5, -2e-3, inf, nan, 0x1p-3), rounded
// to the type. False with *error naming the bad value.
bool encodeValues(ValueType type, std::string_view list, std::string* out, std::string* error);
// The bytes as values of `type`, comma-separated (no spaces); floats in the
// shortest form that reads back as the same value. Trailing bytes short of
// a whole value are left out.
std::string formatValues(ValueType type, std::string_view bytes);
// Elements of `element_size` bytes as lowercase hex, comma-separated (the
// last one may be shorter).
std::string formatHex(std::string_view bytes, std::size_t element_size);

// --- command line -----------------------------------------------------------

// --buffer N=SPEC.
struct BufferSpec {
  std::uint32_t index = 0;
  enum Kind { kFile, kZeros, kValues } kind = kValues;
  std::string file;          // kFile: the path after '@'
  std::uint64_t zeros = 0;   // kZeros
  ValueType type = ValueType::kFloat;  // kValues
  std::string bytes;         // kValues: the encoded values
};
// "N=SPEC" into *out (a file is not read here).
bool parseBufferSpec(std::string_view arg, BufferSpec* out, std::string* error);

// "X[,Y[,Z]]": each at least 1; Y and Z default to 1.
bool parseSize3(std::string_view spec, msl::v1::Size3* out, std::string* error);

// --texture N=TYPE:FORMAT:W[,H[,D]][:@FILE|:zeros], TYPE 1d|2d|2d_array|3d
// (for 2d_array the third size is the array length), FORMAT r8unorm,
// rg8unorm, rgba8unorm, r16float, ..., rgba32uint; the file holds the texels
// row by row, tightly packed; no file (or zeros) means zeros.
struct TextureSpec {
  msl::v1::TextureBinding binding;
  std::string file;  // empty: zeros
};
bool parseTextureSpec(std::string_view arg, TextureSpec* out, std::string* error);

// --sampler N=KEY=VALUE,...: filter|min|mag=nearest|linear,
// address|s|t|r=clamp_to_edge|repeat|mirrored_repeat|clamp_to_zero|clamp_to_border,
// coord=normalized|pixel, border=transparent_black|opaque_black|opaque_white,
// compare=never|less|less_equal|greater|greater_equal|equal|not_equal|always.
// Defaults: nearest, clamp_to_edge, normalized, transparent_black, never.
// "N" alone takes the defaults.
bool parseSamplerSpec(std::string_view arg, msl::v1::SamplerBinding* out, std::string* error);

struct RunInvocation : SourceOptions {
  bool help = false;
  std::string input;   // FILE.metal, as given
  std::string kernel;  // --kernel
  std::string device = "cpu";  // "cpu" or "cuda:N"
  bool grid_in_threads = true;  // --grid (dispatchThreads) or --threadgroups
  msl::v1::Size3 grid;
  msl::v1::Size3 threadgroup;  // --threadgroup
  std::vector<BufferSpec> buffers;  // in command-line order
  std::map<std::uint32_t, std::uint32_t> threadgroup_memory;  // index -> bytes
  std::vector<TextureSpec> textures;
  std::vector<msl::v1::SamplerBinding> samplers;
  std::vector<std::pair<std::uint32_t, std::string>> outs;  // --out N=FILE
  std::vector<std::pair<std::uint32_t, std::string>> texture_outs;  // --out texture:N=FILE
  struct Print {
    std::uint32_t index = 0;
    bool texture = false;           // --print texture:N
    std::optional<ValueType> type;  // none: from the kernel's reflection (textures: the format's)
  };
  std::vector<Print> prints;
  std::uint32_t repeat = 0;      // 0: once
  std::uint32_t timeout_ms = 0;  // 0: the server's default
};

// The arguments after "run". Returns false with *error set on bad usage.
bool parseRunCommandLine(const std::vector<std::string>& args, const char* env_address,
                         const std::filesystem::path& cwd, RunInvocation* out, std::string* error);

std::string runUsage();

// The ExecuteRequest of an invocation, around `compile`: one buffer and one
// binding per --buffer (@FILE read relative to `cwd`), in order. False with
// *error set when a file cannot be read.
bool buildExecuteRequest(const RunInvocation& inv, const msl::v1::CompileRequest& compile,
                         const std::filesystem::path& cwd, msl::v1::ExecuteRequest* out,
                         std::string* error);

// The compile target and outputs msld's Executor compiles a device's kernels
// with (so that a Compile of the same request shares its action-cache entry):
// x86_64 with LLVM bitcode and reflection for "cpu", nvptx64 with PTX and
// reflection for "cuda:N".
msl::v1::Target targetForDevice(const std::string& device);
std::vector<msl::v1::ArtifactKind> outputsForDevice(const std::string& device);

// The type and size of the buffer argument at [[buffer(index)]] of `kernel`
// (its name or symbol) in msld's reflection JSON. False with *error set when
// the JSON, the kernel or the argument is not there.
struct BufferArgument {
  std::string name;
  std::string type;          // the reflection's "type", e.g. "float", "Params"
  std::uint64_t type_size = 0;
};
bool findBufferArgument(const std::string& reflection_json, const std::string& kernel,
                        std::uint32_t index, BufferArgument* out, std::string* error);

// The whole `mslc run` (args after "run"): parse, compile (diagnostics to
// err), execute, write --out files and --print lines to `out`. Returns the
// exit status (0 ok, 1 failure).
int runKernel(const std::vector<std::string>& args, const char* env_address, std::ostream& out,
              std::ostream& err);

}  // namespace msl::client::mslc
