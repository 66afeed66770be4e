#include "msl/client/MslcDriver.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "msl/client/Client.h"

namespace fs = std::filesystem;
using namespace msl::client::mslc;
using Strings = std::vector<std::string>;

namespace {

const fs::path kCwd = "/home/u/proj";

Invocation parseOk(const Strings& args, const char* env = nullptr) {
  Invocation inv;
  std::string error;
  EXPECT_TRUE(parseCommandLine(args, env, kCwd, &inv, &error)) << error;
  return inv;
}

std::string parseError(const Strings& args) {
  Invocation inv;
  std::string error;
  EXPECT_FALSE(parseCommandLine(args, nullptr, kCwd, &inv, &error));
  return error;
}

class TempTree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("msl_client_test_" + std::to_string(rd()));
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel, std::ios::binary) << text;
  }
  Strings keys(const CollectedSources& c) {
    Strings out;
    for (const auto& [k, v] : c.files) out.push_back(k);
    return out;
  }
  fs::path root_;
};

}  // namespace

// --- options ---------------------------------------------------------------

TEST(ParseCommandLine, NormalizesMetalOptions) {
  auto inv = parseOk({"-c", "a.metal", "-o", "a.bc", "-D", "A", "-DB", "-D", "C=1", "-DD=x y",
                      "-I", "inc", "-Iother/", "-I./x/../y", "-std=ios-metal2.0", "-ffast-math",
                      "-fno-fast-math", "-Werror", "-W", "-Wno-unused-variable"});
  // -I paths stay as spelled (host paths): loadSources maps them to the request's.
  EXPECT_EQ(inv.options, (Strings{"-D", "A", "-D", "B", "-D", "C=1", "-D", "D=x y", "-I", "inc",
                                  "-I", "other/", "-I", "./x/../y", "-std=ios-metal2.0", "-ffast-math",
                                  "-fno-fast-math", "-Werror", "-W", "-Wno-unused-variable"}));
  EXPECT_EQ(inv.include_dirs, (Strings{"inc", "other/", "./x/../y"}));
  EXPECT_EQ(inv.input, "a.metal");
  EXPECT_EQ(inv.output, "a.bc");
  EXPECT_TRUE(inv.warnings.empty());
}

// `metal` build flags reach msld, which checks them (-O*, -g and the like
// are accepted there without effect on the artifact; -target picks the
// language of its OS).
TEST(ParseCommandLine, MetalBuildFlagsArePassedOn) {
  auto inv = parseOk({"-c", "a.metal", "-o", "a.air", "-O3", "-g", "-gline-tables-only", "-frecord-sources",
                      "-fmodules", "-target", "air64-apple-macos14.0", "-x", "metal",
                      "-fmetal-math-mode=relaxed", "-fmetal-math-fp32-functions=precise",
                      "-mmacosx-version-min=14.0", "-Wno-c++17-extensions"});
  EXPECT_EQ(inv.options, (Strings{"-O3", "-g", "-gline-tables-only", "-frecord-sources", "-fmodules", "-target",
                                  "air64-apple-macos14.0", "-x", "metal", "-fmetal-math-mode=relaxed",
                                  "-fmetal-math-fp32-functions=precise", "-mmacosx-version-min=14.0",
                                  "-Wno-c++17-extensions"}));
  EXPECT_EQ(inv.input, "a.metal");
}

// issue 11: -I directories may lie anywhere (no more "outside the current
// directory" warnings); they are kept as spelled.
TEST(ParseCommandLine, IncludeDirsAnywhere) {
  auto inv = parseOk({"-c", "a.metal", "-o", "x", "-I", "/home/u/proj/sub/inc", "-I.", "-I",
                      "/usr/include", "-I", "../elsewhere"});
  EXPECT_EQ(inv.include_dirs, (Strings{"/home/u/proj/sub/inc", ".", "/usr/include", "../elsewhere"}));
  EXPECT_EQ(inv.options, (Strings{"-I", "/home/u/proj/sub/inc", "-I", ".", "-I", "/usr/include", "-I",
                                  "../elsewhere"}));
  EXPECT_TRUE(inv.warnings.empty());
}

TEST(ParseCommandLine, ServerAddress) {
  EXPECT_EQ(parseOk({"-c", "a", "-o", "b"}).server, "127.0.0.1:8980");
  EXPECT_EQ(parseOk({"-c", "a", "-o", "b"}, "h:1").server, "h:1");
  EXPECT_EQ(parseOk({"-c", "a", "-o", "b", "--server", "s:2"}, "h:1").server, "s:2");
  EXPECT_EQ(parseOk({"-c", "a", "-o", "b", "--server=s:3"}).server, "s:3");
}

