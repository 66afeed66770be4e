//===- msl/cache/ActionKey.h - Hermetic action keys -------------*- C++ -*-===//
//
// Builds the action-cache key of a compile, like ccache's/sccache's hash:
// a SHA-256 over everything that can change the output and nothing else.
// See cache/README.md for the exact contents and serialization. The
// serialization is versioned and length-prefixed, so two different inputs
// can never serialize to the same bytes (no "a"+"bc" == "ab"+"c").
//
//===----------------------------------------------------------------------===//
#ifndef MSL_CACHE_ACTIONKEY_H
#define MSL_CACHE_ACTIONKEY_H

#include "msl/cache/Digest.h"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace msl::cache {

/// Bumped whenever the serialization or the meaning of a field changes, so
/// old cache entries simply stop matching.
inline constexpr std::string_view kActionKeyVersion = "msld-action-v1";

class ActionKeyBuilder {
public:
  /// The translation unit: its request path and content digest.
  ActionKeyBuilder &setMainSource(std::string Path, Digest D);

  /// Another request file (header, include). Order of calls does not matter:
  /// files are keyed sorted by path. Re-adding a path replaces its digest.
  ActionKeyBuilder &addFile(std::string Path, Digest D);

  /// Normalized compiler options. Order is preserved on purpose: "-DA=1
  /// -DA=2" and "-DA=2 -DA=1" define different macros.
  ActionKeyBuilder &setOptions(std::vector<std::string> NormalizedOptions);

  /// Target architecture ("x86_64", "nvptx64") and CPU ("sm_90"; "" for x86_64).
  ActionKeyBuilder &setTarget(std::string Arch, std::string Cpu);

  /// Requested outputs ("llvm-bc", "llvm-ir", "ptx", "reflection"), order
  /// preserved because the response lists outputs positionally.
  ActionKeyBuilder &setOutputs(std::vector<std::string> Outputs);

  /// Function constant values by index or name (sorted: a map has no order).
  ActionKeyBuilder &setFunctionConstants(std::map<std::string, std::string> Values);

  /// Everything about the compiler that can change its output; build it
  /// msld uses the identity its compile workers report
  /// (msl::compiler::compilerIdentity()).
  ActionKeyBuilder &setCompilerIdentity(std::string Identity);

  /// Canonical identity string: msld version, LLVM version and the digest
  /// of the embedded Metal stdlib, length-prefixed.
  static std::string compilerIdentity(std::string_view MsldVersion,
                                      std::string_view LlvmVersion,
                                      const Digest &StdlibDigest);

  /// The unambiguous byte serialization that build() hashes (for debugging
  /// and tests).
  std::string serialize() const;

  /// Lowercase hex SHA-256 of serialize(): 64 characters.
  std::string build() const;

private:
  std::optional<std::pair<std::string, Digest>> MainSource;
  std::map<std::string, Digest> Files; // sorted by path
  std::vector<std::string> Options;
  std::string Arch, Cpu;
  std::vector<std::string> Outputs;
  std::map<std::string, std::string> FunctionConstants;
  std::string CompilerId;
};

} // namespace msl::cache

#endif // MSL_CACHE_ACTIONKEY_H
