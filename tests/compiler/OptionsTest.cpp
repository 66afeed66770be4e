// The `metal` command-line parser (spec chapter 6): pure, no compile.
#include "msl/compiler/Options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace msl::compiler {
namespace {

using Args = std::vector<std::string>;

MetalOptions parseOk(const Args &args) {
  std::string error;
  auto opts = parseMetalOptions(args, error);
  EXPECT_TRUE(opts.has_value()) << "unexpected error: " << error;
  EXPECT_TRUE(!opts || error.empty()) << error;
  return opts.value_or(MetalOptions{});
}

std::string parseError(const Args &args) {
  std::string error;
  auto opts = parseMetalOptions(args, error);
  EXPECT_FALSE(opts.has_value()) << "expected the command line to be rejected";
  EXPECT_FALSE(error.empty()) << "a rejection must come with a message";
  return error;
}

const Args kSevenStds = {"ios-metal1.0", "ios-metal1.1", "ios-metal1.2", "ios-metal2.0",
                         "osx-metal1.1", "osx-metal1.2", "osx-metal2.0"};

TEST(MetalOptionsTest, EmptyCommandLineHasSpecDefaults) {
  MetalOptions o = parseOk({});
  EXPECT_EQ(o.std.platform, Platform::MacOS);
  EXPECT_EQ(o.std.major, 3);
  EXPECT_EQ(o.std.minor, 2);
  EXPECT_TRUE(o.fastMath) << "-ffast-math is the default (spec 6.2)";
  EXPECT_FALSE(o.warningsAsErrors);
  EXPECT_FALSE(o.suppressWarnings);
  EXPECT_TRUE(o.defines.empty());
  EXPECT_TRUE(o.includeDirs.empty());
  EXPECT_TRUE(o.warningFlags.empty());
}

TEST(MetalOptionsTest, NormalizedMakesDefaultsExplicit) {
  EXPECT_EQ(parseOk({}).normalized(), (Args{"-std=metal3.2", "-ffast-math"}));
  // Spelling the defaults gives the same normalized form (same action key).
  EXPECT_EQ(parseOk({"-ffast-math", "-std=metal3.2"}).normalized(), parseOk({}).normalized());
  // Spellings of one revision are one key.
  EXPECT_EQ(parseOk({"-std=osx-metal2.0"}).normalized(), parseOk({"-std=macos-metal2.0"}).normalized());
}

TEST(MetalOptionsTest, DefineSeparateJoinedAndWithValueKeepOrder) {
  MetalOptions o = parseOk({"-D", "FIRST", "-DSECOND", "-D", "THIRD=3", "-DFOURTH=a=b", "-D",
                            "EMPTY="});
  ASSERT_EQ(o.defines.size(), 5u);
  EXPECT_EQ(o.defines[0], (MacroDefinition{"FIRST", std::nullopt}));
  EXPECT_EQ(o.defines[1], (MacroDefinition{"SECOND", std::nullopt}));
  EXPECT_EQ(o.defines[2], (MacroDefinition{"THIRD", "3"}));
  // Only the first '=' separates name and definition.
  EXPECT_EQ(o.defines[3], (MacroDefinition{"FOURTH", "a=b"}));
  EXPECT_EQ(o.defines[4], (MacroDefinition{"EMPTY", ""}));
  EXPECT_EQ(o.normalized(),
            (Args{"-std=metal3.2", "-ffast-math", "-DFIRST=1", "-DSECOND=1", "-DTHIRD=3",
                  "-DFOURTH=a=b", "-DEMPTY="}));
}

TEST(MetalOptionsTest, DefineOrderIsSignificantInNormalizedForm) {
  // Spec 6.1: -D options are processed in the order in which they appear, so
  // reordering them must not produce the same normalized form.
  auto ab = parseOk({"-DX=1", "-DX=2"}).normalized();
  auto ba = parseOk({"-DX=2", "-DX=1"}).normalized();
  EXPECT_NE(ab, ba);
  EXPECT_EQ(ab, (Args{"-std=metal3.2", "-ffast-math", "-DX=1", "-DX=2"}));
}

TEST(MetalOptionsTest, DefineSeparateAndJoinedNormalizeAlike) {
  EXPECT_EQ(parseOk({"-D", "N"}).normalized(), parseOk({"-DN"}).normalized());
  EXPECT_EQ(parseOk({"-D", "N"}).normalized(), parseOk({"-DN=1"}).normalized());
  EXPECT_NE(parseOk({"-DN="}).normalized(), parseOk({"-DN"}).normalized())
      << "an empty definition is not definition 1";
}

TEST(MetalOptionsTest, DefineErrors) {
  EXPECT_NE(parseError({"-D"}).find("-D"), std::string::npos);
  EXPECT_NE(parseError({"-D", "1ABC"}).find("1ABC"), std::string::npos);
  EXPECT_NE(parseError({"-D=3"}).find("-D"), std::string::npos);
  EXPECT_NE(parseError({"-DA-B"}).find("A-B"), std::string::npos);
}

TEST(MetalOptionsTest, IncludeDirBothFormsKeepOrder) {
  MetalOptions o = parseOk({"-I", "inc", "-Ilib/headers", "-I", "."});
  EXPECT_EQ(o.includeDirs, (Args{"inc", "lib/headers", "."}));
  EXPECT_EQ(o.normalized(), (Args{"-std=metal3.2", "-ffast-math", "-Iinc", "-Ilib/headers",
                                  "-I."}));
  EXPECT_NE(parseOk({"-Ia", "-Ib"}).normalized(), parseOk({"-Ib", "-Ia"}).normalized());
}

TEST(MetalOptionsTest, IncludeDirNeedsValue) { EXPECT_NE(parseError({"-I"}).find("-I"), std::string::npos); }

// msld and the worker both parse options here, so both reject these alike.
TEST(MetalOptionsTest, IncludeDirMustBeInsideTheCompileRoot) {
  for (const char *dir : {"/etc", "../..", "inc/../x", "inc/", "./inc", "inc\x01"}) {
    SCOPED_TRACE(dir);
    std::string error = parseError({"-I", dir});
    EXPECT_EQ(error.find("-I directory"), 0u) << error;
  }
  EXPECT_NE(parseError({"-I", std::string("a\0b", 3)}).find("NUL"), std::string::npos);
  EXPECT_EQ(parseError({"-I/etc"}), parseError({"-I", "/etc"}));
  EXPECT_EQ(parseOk({"-I", ".", "-I", "inc/sub"}).includeDirs, (Args{".", "inc/sub"}));
}

TEST(MetalOptionsTest, ForcedIncludesKeepOrderAndStayInsideTheCompileRoot) {
  MetalOptions o = parseOk({"-include", "pre/a.h", "-I", "inc", "-include", "b.h"});
  EXPECT_EQ(o.forcedIncludes, (Args{"pre/a.h", "b.h"}));
  EXPECT_EQ(o.normalized(), (Args{"-std=metal3.2", "-ffast-math", "-Iinc", "-include", "pre/a.h", "-include", "b.h"}));
  EXPECT_NE(parseOk({"-include", "a.h", "-include", "b.h"}).normalized(),
            parseOk({"-include", "b.h", "-include", "a.h"}).normalized());
  EXPECT_NE(parseError({"-include"}).find("-include"), std::string::npos);
  for (const char *file : {"/etc/passwd", "../x.h", "a/../b.h"}) {
    SCOPED_TRACE(file);
    EXPECT_EQ(parseError({"-include", file}).find("-include file"), 0u);
  }
}

TEST(MetalOptionsTest, OptionCountAndLengthAreBounded) {
  EXPECT_NE(parseError(Args(1025, "-W")).find("1024"), std::string::npos);
  parseOk(Args(1024, "-W"));
  std::string error = parseError({"-DX=" + std::string(5000, '1')});
  EXPECT_NE(error.find("4096"), std::string::npos) << error;
  EXPECT_LT(error.size(), 300u) << "the option is not echoed in full";
}

// A NUL would end the argument where Clang reads it: what is compiled would
// differ from what the action key names.
TEST(MetalOptionsTest, NulInOptionsIsRejected) {
  std::string error = parseError({std::string("-DX=1\0-DY", 9)});
  EXPECT_NE(error.find("\\x00"), std::string::npos) << error;
}

TEST(MetalOptionsTest, EachOfTheSevenStdValuesParses) {
  struct Expect {
    std::string value;
    Platform platform;
    int major, minor, macro;
    std::string spelling;
  };
  const std::vector<Expect> expected = {
      {"ios-metal1.0", Platform::IOS, 1, 0, 100, "ios-metal1.0"},
      {"ios-metal1.1", Platform::IOS, 1, 1, 110, "ios-metal1.1"},
      {"ios-metal1.2", Platform::IOS, 1, 2, 120, "ios-metal1.2"},
      {"ios-metal2.0", Platform::IOS, 2, 0, 200, "ios-metal2.0"},
      {"osx-metal1.1", Platform::MacOS, 1, 1, 110, "macos-metal1.1"},
      {"osx-metal1.2", Platform::MacOS, 1, 2, 120, "macos-metal1.2"},
      {"osx-metal2.0", Platform::MacOS, 2, 0, 200, "macos-metal2.0"},
  };
  for (const auto &e : expected) {
    SCOPED_TRACE(e.value);
    MetalOptions o = parseOk({"-std=" + e.value});
    EXPECT_EQ(o.std.platform, e.platform);
    EXPECT_EQ(o.std.major, e.major);
    EXPECT_EQ(o.std.minor, e.minor);
    EXPECT_EQ(o.std.metalVersionMacro(), e.macro);
    EXPECT_EQ(o.std.spelling(), e.spelling);
    EXPECT_EQ(o.normalized().at(0), "-std=" + e.spelling);
  }
}

TEST(MetalOptionsTest, MacosSpellingEqualsOsx) {
  for (const char *v : {"1.1", "1.2", "2.0"}) {
    SCOPED_TRACE(v);
    auto osx = parseStdValue(std::string("osx-metal") + v);
    auto macos = parseStdValue(std::string("macos-metal") + v);
    ASSERT_TRUE(osx && macos);
    EXPECT_EQ(*osx, *macos);
    EXPECT_EQ(parseOk({std::string("-std=osx-metal") + v}).normalized(),
              parseOk({std::string("-std=macos-metal") + v}).normalized());
  }
  // macos-metal1.0 is not among the spec's values but later compilers take it.
  EXPECT_TRUE(parseStdValue("macos-metal1.0"));
  EXPECT_FALSE(parseStdValue("ios-metal2.5"));
  EXPECT_FALSE(parseStdValue("IOS-metal2.0"));
}

TEST(MetalOptionsTest, LastStdWins) {
  MetalOptions o = parseOk({"-std=ios-metal1.0", "-std=osx-metal1.2"});
  EXPECT_EQ(o.std, (LanguageVersion{Platform::MacOS, 1, 2}));
}

TEST(MetalOptionsTest, AllowedStdValuesAreTheSpecsSeven) {
  EXPECT_EQ(allowedStdValues(), kSevenStds);
}

void expectListsAllSeven(const std::string &error) {
  for (const auto &v : kSevenStds)
    EXPECT_NE(error.find(v), std::string::npos) << "missing " << v << " in: " << error;
}

TEST(MetalOptionsTest, EmptyStdFailsListingAllowedValues) {
  std::string error = parseError({"-std="});
  EXPECT_NE(error.find("-std="), std::string::npos) << error;
  expectListsAllSeven(error);
}

TEST(MetalOptionsTest, LaterRevisionsAreAccepted) {
  struct Case {
    const char *value;
    Platform platform;
    int macro;
    const char *canonical;
  } cases[] = {{"macos-metal2.3", Platform::MacOS, 230, "macos-metal2.3"},
               {"osx-metal2.4", Platform::MacOS, 240, "macos-metal2.4"},
               {"ios-metal2.1", Platform::IOS, 210, "ios-metal2.1"},
               {"metal3.0", Platform::MacOS, 300, "metal3.0"},
               {"metal3.2", Platform::MacOS, 320, "metal3.2"}};
  for (const auto &c : cases) {
    auto v = parseStdValue(c.value);
    ASSERT_TRUE(v) << c.value;
    EXPECT_EQ(v->platform, c.platform) << c.value;
    EXPECT_EQ(v->metalVersionMacro(), c.macro) << c.value;
    EXPECT_EQ(v->spelling(), c.canonical) << c.value;
  }
  EXPECT_FALSE(parseStdValue("metal3.3"));
  EXPECT_FALSE(parseStdValue("ios-metal2.5"));
}

TEST(MetalOptionsTest, LanguageAndDeploymentTargetOptions) {
  MetalOptions o = parseOk({"-x", "metal", "-mmacosx-version-min=10.11"});
  EXPECT_EQ(o.normalized(), (Args{"-std=metal3.2", "-ffast-math", "-mmacosx-version-min=10.11"}));
  std::string error = parseError({"-x", "c"});
  EXPECT_NE(error.find("metal"), std::string::npos) << error;
}

TEST(MetalOptionsTest, UnknownStdFailsListingAllowedValues) {
  for (const char *bad : {"-std=metal9.0", "-std=c++17", "-std=ios-metal", "-std=osx-metal0.9"}) {
    SCOPED_TRACE(bad);
    std::string error = parseError({bad});
    std::string value = std::string(bad).substr(5);
    EXPECT_NE(error.find(value), std::string::npos) << "names the bad value: " << error;
    expectListsAllSeven(error);
  }
}

TEST(MetalOptionsTest, FastMathDefaultAndNoFastMath) {
  EXPECT_TRUE(parseOk({"-ffast-math"}).fastMath);
  MetalOptions off = parseOk({"-fno-fast-math"});
  EXPECT_FALSE(off.fastMath);
  EXPECT_EQ(off.normalized(), (Args{"-std=metal3.2", "-fno-fast-math"}));
  // Last one wins.
  EXPECT_TRUE(parseOk({"-fno-fast-math", "-ffast-math"}).fastMath);
  EXPECT_FALSE(parseOk({"-ffast-math", "-fno-fast-math"}).fastMath);
}

TEST(MetalOptionsTest, WerrorAndW) {
  MetalOptions o = parseOk({"-Werror"});
  EXPECT_TRUE(o.warningsAsErrors);
  EXPECT_FALSE(o.suppressWarnings);
  EXPECT_EQ(o.warningFlags, (Args{"-Werror"})) << "-Werror keeps its place among -W flags";
  EXPECT_EQ(o.normalized(), (Args{"-std=metal3.2", "-ffast-math", "-Werror"}));

  MetalOptions w = parseOk({"-W"});
  EXPECT_TRUE(w.suppressWarnings);
  EXPECT_FALSE(w.warningsAsErrors);
  EXPECT_TRUE(w.warningFlags.empty());
  EXPECT_EQ(w.normalized(), (Args{"-std=metal3.2", "-ffast-math", "-W"}));
}

TEST(MetalOptionsTest, WarningFlagsPassThroughInOrder) {
  MetalOptions o = parseOk({"-Wno-foo", "-Wunused-variable", "-Wno-error=conversion", "-Wall"});
  EXPECT_EQ(o.warningFlags, (Args{"-Wno-foo", "-Wunused-variable", "-Wno-error=conversion", "-Wall"}));
  EXPECT_FALSE(o.warningsAsErrors);
  EXPECT_FALSE(o.suppressWarnings);
  auto n = o.normalized();
  EXPECT_EQ(n, (Args{"-std=metal3.2", "-ffast-math", "-Wno-foo", "-Wunused-variable",
                     "-Wno-error=conversion", "-Wall"}));
}

TEST(MetalOptionsTest, UnknownOptionsRejected) {
  for (const Args &bad : std::vector<Args>{{"-O4"},
                                           {"-fno-builtin"},
                                           {"-x", "c"},
                                           {"main.metal"},
                                           {"-std"},
                                           {"-Wl,-rpath"},
                                           {"-include-pch", "x.pch"},
                                           {"-Xclang", "-load"},
                                           {""}}) {
    SCOPED_TRACE(bad.front());
    std::string error = parseError(bad);
    EXPECT_NE(error.find("'" + bad.front() + "'"), std::string::npos)
        << "names the bad option: " << error;
  }
}

TEST(MetalOptionsTest, FullNormalizedOrderIsFixed) {
  // Whatever the command-line order of the kinds of options, normalized()
  // uses one order: std, fast-math, -D..., -I..., -W, then -W<name> and
  // -Werror in their command-line order (the last of -Werror/-Wno-error wins).
  MetalOptions o = parseOk({"-Wno-foo", "-W", "-Iinc", "-DA", "-Werror", "-fno-fast-math",
                            "-std=ios-metal1.2", "-DB=2"});
  EXPECT_EQ(o.normalized(), (Args{"-std=ios-metal1.2", "-fno-fast-math", "-DA=1", "-DB=2", "-Iinc",
                                  "-W", "-Wno-foo", "-Werror"}));
  // Normalizing is idempotent: parsing the normalized form gives it back.
  EXPECT_EQ(parseOk(o.normalized()).normalized(), o.normalized());
}

// `metal` build flags that do not change msld's artifact are accepted and
// stay out of the normalized form (the action key).
TEST(MetalOptionsTest, BuildFlagsWithoutEffectAreAcceptedOutsideTheKey) {
  for (const char *flag : {"-O0", "-O2", "-O3", "-Os", "-g", "-gline-tables-only", "-frecord-sources",
                           "-fmodules", "-fno-modules"}) {
    SCOPED_TRACE(flag);
    MetalOptions o = parseOk({flag});
    EXPECT_EQ(o.normalized(), parseOk({}).normalized());
    EXPECT_EQ(o.ignoredFlags, (Args{flag}));
  }
}

// -target air64-apple-<os><version> selects the language that OS ships when
// no -std is given; -std wins wherever it stands.
TEST(MetalOptionsTest, TargetTripleSelectsTheLanguageVersion) {
  struct Case { Args args; int major, minor; Platform platform; };
  const std::vector<Case> cases = {
      {{"-target", "air64-apple-macos14.0"}, 3, 1, Platform::MacOS},
      {{"-target", "air64-apple-macosx13.5"}, 3, 0, Platform::MacOS},
      {{"--target=air64-apple-macos15.2"}, 3, 2, Platform::MacOS},
      {{"-target", "air64-apple-macos10.15"}, 2, 2, Platform::MacOS},
      {{"-target", "air64-apple-ios15.0"}, 2, 4, Platform::IOS},
      {{"-target", "air64-apple-ios17.4"}, 3, 1, Platform::MacOS},
      {{"-target", "air64-apple-macos26.0"}, 4, 0, Platform::MacOS},
      {{"-std=metal3.0", "-target", "air64-apple-macos15.0"}, 3, 0, Platform::MacOS},
      {{"-target", "air64-apple-macos15.0", "-std=macos-metal2.4"}, 2, 4, Platform::MacOS},
  };
  for (const auto &c : cases) {
    SCOPED_TRACE(c.args.back());
    MetalOptions o = parseOk(c.args);
    EXPECT_EQ(o.std.major, c.major);
    EXPECT_EQ(o.std.minor, c.minor);
    EXPECT_EQ(o.std.platform, c.platform);
  }
  // The triple is in the key (it is a deployment target).
  EXPECT_NE(parseOk({"-target", "air64-apple-macos14.0"}).normalized(),
            parseOk({"-std=metal3.1"}).normalized());
  EXPECT_NE(parseError({"-target", "x86_64-linux-gnu"}).find("air64-apple-macos"), std::string::npos);
  EXPECT_NE(parseError({"-target", "air64-apple-macos"}).find("unsupported target"), std::string::npos);
  EXPECT_NE(parseError({"-target"}).find("needs a value"), std::string::npos);
}

TEST(MetalOptionsTest, MathModeAndFp32Functions) {
  MetalOptions relaxed = parseOk({"-fmetal-math-mode=relaxed"});
  EXPECT_TRUE(relaxed.fastMath);
  EXPECT_TRUE(relaxed.honorInfNaN);
  EXPECT_TRUE(relaxed.fastFunctions());
  MetalOptions safe = parseOk({"-fmetal-math-mode=safe"});
  EXPECT_FALSE(safe.fastMath);
  EXPECT_FALSE(safe.fastFunctions());
  EXPECT_EQ(safe.normalized(), parseOk({"-fno-fast-math"}).normalized());
  EXPECT_EQ(parseOk({"-fmetal-math-mode=fast"}).normalized(), parseOk({}).normalized());
  // A later -ffast-math ends relaxed mode.
  EXPECT_FALSE(parseOk({"-fmetal-math-mode=relaxed", "-ffast-math"}).honorInfNaN);
  EXPECT_NE(relaxed.normalized(), parseOk({}).normalized());
  MetalOptions precise = parseOk({"-fmetal-math-fp32-functions=precise"});
  EXPECT_TRUE(precise.fastMath);
  EXPECT_FALSE(precise.fastFunctions());
  EXPECT_NE(precise.normalized(), parseOk({}).normalized());
  EXPECT_TRUE(parseOk({"-fno-fast-math", "-fmetal-math-fp32-functions=fast"}).fastFunctions());
  EXPECT_NE(parseError({"-fmetal-math-mode=loose"}).find("fast, relaxed or safe"), std::string::npos);
  EXPECT_NE(parseError({"-fmetal-math-fp32-functions=x"}).find("fast or precise"), std::string::npos);
  EXPECT_EQ(parseOk(relaxed.normalized()).normalized(), relaxed.normalized());
  EXPECT_EQ(parseOk(precise.normalized()).normalized(), precise.normalized());
}

TEST(MetalOptionsTest, Metal4Language) {
  MetalOptions o = parseOk({"-std=metal4.0"});
  EXPECT_EQ(o.std.metalVersionMacro(), 400);
  EXPECT_EQ(o.std.spelling(), "metal4.0");
}

} // namespace
} // namespace msl::compiler