TEST(ParseCommandLine, TargetsAndEmit) {
  auto x = parseOk({"-c", "a", "-o", "b"});
  EXPECT_EQ(x.target.arch(), msl::v1::Target::X86_64);
  EXPECT_EQ(x.emit, msl::v1::LLVM_BITCODE);
  auto n = parseOk({"-c", "a", "-o", "b", "--target", "nvptx64-sm_80"});
  EXPECT_EQ(n.target.arch(), msl::v1::Target::NVPTX64);
  EXPECT_EQ(n.target.cpu(), "sm_80");
  EXPECT_EQ(n.emit, msl::v1::PTX);
  auto r = parseOk({"-c", "a", "-o", "b", "--target=nvptx64", "--emit=reflection", "--stats"});
  EXPECT_EQ(r.emit, msl::v1::REFLECTION);
  EXPECT_EQ(r.target.cpu(), "");
  EXPECT_TRUE(r.stats);
  EXPECT_EQ(parseOk({"-c", "a", "-o", "b", "--emit", "llvm-ir"}).emit, msl::v1::LLVM_IR);
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "--emit", "ptx"}).find("nvptx64"), std::string::npos);
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "--emit", "asm"}).find("asm"), std::string::npos);
}

TEST(ParseCommandLine, Errors) {
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "-O9"}).find("unknown argument"), std::string::npos);
  EXPECT_NE(parseError({"-o", "b"}).find("no input files"), std::string::npos);
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "-D"}).find("missing argument"), std::string::npos);
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "-D=x"}).find("macro name"), std::string::npos);
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "-std="}).find("-std"), std::string::npos);
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "c.metal"}).find("cannot specify -o when generating multiple output files"),
            std::string::npos);
  EXPECT_FALSE(parseError({"-c", "a", "-o", "b", "--target", "arm64"}).empty());
}

TEST(ParseCommandLine, FunctionConstants) {
  auto inv = parseOk({"-c", "a.metal", "-o", "b", "--constant", "0=true", "--constant=scale=0.5"});
  ASSERT_EQ(inv.function_constants.size(), 2u);
  EXPECT_EQ(inv.function_constants["0"], "true");
  EXPECT_EQ(inv.function_constants["scale"], "0.5");
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "--constant", "novalue"}).find("KEY=VALUE"),
            std::string::npos);
  EXPECT_NE(parseError({"-c", "a", "-o", "b", "--constant", "=1"}).find("KEY=VALUE"),
            std::string::npos);
}

TEST(ParseCommandLine, Help) {
  auto inv = parseOk({"--help"});
  EXPECT_TRUE(inv.help);
  EXPECT_NE(usage().find("--target"), std::string::npos);
}

TEST(ParseTarget, Specs) {
  msl::v1::Target t;
  std::string e;
  ASSERT_TRUE(parseTarget("x86_64", &t, &e));
  EXPECT_EQ(t.arch(), msl::v1::Target::X86_64);
  ASSERT_TRUE(parseTarget("nvptx64", &t, &e));
  EXPECT_EQ(t.arch(), msl::v1::Target::NVPTX64);
  EXPECT_EQ(t.cpu(), "");
  ASSERT_TRUE(parseTarget("nvptx64-sm_90a", &t, &e));
  EXPECT_EQ(t.cpu(), "sm_90a");
  for (const char* bad : {"nvptx64-", "nvptx64-sm_", "nvptx64-80", "nvptx64-sm_8x0", "x86", ""}) {
    EXPECT_FALSE(parseTarget(bad, &t, &e)) << bad;
  }
  EXPECT_EQ(defaultEmit(t), msl::v1::PTX);
  EXPECT_EQ(emitName(msl::v1::LLVM_BITCODE), "llvm-bc");
  EXPECT_EQ(parseEmit("ptx"), msl::v1::PTX);
}

TEST(RelativeToRoot, Normalizes) {
  EXPECT_EQ(relativeToRoot("a.metal", kCwd), "a.metal");
  EXPECT_EQ(relativeToRoot("./src/../src/a.metal", kCwd), "src/a.metal");
  EXPECT_EQ(relativeToRoot("/home/u/proj/x/y.h", kCwd), "x/y.h");
  EXPECT_EQ(relativeToRoot(".", kCwd), ".");
  EXPECT_EQ(relativeToRoot("inc/", kCwd), "inc");
  EXPECT_EQ(relativeToRoot("../a.metal", kCwd), std::nullopt);
  EXPECT_EQ(relativeToRoot("/etc/passwd", kCwd), std::nullopt);
}

