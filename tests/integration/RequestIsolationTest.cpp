// Integration tests through the real msld (see DaemonFixture.h): what one
// request sends cannot break the worker or change what later requests see,
// and msld and the worker judge a request alike.
#include "DaemonFixture.h"

namespace msl::test {
namespace {

using msl::v1::CompileResponse;

const char *kPlainKernel = "#include <metal_stdlib>\nusing namespace metal;\n"
                           "kernel void k(device float *o [[buffer(0)]]) { o[0] = sqrt(o[1]); }\n";

void addFile(msl::v1::CompileRequest &req, const std::string &path, const std::string &data) {
  auto *f = req.add_files();
  f->set_path(path);
  f->mutable_content()->set_inline_(data);
}

class RequestIsolationTest : public DaemonTest {
protected:
  // One worker, so that every request of a test runs in the same process.
  Daemon &startOneWorker() {
    Daemon &d = startDaemon({"--compile-workers", "1"});
    EXPECT_TRUE(d.running()) << d.log();
    return d;
  }
};

// Request files named like stdlib headers were once built into the worker's
// precompiled stdlib, failing every later compile on that worker.
TEST_F(RequestIsolationTest, StdlibNamedFilesDoNotPoisonLaterCompiles) {
  Daemon &d = startOneWorker();
  auto poison = compileRequest(kPlainKernel, {"-I", "."});
  for (const char *name : {"__msl_stage.h", "__msl_prelude.h", "metal_stdlib"})
    addFile(poison, name, readSourceFile(std::string("compiler/stdlib/") + name) + "\n// the request's copy\n");
  CompileResponse first;
  ASSERT_TRUE(compile(d, poison, first).ok());

  CompileResponse next;
  auto status = compile(d, compileRequest(kPlainKernel), next);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(next.success()) << diagnosticsText(next);
}

TEST_F(RequestIsolationTest, HugeTypedefNameCompiles) {
  Daemon &d = startOneWorker();
  const std::string name = "v" + std::string(200000, 'x');
  CompileResponse resp;
  auto status = compile(d, compileRequest("#include <metal_stdlib>\nusing namespace metal;\n"
                                          "typedef float4 " + name + ";\n"
                                          "kernel void k(device float4 *o [[buffer(0)]]) { o[0] = " +
                                          name + "(1.0); }\n"),
                        resp);
  ASSERT_TRUE(status.ok()) << status.error_message().substr(0, 1000);
  EXPECT_TRUE(resp.success()) << diagnosticsText(resp).substr(0, 1000);
}

// 300 warnings of 40 KB each: 12 MB of diagnostics from a 5-line source,
// unless the compile bounds them.
TEST_F(RequestIsolationTest, DiagnosticsFloodIsBounded) {
  Daemon &d = startOneWorker();
  const std::string source = "#define X10(x) x x x x x x x x x x\n"
                             "#define S10(s) s s s s s s s s s s\n"
                             "#define TEXT S10(S10(S10(S10(\"0123\"))))\n"
                             "#define P _Pragma(\"message(TEXT)\")\n"
                             "X10(X10(P P P))\n"
                             "kernel void k(device int *o [[buffer(0)]]) { o[0] = 1; }\n";
  CompileResponse resp;
  auto status = compile(d, compileRequest(source), resp);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(resp.success());
  EXPECT_LT(resp.ByteSizeLong(), size_t(1.1 * (1 << 20)));
  ASSERT_GT(resp.diagnostics_size(), 0);
  const auto &last = resp.diagnostics(resp.diagnostics_size() - 1);
  EXPECT_EQ(last.file(), "<msld>");
  EXPECT_EQ(last.severity(), msl::v1::Diagnostic::NOTE);
  EXPECT_NE(last.message().find("100 more diagnostics not shown"), std::string::npos) << last.message();
}

// The daemon parses options with the worker's parser: an -I outside the
// compile root is refused before it is queued, with the worker's message.
TEST_F(RequestIsolationTest, IncludeDirOutsideTheRootIsRefusedByMsld) {
  Daemon &d = startOneWorker();
  for (const char *dir : {"/etc", "../.."}) {
    SCOPED_TRACE(dir);
    CompileResponse resp;
    auto status = compile(d, compileRequest(kPlainKernel, {"-I", dir}), resp);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << diagnosticsText(resp);
    EXPECT_NE(status.error_message().find("-I directory '" + std::string(dir) + "'"), std::string::npos)
        << status.error_message();
  }
}

TEST_F(RequestIsolationTest, IntegerConstantsTakeTheirTypesExtremes) {
  Daemon &d = startOneWorker();
  auto req = compileRequest("#include <metal_stdlib>\n"
                            "constant int int_min [[function_constant(0)]];\n"
                            "constant long long_min [[function_constant(1)]];\n"
                            "kernel void k(device long *o [[buffer(0)]]) { o[0] = int_min; o[1] = long_min; }\n",
                            {}, msl::v1::Target::X86_64, {msl::v1::LLVM_IR});
  (*req.mutable_function_constants())["0"] = "-2147483648";
  (*req.mutable_function_constants())["long_min"] = "-9223372036854775808";
  CompileResponse resp;
  auto status = compile(d, req, resp);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(resp.success()) << diagnosticsText(resp);
  std::string ir = artifact(resp, msl::v1::LLVM_IR);
  EXPECT_NE(ir.find("store i64 -2147483648"), std::string::npos) << ir;
  EXPECT_NE(ir.find("store i64 -9223372036854775808"), std::string::npos) << ir;
}

} // namespace
} // namespace msl::test
