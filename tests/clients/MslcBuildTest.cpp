// issue 11: mslc as a drop-in for `metal` in a build: inputs anywhere (the
// host <-> request path map, diagnostics with the paths as spelled), several
// inputs and default output names, -S -emit-llvm, and -MD dependency files
// as clang writes them.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "msl/client/MslcDriver.h"

namespace fs = std::filesystem;
using namespace msl::client::mslc;
using Strings = std::vector<std::string>;

namespace {

Invocation parse(const Strings& args, std::string* error = nullptr) {
  Invocation inv;
  std::string e;
  bool ok = parseCommandLine(args, nullptr, "/home/u/proj", &inv, &e);
  if (error) *error = ok ? "" : e;
  else EXPECT_TRUE(ok) << e;
  return inv;
}

class Tree : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("mslc_build_test_" + std::to_string(rd()));
    fs::create_directories(root_);
    root_ = fs::canonical(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel, std::ios::binary) << text;
  }
  // loadSources from `cwd` (relative to root_) with the command line `args`.
  LoadedSources load(const std::string& cwd, const Strings& args, std::string* err = nullptr) {
    Invocation inv;
    std::string error;
    EXPECT_TRUE(parseCommandLine(args, nullptr, root_ / cwd, &inv, &error)) << error;
    LoadedSources sources;
    std::ostringstream errors;
    bool ok = loadSources(inv.input, inv, root_ / cwd, &sources, errors);
    if (err) *err = errors.str();
    else EXPECT_TRUE(ok) << errors.str();
    return sources;
  }
  static Strings keys(const std::map<std::string, std::string>& m) {
    Strings out;
    for (const auto& [k, v] : m) out.push_back(k);
    return out;
  }
  fs::path root_;
};

}  // namespace

// --- the command line ------------------------------------------------------

TEST(MslcCommandLine, SeveralInputsAndDefaultOutputs) {
  auto inv = parse({"-c", "a.metal", "dir/b.metal"});
  EXPECT_EQ(inv.inputs, (Strings{"a.metal", "dir/b.metal"}));
  EXPECT_EQ(inv.output, "");
  EXPECT_EQ(inv.emit, msl::v1::LLVM_BITCODE);
  EXPECT_EQ(defaultOutputName("dir/b.metal", msl::v1::LLVM_BITCODE), "b.air");
  EXPECT_EQ(defaultOutputName("/abs/k.metal", msl::v1::LLVM_IR), "k.ll");
  EXPECT_EQ(defaultOutputName("k.metal", msl::v1::PTX), "k.ptx");
  EXPECT_EQ(defaultOutputName("k", msl::v1::REFLECTION), "k.json");
  // The old spelling still works, and -oFILE too.
  EXPECT_EQ(parse({"-c", "a.metal", "-oout/a.air"}).output, "out/a.air");
  std::string error;
  parse({"-c", "a.metal", "b.metal", "-o", "x.air"}, &error);
  EXPECT_EQ(error, "cannot specify -o when generating multiple output files");
  parse({"-c"}, &error);
  EXPECT_EQ(error, "no input files");
  parse({"-c", "a.metal", "b.metal", "-MD", "-MF", "x.d"}, &error);
  EXPECT_NE(error.find("-MF"), std::string::npos);
}

TEST(MslcCommandLine, AssemblyAndLlvm) {
  EXPECT_EQ(parse({"-S", "-emit-llvm", "a.metal"}).emit, msl::v1::LLVM_IR);
  EXPECT_EQ(parse({"-S", "a.metal"}).emit, msl::v1::LLVM_IR);
  EXPECT_EQ(parse({"-S", "a.metal", "--target", "nvptx64"}).emit, msl::v1::PTX);
  EXPECT_EQ(parse({"-S", "-emit-llvm", "a.metal", "--target", "nvptx64"}).emit, msl::v1::LLVM_IR);
  EXPECT_EQ(parse({"-c", "-emit-llvm", "a.metal", "--target", "nvptx64"}).emit, msl::v1::LLVM_BITCODE);
  EXPECT_EQ(parse({"-c", "a.metal", "--target", "nvptx64"}).emit, msl::v1::PTX);
  EXPECT_EQ(parse({"-S", "a.metal", "--emit", "reflection"}).emit, msl::v1::REFLECTION);
}