// --- include scanning ------------------------------------------------------

TEST(ScanIncludes, FindsDirectives) {
  auto incs = scanIncludes(
      "#include <metal_stdlib>\n"
      "  #  include \"a.h\" // trailing\n"
      "#import \"b.h\"\n"
      "#include_next <c.h>\n"
      "#include MACRO\n"
      "#define X \"#include <no.h>\"\n"
      "#if 0\n#include \"cond.h\"\n#endif\n");
  ASSERT_EQ(incs.size(), 5u);
  EXPECT_EQ(incs[0].name, "metal_stdlib");
  EXPECT_TRUE(incs[0].angled);
  EXPECT_EQ(incs[1].name, "a.h");
  EXPECT_FALSE(incs[1].angled);
  EXPECT_EQ(incs[1].line, 2u);
  EXPECT_EQ(incs[2].name, "b.h");
  EXPECT_TRUE(incs[3].next);
  EXPECT_EQ(incs[4].name, "cond.h");  // conditionals are not evaluated
  EXPECT_EQ(incs[4].line, 8u);
}

TEST(ScanIncludes, SkipsComments) {
  auto incs = scanIncludes(
      "// #include \"line.h\"\n"
      "/* #include \"block.h\"\n"
      "#include \"block2.h\" */\n"
      "/* c */ #include \"after_comment.h\"\n"
      "#include /* c */ \"mid_comment.h\"\n"
      "// continued \\\n"
      "#include \"continued_comment.h\"\n"
      "#inc\\\nlude \"spliced.h\"\n"
      "int x = 1'000; char c = '\"';\n"
      "#include \"after_literals.h\"\n"
      "const char* s = \"/* not a comment\";\n"
      "#include \"after_string.h\"\n");
  Strings names;
  for (const auto& i : incs) names.push_back(i.name);
  EXPECT_EQ(names, (Strings{"after_comment.h", "mid_comment.h", "spliced.h", "after_literals.h",
                            "after_string.h"}));
  EXPECT_EQ(incs[2].line, 8u);
  EXPECT_EQ(incs[3].line, 11u);
}

// --- include resolution ----------------------------------------------------

TEST_F(TempTree, QuotesSearchIncluderFolderThenIncludeDirs) {
  write("src/main.metal", "#include \"local.h\"\n#include \"shared.h\"\n#include <metal_stdlib>\n");
  write("src/local.h", "// local\n");
  write("inc1/shared.h", "#include \"deep/d.h\"\n");
  write("inc2/shared.h", "// shadowed by inc1\n");
  write("inc1/deep/d.h", "#include \"../up.h\"\n");
  write("inc1/up.h", "");
  write("src/shared.h.not", "");
  auto c = collectIncludes(root_, "src/main.metal", "#include \"local.h\"\n#include \"shared.h\"\n#include <metal_stdlib>\n",
                           {"inc1", "inc2"});
  EXPECT_EQ(keys(c), (Strings{"inc1/deep/d.h", "inc1/shared.h", "inc1/up.h", "src/local.h"}));
  EXPECT_TRUE(c.warnings.empty());
  EXPECT_EQ(c.files["src/local.h"], "// local\n");
}

TEST_F(TempTree, AngleSearchesOnlyIncludeDirsInOrder) {
  write("main.metal", "");
  write("x.h", "// next to main: not for <x.h>\n");
  write("b/x.h", "// b\n");
  write("a/y.h", "#include <x.h>\n");
  write("b/y.h", "");
  auto c = collectIncludes(root_, "main.metal", "#include <x.h>\n#include <y.h>\n", {"a", "b"});
  EXPECT_EQ(keys(c), (Strings{"a/y.h", "b/x.h"}));
  // Without -I dirs nothing angled is found.
  EXPECT_TRUE(collectIncludes(root_, "main.metal", "#include <x.h>\n", {}).files.empty());
  // The quoted form finds the neighbour first.
  EXPECT_EQ(keys(collectIncludes(root_, "main.metal", "#include \"x.h\"\n", {"b"})), (Strings{"x.h"}));
}

