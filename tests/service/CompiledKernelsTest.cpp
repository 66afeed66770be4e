// Execute's kernels kept by their compile (service/CompiledKernels.h):
// found by the exact request bytes, the least recently used dropped past
// either bound.
#include "CompiledKernels.h"

#include <gtest/gtest.h>

namespace msl::service {
namespace {

std::shared_ptr<const CompiledKernel> kernel(const std::string &module) {
  auto k = std::make_shared<CompiledKernel>();
  k->module = module;
  k->reflection = nlohmann::json::object();
  return k;
}

TEST(CompiledKernelsTest, FoundByTheExactRequestBytesOnly) {
  CompiledKernels kept;
  kept.keep("request-a", kernel("module-a"));
  ASSERT_TRUE(kept.find("request-a"));
  EXPECT_EQ(kept.find("request-a")->module, "module-a");
  EXPECT_FALSE(kept.find("request-"));
  EXPECT_FALSE(kept.find("request-ab"));
  EXPECT_FALSE(kept.find(std::string("request-a\0", 10)));
  kept.keep("request-a", kernel("module-a2")); // replaced, not doubled
  EXPECT_EQ(kept.find("request-a")->module, "module-a2");
  EXPECT_EQ(kept.size(), 1u);
}

TEST(CompiledKernelsTest, TheLeastRecentlyUsedGoPastEitherBound) {
  CompiledKernels byCount({/*maxEntries=*/2, /*maxBytes=*/1 << 20});
  byCount.keep("a", kernel("1"));
  byCount.keep("b", kernel("2"));
  ASSERT_TRUE(byCount.find("a")); // a used last: b goes next
  byCount.keep("c", kernel("3"));
  EXPECT_TRUE(byCount.find("a"));
  EXPECT_FALSE(byCount.find("b"));
  EXPECT_TRUE(byCount.find("c"));

  CompiledKernels byBytes({/*maxEntries=*/100, /*maxBytes=*/100});
  byBytes.keep("x", kernel(std::string(60, 'x')));
  byBytes.keep("y", kernel(std::string(30, 'y')));
  EXPECT_EQ(byBytes.size(), 2u);
  byBytes.keep("z", kernel(std::string(30, 'z'))); // 61 + 31 + 31 > 100: x goes
  EXPECT_FALSE(byBytes.find("x"));
  EXPECT_TRUE(byBytes.find("y"));
  EXPECT_TRUE(byBytes.find("z"));
  byBytes.keep("huge", kernel(std::string(200, 'h'))); // larger than the bound: not kept, nothing dropped
  EXPECT_FALSE(byBytes.find("huge"));
  EXPECT_EQ(byBytes.size(), 2u);
}

} // namespace
} // namespace msl::service
