// compile() under requests written to break it or the compiles after it:
// files that shadow the stdlib, huge names, diagnostics floods.
#include "TestUtil.h"

#include "msl/compiler/Compiler.h"

#include <gtest/gtest.h>

namespace msl::compiler {
namespace {

using namespace test;

const char *kPlainKernel = "#include <metal_stdlib>\nusing namespace metal;\n"
                           "kernel void k(device float *o [[buffer(0)]]) { o[0] = sqrt(o[1]); }\n";

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// ---- One request cannot change what the next one sees -------------------------

// Files named like the stdlib's own headers once shadowed the implicit
// -include of the prelude and were built into the process's precompiled
// stdlib, which then failed every later compile of that configuration.
TEST(RequestIsolation, FilesNamedLikeStdlibHeadersDoNotPoisonThePch) {
  // A configuration no other test uses, so its PCH is built here, first by
  // the poisoning request.
  const std::vector<std::string> config = {"-std=ios-metal2.2", "-Wno-unused-label"};
  CompileJob poison = makeJob(kPlainKernel, concat(config, {"-I", "."}));
  for (const char *name : {"__msl_prelude.h", "__msl_stage.h", "metal_stdlib"})
    poison.files[name] = embeddedStdlib().at(name) + "\n// the request's copy\n";
  compile(poison); // its own outcome does not matter here

  CompileResult next = compile(makeJob(kPlainKernel, config));
  ASSERT_TRUE(next.success) << dump(next);
  EXPECT_TRUE(next.precompiledStdlib) << "a plain source uses the PCH";
}

// A request whose -I directory holds a stdlib header gets what Clang's
// search order gives it (its own header), for that request only.
TEST(RequestIsolation, RequestHeaderShadowingTheStdlibIsUsedWithoutThePch) {
  CompileJob own = makeJob("#include <metal_stdlib>\n"
                           "#ifdef __METAL_STDLIB\n#error the stdlib's metal_stdlib was used\n#endif\n"
                           "kernel void k(device int *o [[buffer(0)]]) { o[0] = FROM_REQUEST; }\n",
                           {"-I", "."});
  own.files["metal_stdlib"] = "#define FROM_REQUEST 7\n";
  CompileResult r = compile(own);
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_FALSE(r.precompiledStdlib);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 7"), std::string::npos);

  // One of the headers metal_stdlib includes, in an -I directory.
  CompileJob inner = makeJob("#include <metal_stdlib>\n"
                             "kernel void k(device int *o [[buffer(0)]]) { o[0] = FROM_REQUEST; }\n",
                             {"-I", "inc"});
  inner.files["inc/metal_assert"] = "#define FROM_REQUEST 8\n";
  r = compile(inner);
  ASSERT_TRUE(r.success) << dump(r);
  EXPECT_FALSE(r.precompiledStdlib);
  EXPECT_NE(r.artifacts[OutputKind::LLVMIR].find("store i32 8"), std::string::npos);

  CompileResult plain = compile(makeJob(kPlainKernel));
  ASSERT_TRUE(plain.success) << dump(plain);
  EXPECT_TRUE(plain.precompiledStdlib);
}

// Without -I, a file named like a stdlib header is an ordinary request file:
// reachable with #include "...", invisible to <...> and to the prelude.
TEST(RequestIsolation, StdlibNamesWithoutIncludeDirDoNotShadow) {
  // With the precompiled stdlib and with the headers parsed (a directive
  // before the include).
  for (std::string source : {std::string(kPlainKernel), "#define PARSE_IT\n" + std::string(kPlainKernel)}) {
    CompileJob job = makeJob(source);
    for (const char *name : {"__msl_prelude.h", "__msl_stage.h", "metal_stdlib", "metal_math"})
      job.files[name] = "#error the request's copy was used\n";
    CompileResult r = compile(job);
    ASSERT_TRUE(r.success) << dump(r);
    EXPECT_EQ(r.precompiledStdlib, source == kPlainKernel);
  }
}

// ---- Vector typedef constructors: linear, and only real declarations ----------

TEST(VectorTypedefs, HugeTypedefNameCompiles) {
  const std::string name = "v" + std::string(200000, 'x');
  CompileResult r = compileIR("#include <metal_stdlib>\nusing namespace metal;\n"
                              "typedef float4 " + name + ";\n"
                              "kernel void k(device float4 *o [[buffer(0)]]) { o[0] = " + name + "(1.0); }\n");
  ASSERT_TRUE(r.success) << dump(r).substr(0, 2000);
}

TEST(VectorTypedefs, BothSpellingsGetConstructors) {
  CompileResult r = compileIR("#include <metal_stdlib>\n"
                              "typedef metal::half4 h4;\nusing f2 = float2;\nusing i3 = metal::int3;\n"
                              "kernel void k(device float *o [[buffer(0)]]) {\n"
                              "  o[0] = float(h4(1.0h).x) + f2(2.0, 3.0).y + float(i3(4).z);\n}\n");
  ASSERT_TRUE(r.success) << dump(r);
}

// A typedef in a comment or a string declares nothing; a macro for it would
// break the function of that name.
TEST(VectorTypedefs, CommentsAndStringsAreNotDeclarations) {
  CompileResult r = compileIR("#include <metal_stdlib>\n"
                              "// typedef float4 helper;\n"
                              "/* using helper = float4; */\n"
                              "static_assert(true, \"typedef float4 helper;\");\n"
                              "float helper(float x) { return x * 2.0; }\n"
                              "kernel void k(device float *o [[buffer(0)]]) { o[0] = helper(o[1]); }\n");
  ASSERT_TRUE(r.success) << dump(r);
}

// ---- Diagnostics are bounded -------------------------------------------------

// `count` warnings (a power of ten), each `#pragma message` of `length`
// bytes (a multiple of ten): megabytes of diagnostics from a few lines.
std::string pragmaMessages(int count, int length) {
  std::string messages = "P", text = "\"0123456789\"";
  for (; count > 1; count /= 10)
    messages = "X10(" + messages + ")";
  for (; length > 10; length /= 10)
    text = "S10(" + text + ")";
  // Two macros: one cannot expand inside its own expansion.
  return "#define X10(x) x x x x x x x x x x\n"
         "#define S10(s) s s s s s s s s s s\n"
         "#define TEXT " + text + "\n"
         "#define P _Pragma(\"message(TEXT)\")\n" +
         messages + "\nkernel void k(device int *o [[buffer(0)]]) { o[0] = 1; }\n";
}

size_t countWithNotes(const CompileResult &r) {
  size_t n = 0;
  for (const auto &d : r.diagnostics)
    n += 1 + d.notes.size();
  return n;
}

size_t bytesOf(const CompileResult &r) {
  size_t n = 0;
  for (const auto &d : r.diagnostics) {
    n += d.message.size() + d.file.size();
    for (const auto &note : d.notes)
      n += note.message.size() + note.file.size();
  }
  return n;
}

TEST(DiagnosticLimits, ManyWarningsStopAtTheCountWithAFinalNote) {
  CompileResult r = compileIR(pragmaMessages(10000, 10));
  EXPECT_TRUE(r.success) << "the limit bounds the report, not the outcome";
  EXPECT_EQ(countWithNotes(r), 201u);
  ASSERT_FALSE(r.diagnostics.empty());
  const Diagnostic &last = r.diagnostics.back();
  EXPECT_EQ(last.file, "<msld>");
  EXPECT_EQ(last.severity, Severity::Note);
  EXPECT_NE(last.message.find("9800 more diagnostics not shown"), std::string::npos) << last.message;
  EXPECT_NE(last.message.find("200 diagnostics"), std::string::npos) << last.message;
}

TEST(DiagnosticLimits, LongMessagesAreCut) {
  CompileResult r = compileIR(pragmaMessages(10, 100000));
  ASSERT_EQ(r.diagnostics.size(), 10u) << "no limit reached";
  for (const auto &d : r.diagnostics) {
    EXPECT_LE(d.message.size(), 4096u);
    EXPECT_NE(d.message.find("(100000 bytes"), std::string::npos) << d.message.substr(4000);
  }
}

TEST(DiagnosticLimits, BytesAreBoundedToo) {
  CompileJob job = makeJob(pragmaMessages(100, 10000));
  job.maxDiagnosticBytes = 64 << 10;
  CompileResult r = compile(job);
  EXPECT_LE(bytesOf(r), size_t(64 << 10) + 200); // and the final note
  ASSERT_FALSE(r.diagnostics.empty());
  const Diagnostic &last = r.diagnostics.back();
  EXPECT_EQ(last.file, "<msld>");
  EXPECT_NE(last.message.find("at most 65536 bytes of diagnostics"), std::string::npos) << last.message;
}

// Past the limit the compile stops at its next error, as -ferror-limit does,
// rather than making thousands more that nobody sees.
TEST(DiagnosticLimits, ErrorsPastTheLimitStopTheCompile) {
  CompileJob job = makeJob("#define X10(x) x x x x x x x x x x\n"
                           "kernel void k(device int *o [[buffer(0)]]) { X10(X10(X10(nope = 1;))) }\n");
  job.maxDiagnostics = 5;
  CompileResult r = compile(job);
  EXPECT_FALSE(r.success);
  EXPECT_EQ(countWithNotes(r), 6u) << dump(r);
  const Diagnostic &last = r.diagnostics.back();
  EXPECT_EQ(last.file, "<msld>");
  EXPECT_NE(last.message.find("2 more diagnostics not shown"), std::string::npos) << last.message;
  EXPECT_NE(last.message.find("compiling stopped"), std::string::npos) << last.message;
}

} // namespace
} // namespace msl::compiler
