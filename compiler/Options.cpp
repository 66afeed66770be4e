#include "msl/compiler/Options.h"

#include <array>

namespace msl::compiler {

namespace {

struct KnownStd {
  const char *spelling; // as the spec writes it
  Platform platform;
  int major, minor;
};

// Spec 6.3. `osx-` is the 2017 spelling of `macos-`; both are accepted.
constexpr std::array<KnownStd, 7> kSpecStds{{
    {"ios-metal1.0", Platform::IOS, 1, 0},
    {"ios-metal1.1", Platform::IOS, 1, 1},
    {"ios-metal1.2", Platform::IOS, 1, 2},
    {"ios-metal2.0", Platform::IOS, 2, 0},
    {"osx-metal1.1", Platform::MacOS, 1, 1},
    {"osx-metal1.2", Platform::MacOS, 1, 2},
    {"osx-metal2.0", Platform::MacOS, 2, 0},
}};

// Spellings beyond the 2.0 spec's list, as later `metal` compilers accept
// them (the corpus uses them): macOS 1.0 (which naga's shaders are checked
// with), the 2.1-2.4 revisions, and metal3.x, one language for both platforms.
constexpr std::array<KnownStd, 13> kLaterStds{{
    {"osx-metal1.0", Platform::MacOS, 1, 0},
    {"ios-metal2.1", Platform::IOS, 2, 1},
    {"ios-metal2.2", Platform::IOS, 2, 2},
    {"ios-metal2.3", Platform::IOS, 2, 3},
    {"ios-metal2.4", Platform::IOS, 2, 4},
    {"osx-metal2.1", Platform::MacOS, 2, 1},
    {"osx-metal2.2", Platform::MacOS, 2, 2},
    {"osx-metal2.3", Platform::MacOS, 2, 3},
    {"osx-metal2.4", Platform::MacOS, 2, 4},
    {"metal3.0", Platform::MacOS, 3, 0},
    {"metal3.1", Platform::MacOS, 3, 1},
    {"metal3.2", Platform::MacOS, 3, 2},
    // Metal 4's language: what msld lacks of it (<metal_tensor>,
    // MetalPerformancePrimitives) is an error naming it.
    {"metal4.0", Platform::MacOS, 4, 0},
}};

// The language version an OS release ships (-target air64-apple-macos14.0
// without -std), as Apple's SDKs pair them.
std::optional<LanguageVersion> languageOfTarget(const std::string &triple) {
  const std::string prefix = "air64-apple-";
  if (triple.rfind(prefix, 0) != 0)
    return std::nullopt;
  std::string os = triple.substr(prefix.size());
  Platform platform;
  size_t skip;
  if (os.rfind("macosx", 0) == 0)
    platform = Platform::MacOS, skip = 6;
  else if (os.rfind("macos", 0) == 0)
    platform = Platform::MacOS, skip = 5;
  else if (os.rfind("ios", 0) == 0)
    platform = Platform::IOS, skip = 3;
  else
    return std::nullopt;
  // MAJOR[.MINOR[.PATCH]], digits only.
  unsigned version[2] = {0, 0};
  size_t i = skip;
  for (int part = 0; part < 2; ++part) {
    size_t start = i;
    while (i < os.size() && i - start < 4 && os[i] >= '0' && os[i] <= '9')
      version[part] = version[part] * 10 + unsigned(os[i++] - '0');
    if (i == start)
      return std::nullopt;
    if (i >= os.size() || os[i] != '.')
      break;
    ++i;
  }
  struct Pair { unsigned os, osMinor; int metalMajor, metalMinor; };
  // Releases and their Metal, oldest first.
  static const Pair kMac[] = {{10, 13, 2, 0}, {10, 14, 2, 1}, {10, 15, 2, 2}, {11, 0, 2, 3}, {12, 0, 2, 4},
                              {13, 0, 3, 0},  {14, 0, 3, 1},  {15, 0, 3, 2},  {26, 0, 4, 0}};
  static const Pair kIos[] = {{11, 0, 2, 0}, {12, 0, 2, 1}, {13, 0, 2, 2}, {14, 0, 2, 3}, {15, 0, 2, 4},
                              {16, 0, 3, 0}, {17, 0, 3, 1}, {18, 0, 3, 2}, {26, 0, 4, 0}};
  std::optional<LanguageVersion> found;
  const Pair *table = platform == Platform::MacOS ? kMac : kIos;
  size_t count = platform == Platform::MacOS ? std::size(kMac) : std::size(kIos);
  for (const Pair &p : std::vector<Pair>(table, table + count))
    if (version[0] > p.os || (version[0] == p.os && version[1] >= p.osMinor))
      found = LanguageVersion{p.metalMajor >= 3 ? Platform::MacOS : platform, p.metalMajor, p.metalMinor};
  return found;
}

bool isIdentifier(const std::string &s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (char c : s)
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  return true;
}

bool isWarningName(const std::string &s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (!(c == '-' || c == '_' || c == '=' || c == '+' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9')))
      return false;
  return true;
}

template <size_t N> std::string join(const std::array<KnownStd, N> &stds) {
  std::string out;
  for (const auto &k : stds) {
    if (!out.empty())
      out += ", ";
    out += k.spelling;
  }
  return out;
}

std::string joinAllowed() {
  return join(kSpecStds) + " (the spec's values), or a later revision: " + join(kLaterStds);
}

} // namespace

std::string LanguageVersion::spelling() const {
  std::string number = std::to_string(major) + "." + std::to_string(minor);
  if (major >= 3)
    return "metal" + number;
  return std::string(platform == Platform::IOS ? "ios" : "macos") + "-metal" + number;
}

const std::vector<std::string> &allowedStdValues() {
  static const std::vector<std::string> values = [] {
    std::vector<std::string> v;
    for (const auto &k : kSpecStds)
      v.push_back(k.spelling);
    return v;
  }();
  return values;
}

std::optional<LanguageVersion> parseStdValue(const std::string &value) {
  std::string v = value;
  if (v.rfind("macos-", 0) == 0)
    v = "osx-" + v.substr(6);
  for (const auto &k : kSpecStds)
    if (v == k.spelling)
      return LanguageVersion{k.platform, k.major, k.minor};
  for (const auto &k : kLaterStds)
    if (v == k.spelling)
      return LanguageVersion{k.platform, k.major, k.minor};
  return std::nullopt;
}

std::optional<MetalOptions> parseMetalOptions(const std::vector<std::string> &args,
                                              std::string &error, const RequestLimits &limits) {
  if (args.size() > limits.maxOptions) {
    error = "the command line has " + std::to_string(args.size()) + " arguments; at most " +
            std::to_string(limits.maxOptions) + " are allowed";
    return std::nullopt;
  }
  for (const std::string &arg : args) {
    if (arg.size() > limits.maxOptionBytes) {
      error = "option " + quoteForMessage(arg) + " is " + std::to_string(arg.size()) +
              " bytes; at most " + std::to_string(limits.maxOptionBytes) + " are allowed";
      return std::nullopt;
    }
    // Clang would read the argument only up to the NUL: what is compiled
    // would differ from what the action key names.
    if (arg.find('\0') != std::string::npos) {
      error = "option " + quoteForMessage(arg) + " contains a NUL byte";
      return std::nullopt;
    }
  }
  MetalOptions opts;
  bool stdGiven = false;
  std::optional<LanguageVersion> targetLanguage;
  // Options that take a value either joined (-DX) or as the next argument.
  auto takeValue = [&](size_t &i, const std::string &flag, std::string &out) {
    const std::string &arg = args[i];
    if (arg.size() > flag.size()) {
      out = arg.substr(flag.size());
      return true;
    }
    if (i + 1 >= args.size()) {
      error = "option '" + flag + "' needs a value";
      return false;
    }
    out = args[++i];
    return true;
  };

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
    if (arg.rfind("-D", 0) == 0) {
      std::string def;
      if (!takeValue(i, "-D", def))
        return std::nullopt;
      MacroDefinition m;
      auto eq = def.find('=');
      m.name = def.substr(0, eq);
      if (eq != std::string::npos)
        m.value = def.substr(eq + 1);
      if (!isIdentifier(m.name)) {
        error = "invalid macro name " + quoteForMessage(m.name) + " in -D " + quoteForMessage(def);
        return std::nullopt;
      }
      opts.defines.push_back(std::move(m));
    } else if (arg.rfind("-I", 0) == 0) {
      std::string dir;
      if (!takeValue(i, "-I", dir))
        return std::nullopt;
      if (dir.empty()) {
        error = "option '-I' needs a directory";
        return std::nullopt;
      }
      if (dir != ".")
        if (error = checkRequestPath("-I directory", dir, limits); !error.empty())
          return std::nullopt;
      opts.includeDirs.push_back(std::move(dir));
    } else if (arg == "-include") {
      if (i + 1 >= args.size() || args[i + 1].empty()) {
        error = "option '-include' needs a file";
        return std::nullopt;
      }
      std::string file = args[++i];
      if (error = checkRequestPath("-include file", file, limits); !error.empty())
        return std::nullopt;
      opts.forcedIncludes.push_back(std::move(file));
    } else if (arg.rfind("-std=", 0) == 0) {
      std::string value = arg.substr(5);
      auto v = parseStdValue(value);
      if (!v) {
        error = (value.empty() ? std::string("-std= needs a value")
                               : "unknown language version " + quoteForMessage(value) + " in -std=") +
                "; allowed values: " + joinAllowed() + " (osx- may be spelled macos-)";
        return std::nullopt;
      }
      opts.std = *v;
      stdGiven = true;
    } else if (arg == "-target" || arg.rfind("--target=", 0) == 0) {
      std::string triple;
      if (arg == "-target") {
        if (i + 1 >= args.size()) {
          error = "option '-target' needs a value";
          return std::nullopt;
        }
        triple = args[++i];
      } else {
        triple = arg.substr(9);
      }
      targetLanguage = languageOfTarget(triple);
      if (!targetLanguage) {
        error = "unsupported target " + quoteForMessage(triple) +
                " (supported: air64-apple-macosX.Y and air64-apple-iosX.Y, macOS 10.13 / iOS 11 or later; "
                "msld itself compiles for x86_64 and nvptx64)";
        return std::nullopt;
      }
      opts.deploymentTarget = "-target=" + triple;
    } else if (arg == "-O0" || arg == "-O1" || arg == "-O2" || arg == "-O3" || arg == "-Os" || arg == "-Oz" ||
               arg == "-O" || arg == "-g" || arg == "-gline-tables-only" || arg == "-frecord-sources" ||
               arg == "-fno-record-sources" || arg == "-fmodules" || arg == "-fno-modules") {
      opts.ignoredFlags.push_back(arg);
    } else if (arg.rfind("-fmetal-math-mode=", 0) == 0) {
      std::string mode = arg.substr(18);
      if (mode == "fast" || mode == "relaxed") {
        opts.fastMath = true;
        opts.honorInfNaN = mode == "relaxed";
      } else if (mode == "safe") {
        opts.fastMath = false;
        opts.honorInfNaN = false;
      } else {
        error = "unknown math mode " + quoteForMessage(mode) + " in -fmetal-math-mode= (fast, relaxed or safe)";
        return std::nullopt;
      }
    } else if (arg.rfind("-fmetal-math-fp32-functions=", 0) == 0) {
      std::string which = arg.substr(28);
      if (which != "fast" && which != "precise") {
        error = "unknown value " + quoteForMessage(which) + " in -fmetal-math-fp32-functions= (fast or precise)";
        return std::nullopt;
      }
      opts.fastFp32Functions = which == "fast";
    } else if (arg == "-x") {
      // `-x metal` names the language the compiler always compiles.
      if (i + 1 >= args.size() || args[i + 1] != "metal") {
        error = "option '-x' only takes 'metal'";
        return std::nullopt;
      }
      ++i;
    } else if (arg.rfind("-mmacosx-version-min=", 0) == 0 ||
               arg.rfind("-mios-version-min=", 0) == 0) {
      opts.deploymentTarget = arg;
    } else if (arg == "-ffast-math") {
      opts.fastMath = true;
      opts.honorInfNaN = false;
    } else if (arg == "-fno-fast-math") {
      opts.fastMath = false;
      opts.honorInfNaN = false;
    } else if (arg == "-Werror") {
      // Kept in order with the other -W flags: -Wno-error -Werror differs
      // from -Werror -Wno-error.
      opts.warningsAsErrors = true;
      opts.warningFlags.push_back(arg);
    } else if (arg == "-W") {
      opts.suppressWarnings = true;
    } else if (arg.rfind("-W", 0) == 0 && isWarningName(arg.substr(2))) {
      opts.warningFlags.push_back(arg);
    } else {
      error = "unsupported option " + quoteForMessage(arg) +
              " (supported: -D, -I, -include, -std=, -target air64-apple-<os><version>, -ffast-math, "
              "-fno-fast-math, -fmetal-math-mode=, -fmetal-math-fp32-functions=, -Werror, -W, -W<warning>, "
              "-x metal, -mmacosx-version-min=, -mios-version-min=; accepted without effect: -O0-3, -Os, "
              "-Oz, -g, -gline-tables-only, -frecord-sources, -fmodules, -fno-modules)";
      return std::nullopt;
    }
  }
  if (!stdGiven && targetLanguage)
    opts.std = *targetLanguage;
  return opts;
}

std::vector<std::string> MetalOptions::normalized() const {
  std::vector<std::string> out;
  out.push_back("-std=" + std.spelling());
  out.push_back(fastMath ? "-ffast-math" : "-fno-fast-math");
  if (honorInfNaN)
    out.push_back("-fmetal-math-mode=relaxed");
  if (fastFp32Functions)
    out.push_back(std::string("-fmetal-math-fp32-functions=") + (*fastFp32Functions ? "fast" : "precise"));
  if (!deploymentTarget.empty())
    out.push_back(deploymentTarget);
  for (const auto &d : defines)
    out.push_back("-D" + d.name + "=" + d.value.value_or("1"));
  for (const auto &dir : includeDirs)
    out.push_back("-I" + dir);
  for (const auto &file : forcedIncludes) {
    out.push_back("-include");
    out.push_back(file);
  }
  if (suppressWarnings)
    out.push_back("-W");
  for (const auto &w : warningFlags)
    out.push_back(w);
  return out;
}

} // namespace msl::compiler