TEST_F(TempTree, ForcedIncludesAreSentWithTheirHeaders) {
  write("src/main.metal", "kernel void k() {}\n");
  write("pre/prelude.metal", "#include \"common.h\"\n");
  write("pre/common.h", "#define X 1\n");
  Invocation inv;
  std::string error;
  ASSERT_TRUE(parseCommandLine({"-c", "src/main.metal", "-o", "x", "-include", "pre/prelude.metal"}, nullptr,
                               root_, &inv, &error))
      << error;
  EXPECT_EQ(inv.options, (Strings{"-include", "pre/prelude.metal"}));
  LoadedSources sources;
  std::ostringstream err;
  ASSERT_TRUE(loadSources(inv.input, inv, root_, &sources, err)) << err.str();
  EXPECT_EQ(sources.main_path, "src/main.metal");
  Strings names;
  for (const auto& [k, v] : sources.files) names.push_back(k);
  EXPECT_EQ(names, (Strings{"pre/common.h", "pre/prelude.metal"}));
}

TEST_F(TempTree, CyclesAndMissingHeaders) {
  write("a.h", "#pragma once\n#include \"b.h\"\n#include \"missing.h\"\n");
  write("b.h", "#include \"a.h\"\n#include \"main.metal\"\n");
  auto c = collectIncludes(root_, "main.metal", "#include \"a.h\"\n#include <missing2.h>\n", {});
  EXPECT_EQ(keys(c), (Strings{"a.h", "b.h"}));  // main itself is not repeated
  EXPECT_TRUE(c.warnings.empty());
}

TEST_F(TempTree, OutsideRootIsWarnedAndSkipped) {
  write("proj/main.metal", "");
  write("outside.h", "");
  write("proj/abs.h", "");
  fs::path proj = root_ / "proj";
  auto c = collectIncludes(proj, "main.metal",
                           "#include \"../outside.h\"\n#include \"" + (proj / "abs.h").string() + "\"\n",
                           {});
  EXPECT_TRUE(c.files.empty());
  EXPECT_EQ(c.warnings.size(), 2u);
}

TEST_F(TempTree, IncludeDirDot) {
  write("lib/a.h", "#include \"lib/b.h\"\n");
  write("lib/b.h", "");
  auto c = collectIncludes(root_, "shaders/k.metal", "#include <lib/a.h>\n", {"."});
  EXPECT_EQ(keys(c), (Strings{"lib/a.h", "lib/b.h"}));
}

// issue 8: a header that is a symlink out of the compile root (evil.h ->
// /etc/passwd) must not be read and uploaded; a symlink that stays inside
// the tree is fine.
TEST_F(TempTree, SymlinkOutOfRootIsRefused) {
  write("secret.txt", "root:x:0:0:secret\n");
  write("proj/main.metal", "");
  fs::path proj = root_ / "proj";
  fs::create_symlink(root_ / "secret.txt", proj / "evil.h");
  fs::create_symlink("/etc/passwd", proj / "passwd.h");
  auto c = collectIncludes(proj, "main.metal", "#include \"evil.h\"\n#include \"passwd.h\"\n", {});
  EXPECT_TRUE(c.files.empty()) << keys(c).front();
  ASSERT_EQ(c.errors.size(), 2u);
  EXPECT_NE(c.errors[0].find("evil.h"), std::string::npos) << c.errors[0];
  EXPECT_NE(c.errors[0].find((root_ / "secret.txt").string()), std::string::npos) << c.errors[0];
  EXPECT_NE(c.errors[1].find("passwd.h"), std::string::npos) << c.errors[1];
  EXPECT_NE(c.errors[1].find("/etc/passwd"), std::string::npos) << c.errors[1];
}

TEST_F(TempTree, SymlinkedIncludeDirOutOfRootIsRefused) {
  write("outside/h.h", "// outside\n");
  write("proj/main.metal", "");
  fs::path proj = root_ / "proj";
  fs::create_directory_symlink(root_ / "outside", proj / "inc");
  auto c = collectIncludes(proj, "main.metal", "#include <h.h>\n", {"inc"});
  EXPECT_TRUE(c.files.empty());
  ASSERT_EQ(c.errors.size(), 1u);
  EXPECT_NE(c.errors[0].find("inc/h.h"), std::string::npos) << c.errors[0];
  EXPECT_NE(c.errors[0].find((root_ / "outside" / "h.h").string()), std::string::npos)
      << c.errors[0];
}

TEST_F(TempTree, SymlinkInsideRootIsFollowed) {
  write("proj/real/inner.h", "// inner\n");
  write("proj/main.metal", "");
  fs::path proj = root_ / "proj";
  fs::create_symlink("real/inner.h", proj / "link.h");
  fs::create_directory_symlink("real", proj / "inc");
  auto c = collectIncludes(proj, "main.metal", "#include \"link.h\"\n#include <inner.h>\n", {"inc"});
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
  // Sent under the path the compiler looks for, with the target's bytes.
  EXPECT_EQ(keys(c), (Strings{"inc/inner.h", "link.h"}));
  EXPECT_EQ(c.files["link.h"], "// inner\n");
  EXPECT_EQ(c.files["inc/inner.h"], "// inner\n");
}

