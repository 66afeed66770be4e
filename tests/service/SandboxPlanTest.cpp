// SandboxPlan (service/Sandbox.h): what a sandboxed worker gets to see, and
// what cannot be sandboxed. The sandbox itself, with the real msld, is
// tests/integration/SandboxTest.cpp.
#include "Sandbox.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace msl::service {
namespace {

bool has(const std::vector<std::string> &paths, const std::string &needle) {
  return std::any_of(paths.begin(), paths.end(),
                     [&](const std::string &p) { return p.find(needle) != std::string::npos; });
}

TEST(SandboxPlanTest, ShowsTheBinaryItsLoaderAndLibrariesOnly) {
  std::string error;
  auto plan = SandboxPlan::prepare("/bin/sh", {}, error);
  ASSERT_NE(plan, nullptr) << error;
  auto paths = plan->visiblePaths();
  EXPECT_TRUE(has(paths, "/bin/sh"));
  EXPECT_TRUE(has(paths, "libc.so.6"));
  EXPECT_TRUE(has(paths, "ld-linux"));
  EXPECT_TRUE(has(paths, "/dev/null"));
  EXPECT_FALSE(has(paths, "/etc/passwd"));
  EXPECT_FALSE(has(paths, "(rw)"));
  EXPECT_EQ(plan->executable(), "/bin/sh");
}

TEST(SandboxPlanTest, ExtraPathsAreShownReadOnlyOrWritable) {
  auto dir = std::filesystem::temp_directory_path();
  SandboxOptions options;
  options.readOnlyPaths = {"/etc/hostname", "/no/such/path"};
  options.writablePaths = {dir.string()};
  std::string error;
  auto plan = SandboxPlan::prepare("/bin/sh", options, error);
  ASSERT_NE(plan, nullptr) << error;
  auto paths = plan->visiblePaths();
  EXPECT_EQ(has(paths, "/etc/hostname"), std::filesystem::exists("/etc/hostname"));
  EXPECT_FALSE(has(paths, "/no/such/path"));
  EXPECT_TRUE(has(paths, dir.string() + " (rw)"));
}

TEST(SandboxPlanTest, ScriptsAndMissingFilesCannotBeSandboxed) {
  auto script = std::filesystem::temp_directory_path() / "msl-sandbox-plan-test.sh";
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  std::string error;
  EXPECT_EQ(SandboxPlan::prepare(script.string(), {}, error), nullptr);
  EXPECT_NE(error.find("not an ELF executable"), std::string::npos) << error;
  std::filesystem::remove(script);
  error.clear();
  EXPECT_EQ(SandboxPlan::prepare("/no/such/worker", {}, error), nullptr);
  EXPECT_NE(error.find("not an executable"), std::string::npos) << error;
}

} // namespace
} // namespace msl::service
