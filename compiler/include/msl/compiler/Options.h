//===- msl/compiler/Options.h - The `metal` command line (spec ch. 6) -----===//
//
// Parses the options of a compile as Apple's `metal` compiler takes them and
// produces their normalized form: the form that goes into the action key and
// that the frontend translates into Clang arguments. No LLVM dependency, so
// the daemon can validate requests and build cache keys without a compiler.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/compiler/RequestChecks.h"

#include <optional>
#include <string>
#include <vector>

namespace msl::compiler {

enum class Platform { IOS, MacOS };

/// A language revision selected with -std=.
struct LanguageVersion {
  Platform platform = Platform::MacOS;
  int major = 3;
  int minor = 2;

  /// The value of __METAL_VERSION__ (e.g. 120 for 1.2, 200 for 2.0).
  int metalVersionMacro() const { return major * 100 + minor * 10; }
  /// Canonical spelling: "ios-metal2.0" or "macos-metal2.0".
  std::string spelling() const;
  friend bool operator==(const LanguageVersion &, const LanguageVersion &) = default;
};

/// One -D, in command-line order.
struct MacroDefinition {
  std::string name;
  std::optional<std::string> value; // -D name means value "1"
  friend bool operator==(const MacroDefinition &, const MacroDefinition &) = default;
};

struct MetalOptions {
  /// Default when no -std= is given: the newest language msld supports,
  /// Metal 3.2, as Apple's compiler takes its SDK's newest without -std
  /// (corpus-ml's "(Xcode default)" rows use bfloat, Metal 3.1).
  LanguageVersion std;
  std::vector<MacroDefinition> defines;
  /// -I directories, relative to the compile root, in order.
  std::vector<std::string> includeDirs;
  /// -include FILE: files included ahead of the main file, in order
  /// (paths relative to the compile root, among the request's files).
  std::vector<std::string> forcedIncludes;
  /// -ffast-math is the default (spec 6.2). -fmetal-math-mode=fast|relaxed
  /// set it, =safe (like -fno-fast-math) clears it.
  bool fastMath = true;
  /// -fmetal-math-mode=relaxed (Metal 3.2): fast math that keeps INF and
  /// NaN (no finite-math assumption).
  bool honorInfNaN = false;
  /// -fmetal-math-fp32-functions=fast|precise (Metal 3.2): which the
  /// unqualified float math functions are; unset: fast with fast math,
  /// precise without.
  std::optional<bool> fastFp32Functions;
  /// Whether the unqualified math functions are metal::fast's.
  bool fastFunctions() const { return fastFp32Functions.value_or(fastMath); }
  bool warningsAsErrors = false;      // -Werror
  bool suppressWarnings = false;      // -W
  /// -W<name> / -Wno-<name> flags and -Werror, in command-line order, passed
  /// to the compiler.
  std::vector<std::string> warningFlags;

  /// -mmacosx-version-min=V / -mios-version-min=V / -target TRIPLE as given
  /// (last wins). A -target triple (air64-apple-macos14.0) also selects the
  /// language version its OS has when there is no -std.
  std::string deploymentTarget;

  /// Accepted for `metal` command lines and without effect on the artifact
  /// (msld's artifacts carry no debug information or embedded sources, and
  /// it optimizes every compile alike): -O0..-O3, -Os, -Oz, -g,
  /// -gline-tables-only, -frecord-sources, -fmodules, -fno-modules. Kept in
  /// command-line order for messages only; not in normalized().
  std::vector<std::string> ignoredFlags;

  /// Every option explicit (defaults included), in a fixed order, with the
  /// order among -D and among -I kept: the form the action key hashes.
  std::vector<std::string> normalized() const;
};

/// The seven values the spec allows (6.3), listed in error messages. Later
/// revisions (ios-/macos-metal2.1-2.4, metal3.0-3.2) are accepted too.
const std::vector<std::string> &allowedStdValues();

/// Parses a `metal` command line (one argument per element), within
/// `limits` (maxOptions, maxOptionBytes; -I directories are "." or pass
/// checkRequestPath). On error, returns std::nullopt and sets `error` to a
/// message naming the bad option.
std::optional<MetalOptions> parseMetalOptions(const std::vector<std::string> &args,
                                              std::string &error,
                                              const RequestLimits &limits = {});

/// Parses a -std= value ("ios-metal2.0", "osx-metal1.2", "macos-metal2.0").
std::optional<LanguageVersion> parseStdValue(const std::string &value);

} // namespace msl::compiler