// The same check when the compile root is itself reached through a symlink.
TEST_F(TempTree, SymlinkedRootStillAllowsItsOwnFiles) {
  write("real/main.metal", "");
  write("real/a.h", "// a\n");
  fs::create_directory_symlink(root_ / "real", root_ / "alias");
  auto c = collectIncludes(root_ / "alias", "main.metal", "#include \"a.h\"\n", {});
  EXPECT_TRUE(c.errors.empty()) << c.errors.front();
  EXPECT_EQ(keys(c), (Strings{"a.h"}));
}

// mslc refuses (exit 1, before any RPC) rather than compiling without the
// header, and a main source that is such a symlink is refused too.
TEST_F(TempTree, RunRefusesSymlinkOutOfRoot) {
  write("secret.txt", "root:x:0:0:secret\n");
  write("proj/main.metal", "#include \"evil.h\"\n");
  fs::path proj = root_ / "proj";
  fs::create_symlink(root_ / "secret.txt", proj / "evil.h");
  fs::create_symlink(root_ / "secret.txt", proj / "evil.metal");
  fs::path saved = fs::current_path();
  fs::current_path(proj);
  std::ostringstream out, err, out2, err2;
  // Port 1: nothing listens there; the refusal must come before any call.
  int rc = run({"-c", "main.metal", "-o", "out.bc", "--server", "127.0.0.1:1"}, nullptr, out, err);
  int rc2 = run({"-c", "evil.metal", "-o", "out.bc", "--server", "127.0.0.1:1"}, nullptr, out2, err2);
  fs::current_path(saved);
  EXPECT_EQ(rc, 1);
  EXPECT_NE(err.str().find("evil.h"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("outside"), std::string::npos) << err.str();
  EXPECT_EQ(err.str().find("UNAVAILABLE"), std::string::npos) << err.str();
  EXPECT_EQ(rc2, 1);
  EXPECT_NE(err2.str().find("evil.metal"), std::string::npos) << err2.str();
  EXPECT_EQ(err2.str().find("UNAVAILABLE"), std::string::npos) << err2.str();
}

// --- diagnostics -----------------------------------------------------------

TEST(FormatDiagnostic, ClangStyle) {
  msl::v1::Diagnostic d;
  d.set_file("k.metal");
  d.set_line(3);
  d.set_column(7);
  d.set_severity(msl::v1::Diagnostic::ERROR);
  d.set_message("use of undeclared identifier 'x'");
  auto* n = d.add_notes();
  n->set_file("inc/h.h");
  n->set_line(1);
  n->set_column(2);
  n->set_severity(msl::v1::Diagnostic::NOTE);
  n->set_message("declared here");
  EXPECT_EQ(formatDiagnostic(d),
            "k.metal:3:7: error: use of undeclared identifier 'x'\n"
            "inc/h.h:1:2: note: declared here\n");

  msl::v1::Diagnostic w;
  w.set_file("k.metal");
  w.set_line(9);
  w.set_severity(msl::v1::Diagnostic::WARNING);
  w.set_message("w");
  EXPECT_EQ(formatDiagnostic(w), "k.metal:9: warning: w\n");
  msl::v1::Diagnostic f;
  f.set_severity(msl::v1::Diagnostic::FATAL);
  f.set_message("too many errors");
  EXPECT_EQ(formatDiagnostic(f), "fatal error: too many errors\n");

  msl::v1::CompileResponse r;
  EXPECT_EQ(formatSummary(r), "");
  *r.add_diagnostics() = w;
  EXPECT_EQ(formatSummary(r), "1 warning generated.\n");
  *r.add_diagnostics() = d;
  *r.add_diagnostics() = f;
  EXPECT_EQ(formatSummary(r), "1 warning and 2 errors generated.\n");
}

TEST(Digest, Sha256) {
  EXPECT_EQ(msl::client::sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  auto d = msl::client::digestOf("abc");
  EXPECT_EQ(d.hash(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(d.size_bytes(), 3);
  EXPECT_EQ(msl::client::statusCodeName(grpc::StatusCode::UNAVAILABLE), "UNAVAILABLE");
  EXPECT_EQ(msl::client::describeStatus(grpc::Status(grpc::StatusCode::NOT_FOUND, "x")),
            "NOT_FOUND: x");
}
