#include "TestUtil.h"

#include "msl/cache/ActionCache.h"
#include "msl/cache/ContentStore.h"

#include <atomic>
#include <thread>

using namespace msl::cache;
using msl::cache::test::StoreTest;

namespace {

using ContentStoreTest = StoreTest;

TEST_F(ContentStoreTest, PutGetRoundTrip) {
  auto S = open();
  ASSERT_TRUE(S);
  std::string Data = "kernel void k() {}";
  Digest D = Digest::of(Data);
  ASSERT_TRUE(S->put(D, Data).isOk());
  EXPECT_TRUE(S->contains(D));
  auto R = S->get(D);
  ASSERT_TRUE(R) << R.status().toString();
  EXPECT_EQ(*R, Data);

  // Binary content with NULs, and the empty blob.
  std::string Bin("a\0b\0\xff", 5);
  auto BD = S->putBytes(Bin);
  ASSERT_TRUE(BD);
  EXPECT_EQ(*BD, Digest::of(Bin));
  EXPECT_EQ(*S->get(*BD), Bin);
  auto ED = S->putBytes("");
  ASSERT_TRUE(ED);
  EXPECT_EQ(*S->get(*ED), "");
}

TEST_F(ContentStoreTest, LargeBlobUsesBlobFilesAndRoundTrips) {
  auto S = open();
  ASSERT_TRUE(S);
  std::string Big(1 << 20, '\0');
  for (size_t I = 0; I < Big.size(); ++I)
    Big[I] = char(I * 131 % 251);
  auto D = S->putBytes(Big);
  ASSERT_TRUE(D);
  EXPECT_EQ(*S->get(*D), Big);
  EXPECT_EQ(S->totalBytes(), Big.size());
}

TEST_F(ContentStoreTest, GetMissingIsNotFound) {
  auto S = open();
  auto R = S->get(Digest::of("nope"));
  EXPECT_TRUE(R.isNotFound());
  EXPECT_FALSE(S->contains(Digest::of("nope")));
  EXPECT_EQ(S->corruptBlobsFound(), 0u);
}

TEST_F(ContentStoreTest, PutWithWrongDigestIsRejected) {
  auto S = open();
  Digest Claimed = Digest::of("abc");
  Status St = S->put(Claimed, "abd");
  ASSERT_FALSE(St.isOk());
  EXPECT_EQ(St.code(), Status::Code::InvalidArgument);
  EXPECT_NE(St.message().find("expected " + Claimed.hash), std::string::npos)
      << St.message();
  EXPECT_NE(St.message().find("actual " + Digest::of("abd").hash),
            std::string::npos)
      << St.message();
  EXPECT_FALSE(S->contains(Claimed));

  // Right hash, wrong size.
  St = S->put(Digest{Claimed.hash, 4}, "abc");
  EXPECT_EQ(St.code(), Status::Code::InvalidArgument);
  EXPECT_EQ(S->blobCount(), 0u);
}

TEST_F(ContentStoreTest, MalformedDigestRejected) {
  auto S = open();
  EXPECT_EQ(S->put(Digest{"ABC", 3}, "abc").code(),
            Status::Code::InvalidArgument);
  EXPECT_EQ(S->get(Digest{"xyz", 1}).status().code(),
            Status::Code::InvalidArgument);
  Digest Neg = Digest::of("abc");
  Neg.size_bytes = -1;
  EXPECT_EQ(S->get(Neg).status().code(), Status::Code::InvalidArgument);
  EXPECT_FALSE(S->contains(Neg));
}

TEST_F(ContentStoreTest, TooLargeRejected) {
  auto O = options();
  O.max_blob_bytes = 10;
  auto S = open(O);
  EXPECT_EQ(S->putBytes(std::string(11, 'x')).status().code(),
            Status::Code::TooLarge);
  EXPECT_TRUE(S->putBytes(std::string(10, 'x')));
}

TEST_F(ContentStoreTest, FindMissing) {
  auto S = open();
  Digest A = *S->putBytes("a");
  Digest C = *S->putBytes("c");
  Digest B = Digest::of("b");
  Digest D = Digest::of("d");
  Digest Bad{"not-a-hash", 1};
  std::vector<Digest> Missing = S->findMissing({A, B, C, D, Bad});
  EXPECT_EQ(Missing, (std::vector<Digest>{B, D, Bad}));
  EXPECT_TRUE(S->findMissing({}).empty());
  EXPECT_TRUE(S->findMissing({A, C}).empty());
  // Same hash with a different size is a different blob.
  EXPECT_EQ(S->findMissing({Digest{A.hash, 2}}).size(), 1u);
}

TEST_F(ContentStoreTest, RepeatedPutsDoNotDoubleCount) {
  auto S = open();
  for (int I = 0; I < 3; ++I) {
    ASSERT_TRUE(S->putBytes("hello"));
    ASSERT_TRUE(S->putBytes("world!"));
  }
  EXPECT_EQ(S->blobCount(), 2u);
  EXPECT_EQ(S->totalBytes(), 11u);
  S.reset();
  S = open();
  ASSERT_TRUE(S->putBytes("hello"));
  EXPECT_EQ(S->blobCount(), 2u);
  EXPECT_EQ(S->totalBytes(), 11u);
}

TEST_F(ContentStoreTest, ConcurrentPutsCountOnce) {
  auto S = open();
  constexpr int Threads = 8, Blobs = 50;
  std::vector<std::thread> Ts;
  std::atomic<int> Failures{0};
  for (int T = 0; T < Threads; ++T)
    Ts.emplace_back([&] {
      for (int I = 0; I < Blobs; ++I)
        if (!S->putBytes("blob-" + std::to_string(I)))
          ++Failures;
    });
  for (auto &T : Ts)
    T.join();
  EXPECT_EQ(Failures, 0);
  uint64_t Bytes = 0;
  for (int I = 0; I < Blobs; ++I)
    Bytes += ("blob-" + std::to_string(I)).size();
  EXPECT_EQ(S->blobCount(), uint64_t(Blobs));
  EXPECT_EQ(S->totalBytes(), Bytes);
  S.reset();
  S = open();
  EXPECT_EQ(S->blobCount(), uint64_t(Blobs));
  EXPECT_EQ(S->totalBytes(), Bytes);
}

TEST_F(ContentStoreTest, SurvivesReopen) {
  Digest A, B;
  {
    auto S = open();
    A = *S->putBytes("alpha");
    B = *S->putBytes(std::string(100000, 'b')); // blob-file sized
    ASSERT_TRUE(S->actionCache().put(Digest::of("k").hash, "result").isOk());
    EXPECT_EQ(S->blobCount(), 2u);
  }
  auto S = open();
  ASSERT_TRUE(S);
  EXPECT_EQ(S->blobCount(), 2u);
  EXPECT_EQ(S->totalBytes(), 5u + 100000u);
  EXPECT_EQ(*S->get(A), "alpha");
  EXPECT_EQ(*S->get(B), std::string(100000, 'b'));
  EXPECT_TRUE(S->findMissing({A, B}).empty());
  auto R = S->actionCache().get(Digest::of("k").hash);
  ASSERT_TRUE(R) << R.status().toString();
  EXPECT_EQ(*R, "result");
}

TEST_F(ContentStoreTest, CreateIfMissingFalseFailsOnMissingStore) {
  auto O = options();
  O.create_if_missing = false;
  auto R = ContentStore::open(O);
  ASSERT_FALSE(R);
  EXPECT_EQ(R.status().code(), Status::Code::IOError);
  EXPECT_FALSE(ContentStore::open(StoreOptions{}));
}

TEST_F(ContentStoreTest, CorruptBlobIsDetectedDeletedAndCounted) {
  Digest Good, Other;
  {
    auto S = open();
    Good = *S->putBytes("the real bytes");
    Other = *S->putBytes("an innocent bystander");
  }
  rawPut("cas", Good.toString(), "the reaL bytes");

  auto S = open();
  EXPECT_EQ(S->blobCount(), 2u);
  EXPECT_TRUE(S->contains(Good)); // contains() does not verify...
  auto R = S->get(Good);          // ...but get() does.
  EXPECT_TRUE(R.isNotFound()) << R.status().toString();
  EXPECT_EQ(S->corruptBlobsFound(), 1u);
  EXPECT_FALSE(S->contains(Good));
  EXPECT_EQ(S->findMissing({Good, Other}), std::vector<Digest>{Good});
  EXPECT_EQ(S->blobCount(), 1u);
  EXPECT_EQ(S->totalBytes(), Other.size_bytes);
  ASSERT_FALSE(Warnings.empty());
  EXPECT_NE(Warnings.back().find(Good.hash), std::string::npos);

  // A second get is a plain miss, not another corruption.
  EXPECT_TRUE(S->get(Good).isNotFound());
  EXPECT_EQ(S->corruptBlobsFound(), 1u);
  EXPECT_EQ(*S->get(Other), "an innocent bystander");

  // Re-uploading restores it, counted once.
  ASSERT_TRUE(S->put(Good, "the real bytes").isOk());
  EXPECT_EQ(*S->get(Good), "the real bytes");
  EXPECT_EQ(S->blobCount(), 2u);

  // Counters persisted through the delete.
  S.reset();
  S = open();
  EXPECT_EQ(S->blobCount(), 2u);
  EXPECT_EQ(S->totalBytes(), Good.size_bytes + Other.size_bytes);
}

TEST_F(ContentStoreTest, TruncatedBlobIsCorrupt) {
  Digest D;
  {
    auto S = open();
    D = *S->putBytes("0123456789");
  }
  rawPut("cas", D.toString(), "01234");
  auto S = open();
  EXPECT_TRUE(S->get(D).isNotFound());
  EXPECT_EQ(S->corruptBlobsFound(), 1u);
  EXPECT_FALSE(S->contains(D));
}

TEST_F(ContentStoreTest, PutRepairsDamagedCopyWithoutRecounting) {
  Digest D;
  {
    auto S = open();
    D = *S->putBytes("payload");
  }
  rawPut("cas", D.toString(), "garbage");
  auto S = open();
  ASSERT_TRUE(S->put(D, "payload").isOk());
  EXPECT_EQ(S->blobCount(), 1u);
  EXPECT_EQ(*S->get(D), "payload");
  EXPECT_EQ(S->corruptBlobsFound(), 0u);
}

TEST_F(ContentStoreTest, RecountStatsOnOpen) {
  {
    auto S = open();
    ASSERT_TRUE(S->putBytes("abc"));
  }
  // Sneak a blob in behind the library's back: counters are now stale.
  Digest D = Digest::of("12345");
  rawPut("cas", D.toString(), "12345");
  {
    auto S = open();
    EXPECT_EQ(S->blobCount(), 1u);
  }
  auto O = options();
  O.recount_stats_on_open = true;
  auto S = open(O);
  EXPECT_EQ(S->blobCount(), 2u);
  EXPECT_EQ(S->totalBytes(), 8u);
  S.reset();
  S = open(); // the recount was persisted
  EXPECT_EQ(S->blobCount(), 2u);
}

TEST_F(ContentStoreTest, InlineOnlyAndUncompressedOptionsWork) {
  auto O = options();
  O.large_blob_threshold_bytes = 0;
  O.compress = false;
  O.block_cache_bytes = 0;
  O.sync_writes = true;
  auto S = open(O);
  std::string Big(200000, 'z');
  auto D = S->putBytes(Big);
  ASSERT_TRUE(D);
  EXPECT_EQ(*S->get(*D), Big);
}

} // namespace