TEST(MslcCommandLine, DependencyFlags) {
  auto inv = parse({"-c", "a.metal", "-MD", "-MF", "d/a.d", "-MT", "x y", "-MQ", "q$ #", "-MP"});
  EXPECT_TRUE(inv.deps.write);
  EXPECT_TRUE(inv.deps.system);
  EXPECT_EQ(inv.deps.file, "d/a.d");
  EXPECT_EQ(inv.deps.targets, (Strings{"x y", "q$$\\ \\#"}));
  EXPECT_TRUE(inv.deps.phony);
  auto mmd = parse({"-MMD", "-MFa.d", "-MTt", "-c", "a.metal"});
  EXPECT_TRUE(mmd.deps.write);
  EXPECT_FALSE(mmd.deps.system);
  EXPECT_EQ(mmd.deps.file, "a.d");
  EXPECT_EQ(mmd.deps.targets, (Strings{"t"}));
  EXPECT_FALSE(parse({"-c", "a.metal"}).deps.write);
}

// --- dependency files: byte for byte what clang 19 writes -------------------

TEST(DependencyFile, AsClangWritesIt) {
  // clang -c "cl/sub dir/b c.c" -MD -MF - -o 'o$#.o'
  EXPECT_EQ(formatDependencyFile({quoteMakeTarget("o$#.o")}, {"cl/sub dir/b c.c", "cl/sub dir/h.h"}, false),
            "o$$\\#.o: cl/sub\\ dir/b\\ c.c cl/sub\\ dir/h.h\n");
  // clang -c cl/a.c -I cl/inc -MMD -MP -MT foo -MT 'b$ar' -MQ 'q$ x' -MF -
  EXPECT_EQ(formatDependencyFile({"foo", "b$ar", quoteMakeTarget("q$ x")},
                                 {"cl/a.c", "cl/h.h", "cl/inc/i.h", "cl/inc/../h.h"}, true),
            "foo b$ar q$$\\ x: cl/a.c cl/h.h cl/inc/i.h cl/inc/../h.h\n"
            "\ncl/h.h:\n\ncl/inc/i.h:\n\ncl/inc/../h.h:\n");
  // A leading ./ is dropped (clang -c ./a.c), duplicates once.
  EXPECT_EQ(formatDependencyFile({"x.o"}, {"./a.c", "./h.h", "h.h"}, false), "x.o: a.c h.h\n");
  // Lines broken at 75 columns, as clang does.
  const std::string d = "a_rather_long_directory_name_for_wrapping/another_long_directory/";
  EXPECT_EQ(formatDependencyFile({"target_one_is_long_enough", "target_two_is_long_enough_as_well",
                                  "t3_________________________"},
                                 {"main.c", d + "first_header_with_long_name.h", d + "second_header_with_long_name.h",
                                  d + "third.h"},
                                 false),
            "target_one_is_long_enough target_two_is_long_enough_as_well \\\n"
            "  t3_________________________: main.c \\\n"
            "  " + d + "first_header_with_long_name.h \\\n"
            "  " + d + "second_header_with_long_name.h \\\n"
            "  " + d + "third.h\n");
}

// --- paths anywhere --------------------------------------------------------

