#include "TestUtil.h"

#include "msl/cache/ActionCache.h"
#include "msl/cache/ContentStore.h"

using namespace msl::cache;
using msl::cache::test::StoreTest;

namespace {

using ActionCacheTest = StoreTest;

const std::string kKey = Digest::of("action").hash;

TEST_F(ActionCacheTest, PutGetRoundTrip) {
  auto S = open();
  ActionCache &AC = S->actionCache();
  EXPECT_TRUE(AC.get(kKey).isNotFound());
  ASSERT_TRUE(AC.put(kKey, std::string("res\0ult", 7)).isOk());
  auto R = AC.get(kKey);
  ASSERT_TRUE(R) << R.status().toString();
  EXPECT_EQ(*R, std::string("res\0ult", 7));
  // Overwrite replaces.
  ASSERT_TRUE(AC.put(kKey, "").isOk());
  EXPECT_EQ(*AC.get(kKey), "");
  // The action cache does not touch CAS stats.
  EXPECT_EQ(S->blobCount(), 0u);
}

TEST_F(ActionCacheTest, MalformedKeyRejected) {
  auto S = open();
  EXPECT_EQ(S->actionCache().put("short", "x").code(),
            Status::Code::InvalidArgument);
  EXPECT_EQ(S->actionCache().get(std::string(64, 'G')).status().code(),
            Status::Code::InvalidArgument);
}

TEST_F(ActionCacheTest, StoredValueCarriesChecksum) {
  {
    auto S = open();
    ASSERT_TRUE(S->actionCache().put(kKey, "payload").isOk());
  }
  auto Raw = rawGet("ac", kKey);
  ASSERT_TRUE(Raw);
  ASSERT_EQ(Raw->size(), 1 + 32 + 7);
  EXPECT_EQ(Raw->substr(33), "payload");
  auto Sum = Sha256().update("payload").finishRaw();
  EXPECT_EQ(Raw->substr(1, 32),
            std::string(reinterpret_cast<const char *>(Sum.data()), 32));
}

TEST_F(ActionCacheTest, CorruptEntryIsAMissCountedAndDeleted) {
  std::string Other = Digest::of("other").hash;
  {
    auto S = open();
    ASSERT_TRUE(S->actionCache().put(kKey, "compile result").isOk());
    ASSERT_TRUE(S->actionCache().put(Other, "fine").isOk());
  }
  auto Raw = rawGet("ac", kKey);
  ASSERT_TRUE(Raw);
  (*Raw)[Raw->size() - 1] ^= 0x01; // flip one payload bit
  rawPut("ac", kKey, *Raw);

  auto S = open();
  ActionCache &AC = S->actionCache();
  auto R = AC.get(kKey);
  EXPECT_TRUE(R.isNotFound()) << R.status().toString();
  EXPECT_EQ(AC.corruptEntriesFound(), 1u);
  ASSERT_FALSE(Warnings.empty());
  EXPECT_NE(Warnings.back().find(kKey), std::string::npos);
  // Deleted: now a plain miss.
  EXPECT_TRUE(AC.get(kKey).isNotFound());
  EXPECT_EQ(AC.corruptEntriesFound(), 1u);
  EXPECT_EQ(*AC.get(Other), "fine");
  S.reset();
  EXPECT_FALSE(rawGet("ac", kKey));
}

TEST_F(ActionCacheTest, MalformedStoredValueIsCorrupt) {
  {
    auto S = open();
    ASSERT_TRUE(S->actionCache().put(kKey, "x").isOk());
  }
  rawPut("ac", kKey, "tiny"); // shorter than the header
  auto S = open();
  EXPECT_TRUE(S->actionCache().get(kKey).isNotFound());
  EXPECT_EQ(S->actionCache().corruptEntriesFound(), 1u);
  // And a fresh put works again.
  ASSERT_TRUE(S->actionCache().put(kKey, "y").isOk());
  EXPECT_EQ(*S->actionCache().get(kKey), "y");
}

} // namespace
