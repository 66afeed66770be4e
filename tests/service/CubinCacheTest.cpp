// The cubin cache key (service/CubinCache.h): every field counts, fields
// cannot run into each other, and a kept cubin is found under its key.
#include "CubinCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

namespace msl::service {
namespace {

CubinKey base() { return {std::string(64, 'a'), "sm_90", "580.159.04", 13000, "optimization-level=4"}; }

TEST(CubinCacheTest, KeyIsStableHexAndCoversEveryField) {
  const std::string key = cubinCacheKey(base());
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(cubinCacheKey(base()), key);
  std::vector<CubinKey> changed(5, base());
  changed[0].ptxDigest = std::string(64, 'b');
  changed[1].sm = "sm_80";
  changed[2].driverBuild = "580.159.05";
  changed[3].cudaVersion = 13010;
  changed[4].jitOptions = "optimization-level=3";
  for (size_t i = 0; i < changed.size(); ++i)
    EXPECT_NE(cubinCacheKey(changed[i]), key) << "field " << i;
}

TEST(CubinCacheTest, FieldsDoNotRunIntoEachOther) {
  CubinKey a = base(), b = base();
  a.sm = "sm_9";
  a.driverBuild = "0580.159.04";
  b.sm = "sm_90";
  b.driverBuild = "580.159.04";
  EXPECT_NE(cubinCacheKey(a), cubinCacheKey(b));
}

TEST(CubinCacheTest, AKeptCubinIsFoundUnderItsKey) {
  auto dir = std::filesystem::temp_directory_path() / ("cubin-cache-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  cache::StoreOptions options;
  options.path = dir.string();
  auto store = cache::ContentStore::open(options);
  ASSERT_TRUE(store) << store.status().toString();
  const std::string key = cubinCacheKey(base());
  EXPECT_EQ(findCubin(**store, key), "");
  const std::string cubin("\x7f" "ELF cubin bytes\0with a NUL", 27);
  ASSERT_TRUE(keepCubin(**store, key, cubin));
  EXPECT_EQ(findCubin(**store, key), cubin);
  CubinKey other = base();
  other.sm = "sm_80";
  EXPECT_EQ(findCubin(**store, cubinCacheKey(other)), "") << "another GPU does not get it";
  store->reset();
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace msl::service