// A build directory beside the sources (CMake's layout): the inputs and -I
// directories lie outside the current directory. The request is relative to
// the folder above them all, the same whether the paths are spelled absolute
// or relative (so the action key does not depend on where the build is).
TEST_F(Tree, InputsAndIncludeDirsOutsideTheCurrentDirectory) {
  write("src/shaders/a.metal", "#include \"common.h\"\n#include <lib/x.h>\n#include <metal_stdlib>\n");
  write("src/shaders/common.h", "#include \"../include/lib/y.h\"\n");
  write("src/include/lib/x.h", "// x\n");
  write("src/include/lib/y.h", "// y\n");
  write("src/include/lib/unused.h", "// never included: never sent\n");
  write("src/include/other/z.h", "// neither\n");
  fs::create_directories(root_ / "build");

  const std::string src = (root_ / "src").string();
  auto abs = load("build", {"-c", src + "/shaders/a.metal", "-I", src + "/include", "-DX"});
  EXPECT_EQ(abs.request_root, root_ / "src");
  EXPECT_EQ(abs.main_path, "shaders/a.metal");
  EXPECT_EQ(keys(abs.files), (Strings{"include/lib/x.h", "include/lib/y.h", "shaders/common.h"}));
  EXPECT_EQ(abs.options, (Strings{"-I", "include", "-D", "X"}));
  // Diagnostics and dependencies name the files as clang would.
  EXPECT_EQ(abs.host_paths.at("shaders/a.metal"), src + "/shaders/a.metal");
  EXPECT_EQ(abs.host_paths.at("shaders/common.h"), src + "/shaders/common.h");
  EXPECT_EQ(abs.host_paths.at("include/lib/x.h"), src + "/include/lib/x.h");
  EXPECT_EQ(abs.host_paths.at("include/lib/y.h"), src + "/shaders/../include/lib/y.h");
  // Depth first, as clang enters them.
  EXPECT_EQ(abs.dependencies, (Strings{src + "/shaders/a.metal", src + "/shaders/common.h",
                                       src + "/shaders/../include/lib/y.h", src + "/include/lib/x.h"}));

  auto rel = load("build", {"-c", "../src/shaders/a.metal", "-I../src/include", "-DX"});
  EXPECT_EQ(rel.main_path, abs.main_path);
  EXPECT_EQ(rel.files, abs.files);
  EXPECT_EQ(rel.options, abs.options);
  EXPECT_EQ(rel.host_paths.at("shaders/common.h"), "../src/shaders/common.h");
  EXPECT_EQ(rel.host_paths.at("include/lib/x.h"), "../src/include/lib/x.h");
}

// Everything under the current directory: the request's paths are relative
// to it, as before (in-tree action keys do not change).
TEST_F(Tree, InTreeCompilesKeepTheirPaths) {
  write("proj/shaders/main.metal", "#include \"local.h\"\n#include <shared/params.h>\n");
  write("proj/shaders/local.h", "");
  write("proj/include/shared/params.h", "");
  auto s = load("proj", {"-c", "shaders/main.metal", "-I", "include"});
  EXPECT_EQ(s.request_root, root_ / "proj");
  EXPECT_EQ(s.main_path, "shaders/main.metal");
  EXPECT_EQ(keys(s.files), (Strings{"include/shared/params.h", "shaders/local.h"}));
  EXPECT_EQ(s.options, (Strings{"-I", "include"}));
  // The same through an absolute -I inside the tree.
  auto a = load("proj", {"-c", (root_ / "proj/shaders/main.metal").string(), "-I", (root_ / "proj/include").string()});
  EXPECT_EQ(a.main_path, "shaders/main.metal");
  EXPECT_EQ(a.options, (Strings{"-I", "include"}));
  // "./" beside a main source without a folder, as clang prints it.
  write("proj/k.metal", "#include \"h.h\"\n");
  write("proj/h.h", "");
  auto k = load("proj", {"k.metal"});
  EXPECT_EQ(k.host_paths.at("h.h"), "./h.h");
  EXPECT_EQ(k.dependencies, (Strings{"k.metal", "./h.h"}));
}

// -include files anywhere, sent with their headers.
TEST_F(Tree, ForcedIncludeOutsideTheCurrentDirectory) {
  write("work/k.metal", "kernel void k() {}\n");
  write("pre/prelude.metal", "#include \"common.h\"\n");
  write("pre/common.h", "#define X 1\n");
  auto s = load("work", {"-c", "k.metal", "-include", (root_ / "pre/prelude.metal").string()});
  EXPECT_EQ(s.request_root, root_);
  EXPECT_EQ(s.main_path, "work/k.metal");
  EXPECT_EQ(keys(s.files), (Strings{"pre/common.h", "pre/prelude.metal"}));
  EXPECT_EQ(s.options, (Strings{"-include", "pre/prelude.metal"}));
  EXPECT_EQ(s.dependencies, (Strings{"k.metal", (root_ / "pre/prelude.metal").string(),
                                     (root_ / "pre/common.h").string()}));
}

