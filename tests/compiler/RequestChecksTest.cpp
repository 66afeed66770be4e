// The request checks msld and the worker share (RequestChecks.h): pure, no
// compile, except where a test shows that compile() says the same.
#include "TestUtil.h"

#include "msl/compiler/Options.h"
#include "msl/compiler/RequestChecks.h"

#include <gtest/gtest.h>

#include <chrono>

namespace msl::compiler {
namespace {

using namespace test;

TEST(RequestPathTest, CanonicalRelativePathsPass) {
  for (const char *path : {"main.metal", "inc/a.h", "a/b/c/d.h", "..x", "x..", ".hidden", "a b.h"})
    EXPECT_EQ(checkRequestPath("file path", path), "") << path;
}

TEST(RequestPathTest, EscapingOrAmbiguousPathsFail) {
  for (const char *path : {"", "/etc/passwd", "../x.h", "a/../b.h", "a/./b.h", ".", "..", "a//b.h",
                           "a/", "/"}) {
    SCOPED_TRACE(path);
    std::string e = checkRequestPath("file path", path);
    EXPECT_EQ(e, "file path '" + std::string(path) +
                     "' must be relative to the compile root, without '.', '..' or empty parts");
  }
}

TEST(RequestPathTest, ControlBytesFailAndAreEscaped) {
  EXPECT_EQ(checkRequestPath("main_path", std::string("a\0b.h", 5)),
            "main_path 'a\\x00b.h' contains a control byte");
  EXPECT_NE(checkRequestPath("file path", "a\nb.h"), "");
  EXPECT_NE(checkRequestPath("file path", "a\x7f"), "");
  EXPECT_EQ(checkRequestPath("file path", "caf\xc3\xa9.h"), "") << "UTF-8 names are fine";
}

TEST(RequestPathTest, LengthIsBounded) {
  RequestLimits limits;
  std::string path(limits.maxPathBytes, 'a');
  EXPECT_EQ(checkRequestPath("file path", path), "");
  std::string e = checkRequestPath("file path", path + "a");
  EXPECT_NE(e.find("1025 bytes; at most 1024"), std::string::npos) << e;
  EXPECT_LT(e.size(), 200u) << "the path is not echoed in full";
  limits.maxPathBytes = 4;
  EXPECT_NE(checkRequestPath("file path", "abcde", limits), "");
}

TEST(RequestCountsTest, FilesAndConstantsAreBounded) {
  RequestLimits limits;
  EXPECT_EQ(checkRequestCounts(limits.maxFiles, limits.maxFunctionConstants), "");
  EXPECT_EQ(checkRequestCounts(limits.maxFiles + 1, 0), "the request has 10001 files; at most 10000 are allowed");
  EXPECT_EQ(checkRequestCounts(0, limits.maxFunctionConstants + 1),
            "the request has 4097 function constants; at most 4096 are allowed");
}

TEST(FunctionConstantTest, KeysAreIndicesOrNames) {
  for (const char *key : {"0", "7", "65535", "use_bias", "_x", "A9"})
    EXPECT_EQ(checkFunctionConstant(key, "1"), "") << key;
  for (const char *key : {"", "65536", "99999", "123456", "07", "1a", "a-b", "a b", "\xc3\xa9"})
    EXPECT_NE(checkFunctionConstant(key, "1"), "") << key;
}

TEST(FunctionConstantTest, ValuesAreLiteralsThatFitIn64Bits) {
  for (const char *value : {"true", "false", "0", "1", "-1", "42", "-2147483648", "2147483648",
                            "-9223372036854775808", "18446744073709551615", "0x7fffffff", "0b101",
                            "017", "0.5", "-0.5", ".5", "1.", "1e3", "-1.5E-3", "3.4028235e38"})
    EXPECT_EQ(checkFunctionConstant("k", value), "") << value;
  for (const char *value : {"", "-", "maybe", "True", "18446744073709551616", "-9223372036854775809",
                            "0x", "0x1g", "09", "1e", "1.5f", "--1", "+1", "1 ", " 1", "nan", "inf"})
    EXPECT_NE(checkFunctionConstant("k", value), "") << value;
}

TEST(FunctionConstantTest, LongKeysAndValuesAreRefusedQuicklyWithShortMessages) {
  // ~30,000 characters once overflowed std::regex's stack in msld.
  const std::string huge(30000, 'a');
  auto start = std::chrono::steady_clock::now();
  std::string byKey = checkFunctionConstant(huge, "1");
  std::string byValue = checkFunctionConstant("k", std::string(30000, '1'));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  EXPECT_NE(byKey.find("30000 bytes; at most 256"), std::string::npos) << byKey;
  EXPECT_NE(byValue.find("30000 bytes; at most 256"), std::string::npos) << byValue;
  EXPECT_LT(byKey.size(), 250u);
  EXPECT_LT(byValue.size(), 250u);
}

TEST(NvptxCpuTest, SmNamesOnly) {
  for (const char *cpu : {"sm_90", "sm_90a", "sm_80", "sm_100", "sm_100a"})
    EXPECT_EQ(checkNvptxCpu(cpu), "") << cpu;
  for (const char *cpu : {"", "sm_", "sm_9", "sm_1000", "sm_90b", "sm_9a", "SM_90", "sm_90 ", "x86-64", "sm_a"})
    EXPECT_NE(checkNvptxCpu(cpu), "") << cpu;
  EXPECT_EQ(checkNvptxCpu("sm_9"), "target cpu 'sm_9' is not an NVPTX SM such as sm_90 or sm_90a");
}

TEST(QuoteForMessageTest, EscapesAndCuts) {
  EXPECT_EQ(quoteForMessage(""), "''");
  EXPECT_EQ(quoteForMessage("inc/a.h"), "'inc/a.h'");
  EXPECT_EQ(quoteForMessage(std::string("a\0\n\x7f\xc3\xa9", 6)), "'a\\x00\\x0a\\x7f\\xc3\\xa9'");
  std::string cut = quoteForMessage(std::string(100, 'x'));
  EXPECT_EQ(cut, "'" + std::string(64, 'x') + "'... (100 bytes)");
  EXPECT_EQ(quoteForMessage(std::string(64, 'x')), "'" + std::string(64, 'x') + "'");
}

// One validation: compile() refuses what msld's checks refuse, in the same words.
TEST(RequestChecksTest, CompileRefusesWithTheSameMessages) {
  auto firstMessage = [](const CompileJob &job) {
    CompileResult r = compile(job);
    EXPECT_FALSE(r.success);
    return r.diagnostics.empty() ? std::string() : r.diagnostics[0].message;
  };
  const char *source = "kernel void k(device int *o [[buffer(0)]]) { o[0] = 1; }\n";
  std::string optionError;
  parseMetalOptions({"-I", "/etc"}, optionError);
  EXPECT_EQ(firstMessage(makeJob(source, {"-I", "/etc"})), optionError);

  CompileJob job = makeJob(source);
  job.files[std::string("a\0b.h", 5)] = "";
  EXPECT_EQ(firstMessage(job), checkRequestPath("file path", std::string("a\0b.h", 5)));

  job = makeJob(source);
  job.functionConstants["k"] = "maybe";
  EXPECT_EQ(firstMessage(job), checkFunctionConstant("k", "maybe"));

  job = makeJob(source, {}, {OutputKind::LLVMIR}, Arch::NVPTX64);
  job.target.cpu = "sm_9";
  EXPECT_EQ(firstMessage(job), checkNvptxCpu("sm_9"));
}

} // namespace
} // namespace msl::compiler