// Symlinks: a header reached through a symlink that stays in a root is sent
// (under the path the compiler looks for); one out of every root the
// command line names is refused, wherever the input lies.
TEST_F(Tree, SymlinksOutOfTheNamedRootsAreRefused) {
  write("secret.txt", "root:x:0:0:secret\n");
  write("src/a.metal", "#include \"evil.h\"\n");
  write("src/b.metal", "#include \"link.h\"\n");
  write("src/real/inner.h", "// inner\n");
  fs::create_symlink(root_ / "secret.txt", root_ / "src/evil.h");
  fs::create_symlink("real/inner.h", root_ / "src/link.h");
  fs::create_directories(root_ / "build");
  std::string err;
  load("build", {"-c", "../src/a.metal"}, &err);
  EXPECT_NE(err.find("refusing to send '../src/evil.h'"), std::string::npos) << err;
  EXPECT_NE(err.find((root_ / "secret.txt").string()), std::string::npos) << err;
  auto b = load("build", {"-c", "../src/b.metal"});
  EXPECT_EQ(keys(b.files), (Strings{"link.h"}));
  EXPECT_EQ(b.files.at("link.h"), "// inner\n");
  // A current directory reached through a symlink: its own files are fine.
  fs::create_directory_symlink(root_ / "src", root_ / "alias");
  auto c = load("alias", {"b.metal"});
  EXPECT_EQ(keys(c.files), (Strings{"link.h"}));
}

// A header outside every root (included with ../ out of the input's folder,
// not named on the command line) is not read; naming its folder with -I
// sends it.
TEST_F(Tree, HeadersOutsideTheNamedRootsNeedAnIncludeDir) {
  write("src/shaders/a.metal", "#include \"../common/c.h\"\n");
  write("src/common/c.h", "// c\n");
  fs::create_directories(root_ / "build");
  std::string err;
  auto s = load("build", {"-c", "../src/shaders/a.metal"}, &err);
  EXPECT_TRUE(s.files.empty());
  EXPECT_NE(err.find("warning: ../src/shaders/a.metal:1: not sending '../src/shaders/../common/c.h'"),
            std::string::npos)
      << err;
  auto t = load("build", {"-c", "../src/shaders/a.metal", "-I", "../src/common"});
  EXPECT_EQ(keys(t.files), (Strings{"common/c.h"}));
}

TEST(MapDiagnosticPaths, RequestPathsBecomeHostPaths) {
  LoadedSources s;
  s.host_paths = {{"shaders/a.metal", "/src/shaders/a.metal"},
                  {"include/lib/y.h", "/src/shaders/../include/lib/y.h"}};
  msl::v1::CompileResponse r;
  auto* d = r.add_diagnostics();
  d->set_file("shaders/a.metal");
  d->set_line(3);
  d->set_column(7);
  d->set_severity(msl::v1::Diagnostic::ERROR);
  d->set_message("use of undeclared identifier 'x'");
  auto* n = d->add_notes();
  n->set_file("shaders/../include/lib/y.h");  // as the server's clang spells it
  n->set_line(1);
  n->set_column(2);
  n->set_severity(msl::v1::Diagnostic::NOTE);
  n->set_message("declared here");
  auto* stdlib = r.add_diagnostics();
  stdlib->set_file("<stdlib>/metal_math");
  stdlib->set_severity(msl::v1::Diagnostic::WARNING);
  stdlib->set_message("w");
  mapDiagnosticPaths(&r, s);
  EXPECT_EQ(formatDiagnostics(r),
            "/src/shaders/a.metal:3:7: error: use of undeclared identifier 'x'\n"
            "/src/shaders/../include/lib/y.h:1:2: note: declared here\n"
            "<stdlib>/metal_math: warning: w\n"
            "1 warning and 1 error generated.\n");
}
