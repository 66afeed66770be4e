// The bounded store: LRU eviction under StoreOptions::max_bytes, action
// entries protecting the blobs they reference, recency refreshed by hits and
// persisted across reopen, size accounting, and scrub().
#include "TestUtil.h"

#include "msl/cache/ActionCache.h"
#include "msl/cache/ContentStore.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

using namespace msl::cache;
using msl::cache::test::StoreTest;

namespace {

// Action values in these tests: the referenced digests, one "hash/size" a
// line (what action_references reads), optionally followed by "#" and junk.
std::string refsValue(const std::vector<Digest> &Refs, std::string Tail = "") {
  std::string V;
  for (const Digest &D : Refs)
    V += D.toString() + "\n";
  return V + "#" + Tail;
}

std::vector<Digest> parseRefs(std::string_view V) {
  std::vector<Digest> Out;
  std::istringstream In{std::string(V)};
  for (std::string Line; std::getline(In, Line);) {
    if (Line.empty() || Line[0] == '#')
      break;
    auto Slash = Line.find('/');
    if (Slash == std::string::npos)
      continue;
    Out.push_back(Digest{Line.substr(0, Slash), std::stoll(Line.substr(Slash + 1))});
  }
  return Out;
}

std::string blob(char C, size_t N = 300) { return std::string(N, C); }
std::string key(const std::string &Name) { return Digest::of(Name).hash; }
/// Stored size of an action value (format byte + SHA-256 + payload).
uint64_t entrySize(const std::string &Value) { return 33 + Value.size(); }

class EvictionTest : public StoreTest {
protected:
  StoreOptions capped(uint64_t MaxBytes) {
    StoreOptions O = options();
    O.max_bytes = MaxBytes;
    O.eviction_target_fraction = 1.0; // evict exactly down to the cap
    O.access_time_persist_interval_ms = 0; // persist every use
    O.action_references = parseRefs;
    return O;
  }
  /// Eviction runs on the store's evictor thread: waits (bounded) until it
  /// has finished the passes the puts so far asked for.
  static void settle(ContentStore &S) {
    ASSERT_TRUE(S.waitForEviction(30000)) << "the evictor did not finish in 30 s";
  }
};

TEST_F(EvictionTest, EvictsLeastRecentlyUsedFirst) {
  auto S = open(capped(1000));
  Digest A = *S->putBytes(blob('a'));
  Digest B = *S->putBytes(blob('b'));
  Digest C = *S->putBytes(blob('c'));
  EXPECT_EQ(S->cacheBytes(), 900u);
  ASSERT_TRUE(S->get(A)); // A is now the most recent: B is the oldest
  Digest D = *S->putBytes(blob('d')); // 1200 > 1000: one blob must go
  settle(*S);
  EXPECT_EQ(S->cacheBytes(), 900u);
  StoreStats St = S->stats();
  EXPECT_EQ(St.evicted_blobs, 1u);
  EXPECT_EQ(St.evicted_blob_bytes, 300u);
  EXPECT_EQ(St.blob_count, 3u);
  EXPECT_EQ(S->findMissing({A, B, C, D}), std::vector<Digest>{B});

  // findMissing() and contains() are uses too (REAPI): findMissing just
  // used A, C, D in that order; using A and D again leaves C the oldest.
  EXPECT_TRUE(S->contains(A));
  EXPECT_TRUE(S->contains(D));
  Digest E = *S->putBytes(blob('e'));
  settle(*S);
  EXPECT_EQ(S->findMissing({A, C, D, E}), std::vector<Digest>{C});
  EXPECT_EQ(S->stats().evicted_blobs, 2u);
  EXPECT_LE(S->cacheBytes(), 1000u);
}

TEST_F(EvictionTest, PutOfAnExistingBlobIsAUse) {
  auto S = open(capped(1000));
  Digest A = *S->putBytes(blob('a'));
  Digest B = *S->putBytes(blob('b'));
  Digest C = *S->putBytes(blob('c'));
  ASSERT_TRUE(S->put(A, blob('a')).isOk()); // re-upload: A is recent
  Digest D = *S->putBytes(blob('d'));
  settle(*S);
  EXPECT_EQ(S->findMissing({A, B, C, D}), std::vector<Digest>{B});
}

TEST_F(EvictionTest, EntriesAreEvictedBeforeTheBlobsTheyReference) {
  auto S = open(capped(1000));
  ActionCache &AC = S->actionCache();
  Digest X = *S->putBytes(blob('x'));
  Digest Y = *S->putBytes(blob('y'));
  std::string EV = refsValue({X});
  ASSERT_TRUE(AC.put(key("e"), EV).isOk());
  uint64_t ES = entrySize(EV);
  EXPECT_EQ(S->stats().action_entries, 1u);
  EXPECT_EQ(S->stats().action_bytes, ES);
  EXPECT_EQ(S->cacheBytes(), 600 + ES);

  // Over the cap: X is the oldest item but referenced, so Y goes.
  Digest Z = *S->putBytes(blob('z'));
  settle(*S);
  EXPECT_EQ(S->stats().evicted_blobs, 1u);
  EXPECT_EQ(S->stats().evicted_entries, 0u);
  EXPECT_EQ(S->cacheBytes(), 600 + ES);

  // Over again: the entry is now the oldest candidate; it goes, X stays.
  Digest W = *S->putBytes(blob('w'));
  settle(*S);
  EXPECT_EQ(S->stats().evicted_entries, 1u);
  EXPECT_EQ(S->stats().evicted_entry_bytes, ES);
  EXPECT_EQ(S->stats().action_entries, 0u);
  EXPECT_EQ(S->cacheBytes(), 900u);

  // Unreferenced now, X is the oldest blob and goes next.
  Digest V = *S->putBytes(blob('v'));
  settle(*S);
  EXPECT_EQ(S->findMissing({X, Y, Z, W, V}), (std::vector<Digest>{X, Y}));
  EXPECT_TRUE(AC.get(key("e")).isNotFound());
}

TEST_F(EvictionTest, ABlobReferencedTwiceStaysUntilBothEntriesGo) {
  auto S = open(capped(2000));
  ActionCache &AC = S->actionCache();
  Digest X = *S->putBytes(blob('x', 1000));
  ASSERT_TRUE(AC.put(key("e1"), refsValue({X, X})).isOk()); // duplicates count once
  ASSERT_TRUE(AC.put(key("e2"), refsValue({X})).isOk());
  for (char C : {'a', 'b', 'c', 'd', 'e', 'f'})
    ASSERT_TRUE(S->putBytes(blob(C, 200)));
  settle(*S);
  // Whatever went, a live entry's blob is present.
  for (const char *E : {"e1", "e2"})
    if (AC.get(key(E)))
      EXPECT_TRUE(S->contains(X)) << E;
  EXPECT_LE(S->cacheBytes(), 2000u);
}

TEST_F(EvictionTest, HitRefreshesAnEntry) {
  std::string V1 = refsValue({}, std::string(200, '1'));
  std::string V2 = refsValue({}, std::string(200, '2'));
  std::string V3 = refsValue({}, std::string(200, '3'));
  auto S = open(capped(2 * entrySize(V1) + 10));
  ActionCache &AC = S->actionCache();
  ASSERT_TRUE(AC.put(key("1"), V1).isOk());
  ASSERT_TRUE(AC.put(key("2"), V2).isOk());
  ASSERT_TRUE(AC.get(key("1"))); // hit: "2" is now the least recent
  ASSERT_TRUE(AC.put(key("3"), V3).isOk());
  settle(*S);
  EXPECT_EQ(S->stats().evicted_entries, 1u);
  EXPECT_TRUE(AC.get(key("2")).isNotFound());
  EXPECT_EQ(*AC.get(key("1")), V1);
  EXPECT_EQ(*AC.get(key("3")), V3);
}

TEST_F(EvictionTest, OverwritingAnEntryMovesItsReferences) {
  auto S = open(capped(1000));
  ActionCache &AC = S->actionCache();
  Digest X = *S->putBytes(blob('x'));
  Digest Y = *S->putBytes(blob('y'));
  ASSERT_TRUE(AC.put(key("e"), refsValue({X})).isOk());
  ASSERT_TRUE(AC.put(key("e"), refsValue({Y})).isOk()); // now references Y only
  EXPECT_EQ(S->stats().action_entries, 1u);
  EXPECT_EQ(S->stats().action_bytes, entrySize(refsValue({Y})));
  // X is the oldest and no longer referenced: it goes first.
  Digest Z = *S->putBytes(blob('z'));
  settle(*S);
  EXPECT_EQ(S->findMissing({X, Y, Z}), std::vector<Digest>{X});
  EXPECT_TRUE(AC.get(key("e")));
}

// A put over the bound returns without evicting: the evictor thread does
// that. Held in the test hook, the evictor evicts nothing and the puts
// still return (each waiting at most eviction_max_wait_ms, the store being
// past the bound by more than its margin); released, the evictor brings the
// store under the bound, oldest first, on its own thread.
TEST_F(EvictionTest, APutOverTheBoundReturnsWithoutEvicting) {
  std::mutex M;
  std::condition_variable Cv;
  bool Held = true;
  int Passes = 0;
  std::set<std::thread::id> EvictorThreads;
  auto O = capped(1000);
  O.eviction_max_wait_ms = 200;
  O.before_eviction_pass = [&] {
    std::unique_lock<std::mutex> L(M);
    ++Passes;
    EvictorThreads.insert(std::this_thread::get_id());
    Cv.notify_all();
    Cv.wait(L, [&] { return !Held; });
  };
  auto S = open(O);
  Digest A = *S->putBytes(blob('a'));
  Digest B = *S->putBytes(blob('b'));
  Digest C = *S->putBytes(blob('c'));
  auto Start = std::chrono::steady_clock::now();
  Digest D = *S->putBytes(blob('d')); // 1200: past the bound and its margin
  Digest E = *S->putBytes(blob('e')); // 1500
  double Took = std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count();
  {
    std::unique_lock<std::mutex> L(M);
    ASSERT_TRUE(Cv.wait_for(L, std::chrono::seconds(30), [&] { return Passes > 0; }))
        << "the evictor was not woken";
  }
  // Nothing was evicted, by the writer or anyone, and both puts returned.
  EXPECT_EQ(S->stats().evicted_blobs, 0u);
  EXPECT_EQ(S->stats().blob_count, 5u);
  EXPECT_EQ(S->cacheBytes(), 1500u);
  EXPECT_GE(Took, 0.2);  // backpressure: they waited for the evictor...
  EXPECT_LT(Took, 10.0); // ...but not beyond the bound
  EXPECT_FALSE(S->waitForEviction(0)); // a pass is pending

  {
    std::lock_guard<std::mutex> L(M);
    Held = false;
  }
  Cv.notify_all();
  settle(*S);
  EXPECT_EQ(S->cacheBytes(), 900u);
  EXPECT_EQ(S->stats().evicted_blobs, 2u);
  EXPECT_EQ(S->findMissing({A, B, C, D, E}), (std::vector<Digest>{A, B}));
  std::lock_guard<std::mutex> L(M);
  EXPECT_EQ(EvictorThreads.size(), 1u);
  EXPECT_EQ(EvictorThreads.count(std::this_thread::get_id()), 0u);
}

// Below the margin a put does not wait at all, and closing the store with
// a pass pending stops the evictor cleanly; the next open evicts.
TEST_F(EvictionTest, ClosingWithAPassPendingStopsTheEvictor) {
  std::atomic<bool> Held{true};
  auto O = capped(1000);
  O.before_eviction_pass = [&] {
    while (Held)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  {
    auto S = open(O);
    for (char C : {'a', 'b', 'c'})
      ASSERT_TRUE(S->putBytes(blob(C)));
    auto Start = std::chrono::steady_clock::now();
    ASSERT_TRUE(S->putBytes(blob('d', 100))); // 1000: at the bound, no pass
    ASSERT_TRUE(S->putBytes(blob('e', 100))); // 1100: past it, within the margin
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - Start).count(), 5.0);
    EXPECT_EQ(S->stats().evicted_blobs, 0u);
    Held = false; // the destructor joins the evictor
  }
  O.before_eviction_pass = nullptr;
  auto S = open(O);
  EXPECT_LE(S->cacheBytes(), 1000u);
}

TEST_F(EvictionTest, EntryReferencingAMissingBlobIsNotStored) {
  auto S = open(capped(1000));
  Digest Absent = Digest::of("never stored");
  ASSERT_TRUE(S->actionCache().put(key("e"), refsValue({Absent})).isOk());
  EXPECT_TRUE(S->actionCache().get(key("e")).isNotFound());
  EXPECT_EQ(S->stats().action_puts_dropped, 1u);
  EXPECT_EQ(S->stats().action_entries, 0u);
}

TEST_F(EvictionTest, ValuesLargerThanTheCapAreRefused) {
  auto S = open(capped(1000));
  EXPECT_EQ(S->putBytes(blob('a', 1001)).status().code(), Status::Code::TooLarge);
  EXPECT_EQ(S->actionCache().put(key("e"), std::string(1000, 'v')).code(),
            Status::Code::TooLarge);
  EXPECT_TRUE(S->putBytes(blob('a', 1000)));
}

TEST_F(EvictionTest, AccountingAndRecencySurviveReopen) {
  Digest A, B, C;
  std::string EV;
  StoreStats Before;
  {
    auto S = open(capped(10000));
    A = *S->putBytes(blob('a'));
    B = *S->putBytes(blob('b'));
    C = *S->putBytes(blob('c', 100000 / 20)); // 5000
    EV = refsValue({B}, "result");
    ASSERT_TRUE(S->actionCache().put(key("e"), EV).isOk());
    ASSERT_TRUE(S->get(A)); // order now: B, C, entry, A
    Before = S->stats();
    EXPECT_EQ(Before.cache_bytes, 600 + 5000 + entrySize(EV));
  }
  {
    auto S = open(capped(10000));
    StoreStats After = S->stats();
    EXPECT_EQ(After.blob_count, Before.blob_count);
    EXPECT_EQ(After.total_bytes, Before.total_bytes);
    EXPECT_EQ(After.action_entries, 1u);
    EXPECT_EQ(After.action_bytes, entrySize(EV));
    EXPECT_EQ(After.cache_bytes, Before.cache_bytes);
    EXPECT_EQ(After.evicted_blobs, 0u); // since open
  }
  // Reopened with a smaller cap, the store shrinks at open, oldest first:
  // B is protected by the entry, so C goes, and the cap is then met.
  auto S = open(capped(1000));
  EXPECT_LE(S->cacheBytes(), 1000u);
  EXPECT_EQ(S->stats().evicted_blobs, 1u);
  EXPECT_EQ(S->stats().evicted_entries, 0u);
  EXPECT_EQ(S->findMissing({A, B, C}), std::vector<Digest>{C});
  EXPECT_EQ(*S->actionCache().get(key("e")), EV);
}

TEST_F(EvictionTest, StoreOfAnOlderBuildGetsItsIndexRebuilt) {
  Digest A, B;
  {
    auto O = capped(0);
    auto S = open(O);
    A = *S->putBytes(blob('a'));
    B = *S->putBytes(blob('b'));
    ASSERT_TRUE(S->actionCache().put(key("e"), refsValue({A})).isOk());
  }
  // As an older build leaves it: no index marker, no records.
  rawDelete("default", "meta/lru_index_version");
  rawDelete("lru", "c" + A.toString());
  rawDelete("lru", "a" + key("e"));
  auto S = open(capped(1000));
  StoreStats St = S->stats();
  EXPECT_EQ(St.blob_count, 2u);
  EXPECT_EQ(St.action_entries, 1u);
  EXPECT_EQ(St.cache_bytes, 600 + entrySize(refsValue({A})));
  // The rebuilt index still knows that the entry references A.
  Digest C = *S->putBytes(blob('c'));
  settle(*S);
  EXPECT_EQ(S->findMissing({A, B, C}), std::vector<Digest>{B});
  EXPECT_TRUE(S->actionCache().get(key("e")));
}

TEST_F(EvictionTest, StoreWithoutTheLruFamilyOpensAndIsIndexed) {
  // A store exactly as the previous build wrote it: three column families.
  Digest A = Digest::of("old blob");
  std::string Payload = refsValue({A});
  auto Sum = Sha256().update(Payload).finishRaw();
  std::string Stored = std::string(1, '\x01') +
                       std::string(reinterpret_cast<const char *>(Sum.data()), 32) + Payload;
  {
    rocksdb::DBOptions DbOpts;
    DbOpts.create_if_missing = true;
    DbOpts.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> Cfs = {
        {rocksdb::kDefaultColumnFamilyName, {}}, {"cas", {}}, {"ac", {}}};
    std::vector<rocksdb::ColumnFamilyHandle *> H;
    rocksdb::DB *Db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(DbOpts, options().path, Cfs, &H, &Db).ok());
    rocksdb::WriteOptions W;
    ASSERT_TRUE(Db->Put(W, H[0], "meta/format_version", "1").ok());
    ASSERT_TRUE(Db->Put(W, H[1], A.toString(), "old blob").ok());
    ASSERT_TRUE(Db->Put(W, H[2], key("old"), Stored).ok());
    for (auto *X : H)
      Db->DestroyColumnFamilyHandle(X);
    delete Db;
  }
  auto S = open(capped(1000));
  ASSERT_TRUE(S);
  EXPECT_EQ(S->blobCount(), 1u);
  EXPECT_EQ(S->stats().action_entries, 1u);
  EXPECT_EQ(S->cacheBytes(), uint64_t(A.size_bytes) + Stored.size());
  EXPECT_EQ(*S->actionCache().get(key("old")), Payload);
  EXPECT_EQ(*S->get(A), "old blob");
  EXPECT_TRUE(S->scrub().clean());
}

TEST_F(EvictionTest, ConcurrentWritersNeverLeaveAnEntryWithoutItsBlobs) {
  auto O = capped(64 << 10);
  O.eviction_target_fraction = 0.9;
  O.access_time_persist_interval_ms = 60000;
  auto S = open(O);
  constexpr int Threads = 6, PerThread = 150;
  std::atomic<int> Failures{0};
  std::vector<std::thread> Ts;
  for (int T = 0; T < Threads; ++T)
    Ts.emplace_back([&, T] {
      std::mt19937 Rng(T);
      for (int I = 0; I < PerThread; ++I) {
        // Shared blobs across threads (i % 40) and some unique ones.
        std::string A = "shared-" + std::to_string(Rng() % 40) + std::string(700, 's');
        std::string U = "own-" + std::to_string(T) + "-" + std::to_string(I) +
                        std::string(Rng() % 3000, 'u');
        auto DA = S->putBytes(A), DU = S->putBytes(U);
        if (!DA || !DU) {
          ++Failures;
          continue;
        }
        std::string K = key("k" + std::to_string(Rng() % 200));
        if (!S->actionCache().put(K, refsValue({*DA, *DU})).isOk())
          ++Failures;
        std::string R = key("k" + std::to_string(Rng() % 200));
        if (auto Hit = S->actionCache().get(R)) {
          for (const Digest &D : parseRefs(*Hit))
            (void)S->get(D); // may have been evicted after the hit; no crash
        }
      }
    });
  for (auto &T : Ts)
    T.join();
  settle(*S);
  EXPECT_EQ(Failures, 0);
  EXPECT_LE(S->cacheBytes(), uint64_t(64 << 10));
  EXPECT_GT(S->stats().evicted_blobs, 0u);
  EXPECT_EQ(S->corruptBlobsFound(), 0u);
  // Quiescent: every live entry's blobs are present and intact.
  int Live = 0;
  for (int I = 0; I < 200; ++I) {
    auto Hit = S->actionCache().get(key("k" + std::to_string(I)));
    if (!Hit)
      continue;
    ++Live;
    for (const Digest &D : parseRefs(*Hit))
      EXPECT_TRUE(S->get(D)) << D.toString();
  }
  EXPECT_GT(Live, 0);
  // And the accounting matches a fresh look at the data.
  StoreStats Running = S->stats();
  S.reset();
  auto Recount = options();
  Recount.recount_stats_on_open = true;
  Recount.action_references = parseRefs;
  S = open(Recount);
  EXPECT_EQ(S->stats().blob_count, Running.blob_count);
  EXPECT_EQ(S->stats().total_bytes, Running.total_bytes);
  EXPECT_EQ(S->stats().action_entries, Running.action_entries);
  EXPECT_EQ(S->stats().action_bytes, Running.action_bytes);
  EXPECT_TRUE(S->scrub().clean());
}

TEST_F(EvictionTest, ScrubDropsCorruptBlobsAndTheEntriesReferencingThem) {
  Digest A, B;
  std::string Junk = key("junk");
  {
    auto S = open(capped(0));
    A = *S->putBytes("the real bytes");
    B = *S->putBytes("an innocent bystander");
    ASSERT_TRUE(S->actionCache().put(key("ea"), refsValue({A})).isOk());
    ASSERT_TRUE(S->actionCache().put(key("eb"), refsValue({B})).isOk());
    ASSERT_TRUE(S->actionCache().put(Junk, "fine").isOk());
    EXPECT_TRUE(S->scrub().clean());
  }
  // Damage on disk, written straight through RocksDB.
  rawPut("cas", A.toString(), "the reaL bytes");
  rawPut("ac", Junk, "garbage, not a checksummed value");

  auto S = open(capped(0));
  // Counting only: nothing changes.
  ScrubOptions CountOnly;
  CountOnly.drop_corrupt = false;
  ScrubReport Look = S->scrub(CountOnly);
  EXPECT_EQ(Look.corrupt_blobs, 1u);
  EXPECT_EQ(Look.corrupt_entries, 1u);
  EXPECT_EQ(Look.entries_missing_blobs, 1u);
  EXPECT_EQ(S->blobCount(), 2u);

  ScrubReport R = S->scrub();
  EXPECT_TRUE(R.status.isOk()) << R.status.toString();
  EXPECT_EQ(R.blobs_checked, 2u);
  EXPECT_EQ(R.bytes_checked, A.size_bytes + B.size_bytes);
  EXPECT_EQ(R.corrupt_blobs, 1u);
  // ea went with its blob, at once (before the scan of the entries), as a
  // live store needs: a hit must not name an artifact that is gone.
  EXPECT_EQ(R.entries_checked, 2u);
  EXPECT_EQ(R.corrupt_entries, 1u);
  EXPECT_EQ(R.entries_missing_blobs, 1u);
  EXPECT_FALSE(R.clean());
  EXPECT_NE(R.toString().find("corrupt_blobs=1"), std::string::npos) << R.toString();
  EXPECT_FALSE(S->contains(A));
  EXPECT_TRUE(S->actionCache().get(key("ea")).isNotFound());
  EXPECT_TRUE(S->actionCache().get(Junk).isNotFound());
  EXPECT_TRUE(S->actionCache().get(key("eb")));
  EXPECT_EQ(*S->get(B), "an innocent bystander");
  StoreStats St = S->stats();
  EXPECT_EQ(St.blob_count, 1u);
  EXPECT_EQ(St.total_bytes, uint64_t(B.size_bytes));
  EXPECT_EQ(St.action_entries, 1u);
  EXPECT_EQ(S->actionCache().corruptEntriesFound(), 2u); // both scrubs
  EXPECT_TRUE(S->scrub().clean());
  S.reset();
  EXPECT_FALSE(rawGet("cas", A.toString()));
  EXPECT_FALSE(rawGet("ac", key("ea")));
}

TEST_F(EvictionTest, ScrubMakesTheIndexMatchTheData) {
  Digest A, B, Sneaked = Digest::of("sneaked in");
  {
    auto S = open(capped(0));
    A = *S->putBytes("alpha");
    B = *S->putBytes("beta");
    ASSERT_TRUE(S->actionCache().put(key("ea"), refsValue({A})).isOk());
  }
  rawDelete("cas", A.toString());             // gone behind the library's back
  rawPut("cas", Sneaked.toString(), "sneaked in"); // and one added
  auto S = open(capped(0));
  ScrubReport R = S->scrub();
  EXPECT_EQ(R.index_repairs, 2u) << R.toString();
  EXPECT_EQ(R.entries_missing_blobs, 1u);
  EXPECT_EQ(R.corrupt_blobs, 0u);
  EXPECT_TRUE(S->actionCache().get(key("ea")).isNotFound());
  EXPECT_EQ(S->blobCount(), 2u);
  EXPECT_EQ(S->totalBytes(), uint64_t(B.size_bytes + Sneaked.size_bytes));
  EXPECT_TRUE(S->scrub().clean());
}

TEST_F(EvictionTest, GetOfACorruptBlobDropsTheEntriesReferencingIt) {
  Digest A;
  {
    auto S = open(capped(0));
    A = *S->putBytes("artifact");
    ASSERT_TRUE(S->actionCache().put(key("e"), refsValue({A})).isOk());
  }
  rawPut("cas", A.toString(), "artifacT");
  auto S = open(capped(0));
  EXPECT_TRUE(S->get(A).isNotFound());
  EXPECT_TRUE(S->actionCache().get(key("e")).isNotFound());
  EXPECT_EQ(S->stats().action_entries, 0u);
}

// An online scrub beside writers (the store open and in use, as under msld's
// Admin.Scrub): it drops the blob that rotted on disk and the entry
// referencing it, reports nothing else (fresh writes are neither corrupt nor
// missing), and loses nothing a writer was told is stored: every
// acknowledged blob is there and intact, every acknowledged entry there with
// its blobs, and the counters match a recount.
TEST_F(EvictionTest, OnlineScrubBesideWritersLosesNothing) {
  Digest Rotten, Good;
  constexpr int Bulk = 200;
  {
    auto S = open(capped(0));
    Rotten = *S->putBytes("rotten artifact");
    Good = *S->putBytes("good artifact");
    ASSERT_TRUE(S->actionCache().put(key("rotten"), refsValue({Rotten})).isOk());
    ASSERT_TRUE(S->actionCache().put(key("good"), refsValue({Good})).isOk());
    for (int I = 0; I < Bulk; ++I) // so that a scan takes a while
      ASSERT_TRUE(S->putBytes("bulk " + std::to_string(I) + std::string(20000, 'b')));
  }
  rawPut("cas", Rotten.toString(), "rotten artifacT"); // the disk rots

  auto S = open(capped(0));
  std::atomic<bool> WritersDone{false};
  std::vector<ScrubReport> Reports;
  std::thread Scrubber([&] {
    do
      Reports.push_back(S->scrub());
    while (!WritersDone);
  });
  constexpr int Threads = 4, PerThread = 150;
  std::atomic<int> Failures{0};
  std::vector<std::vector<std::pair<Digest, std::string>>> Blobs(Threads);
  std::vector<std::vector<std::pair<std::string, std::string>>> Entries(Threads);
  std::vector<std::thread> Ts;
  for (int T = 0; T < Threads; ++T)
    Ts.emplace_back([&, T] {
      std::mt19937 Rng(T);
      for (int I = 0; I < PerThread; ++I) {
        // 0 to 70 KB: inline and blob-file values.
        std::string Bytes = "w" + std::to_string(T) + "/" + std::to_string(I) + ":" +
                            std::string(Rng() % 70000, char('a' + Rng() % 26));
        auto D = S->putBytes(Bytes);
        if (!D) {
          ++Failures;
          continue;
        }
        Blobs[T].push_back({*D, Bytes});
        std::string K = key("t" + std::to_string(T) + "-" + std::to_string(I));
        std::string V = refsValue({*D, Good});
        if (!S->actionCache().put(K, V).isOk())
          ++Failures;
        Entries[T].push_back({K, V});
        // A re-upload and a read of an earlier blob, beside the scrub.
        const auto &[OldD, OldBytes] = Blobs[T][Rng() % Blobs[T].size()];
        if (!S->put(OldD, OldBytes).isOk() || !S->get(OldD))
          ++Failures;
      }
    });
  for (auto &T : Ts)
    T.join();
  WritersDone = true;
  Scrubber.join();

  EXPECT_EQ(Failures, 0);
  ASSERT_GE(Reports.size(), 1u);
  RecordProperty("scrubs", int(Reports.size()));
  // The first scrub started before any write: it found the rotten blob.
  EXPECT_EQ(Reports[0].corrupt_blobs, 1u) << Reports[0].toString();
  EXPECT_EQ(Reports[0].entries_missing_blobs, 1u) << Reports[0].toString();
  for (const ScrubReport &R : Reports) {
    EXPECT_TRUE(R.status.isOk()) << R.status.toString();
    EXPECT_EQ(R.corrupt_entries, 0u) << R.toString();
    EXPECT_EQ(R.index_repairs, 0u) << R.toString();
    EXPECT_GE(R.blobs_checked, uint64_t(Bulk)) << R.toString();
  }
  for (size_t I = 1; I < Reports.size(); ++I)
    EXPECT_TRUE(Reports[I].clean()) << "scrub " << I << ": " << Reports[I].toString();

  EXPECT_FALSE(S->contains(Rotten));
  EXPECT_TRUE(S->actionCache().get(key("rotten")).isNotFound());
  EXPECT_EQ(*S->actionCache().get(key("good")), refsValue({Good}));
  for (int T = 0; T < Threads; ++T) {
    for (const auto &[D, Bytes] : Blobs[T]) {
      auto Got = S->get(D);
      ASSERT_TRUE(Got) << D.toString() << ": " << Got.status().toString();
      EXPECT_EQ(*Got, Bytes);
    }
    for (const auto &[K, V] : Entries[T]) {
      auto Got = S->actionCache().get(K);
      ASSERT_TRUE(Got) << K << ": " << Got.status().toString();
      EXPECT_EQ(*Got, V);
    }
  }
  StoreStats Running = S->stats();
  EXPECT_EQ(Running.blob_count, uint64_t(Bulk + 1 + Threads * PerThread));
  EXPECT_EQ(Running.action_entries, uint64_t(1 + Threads * PerThread));
  EXPECT_EQ(S->corruptBlobsFound(), 1u);
  EXPECT_TRUE(S->scrub().clean());
  S.reset();
  auto Recount = capped(0);
  Recount.recount_stats_on_open = true;
  S = open(Recount);
  EXPECT_EQ(S->stats().blob_count, Running.blob_count);
  EXPECT_EQ(S->stats().total_bytes, Running.total_bytes);
  EXPECT_EQ(S->stats().action_entries, Running.action_entries);
  EXPECT_EQ(S->stats().action_bytes, Running.action_bytes);
}

// A scrub re-creates its iterators every few thousand keys (so as not to
// pin one RocksDB version for its whole run): every key is still visited
// exactly once.
TEST_F(EvictionTest, ScrubVisitsEveryKeyAcrossIteratorRefreshes) {
  auto S = open(capped(0));
  constexpr int N = 9000; // past two refreshes (one per 4096 keys)
  uint64_t Bytes = 0;
  for (int I = 0; I < N; ++I) {
    std::string B = "blob " + std::to_string(I);
    Bytes += B.size();
    ASSERT_TRUE(S->putBytes(B));
  }
  for (int I = 0; I < N; I += 1000)
    ASSERT_TRUE(S->actionCache().put(key("e" + std::to_string(I)), refsValue({})).isOk());
  ScrubReport R = S->scrub();
  EXPECT_TRUE(R.clean()) << R.toString();
  EXPECT_EQ(R.blobs_checked, uint64_t(N));
  EXPECT_EQ(R.bytes_checked, Bytes);
  EXPECT_EQ(R.entries_checked, uint64_t(N / 1000));
  EXPECT_EQ(R.index_repairs, 0u);
}

// A scrub stops when asked (ScrubOptions::cancel), reporting what it
// checked, and still drops the entries of a blob it dropped.
TEST_F(EvictionTest, CancelledScrubStopsAndKeepsEntriesConsistent) {
  Digest Rotten;
  {
    auto S = open(capped(0));
    Rotten = *S->putBytes("rotten artifact");
    ASSERT_TRUE(S->actionCache().put(key("rotten"), refsValue({Rotten})).isOk());
    for (int I = 0; I < 50; ++I)
      ASSERT_TRUE(S->putBytes("bulk " + std::to_string(I)));
  }
  rawPut("cas", Rotten.toString(), "rotten artifacT");
  std::atomic<bool> Cancel{false};
  auto O = capped(0);
  // The scrub warns when it finds the rotten blob: cancel it right there.
  O.warning_handler = [&](std::string_view M) {
    Warnings.emplace_back(M);
    if (M.rfind("scrub: corrupt blob", 0) == 0)
      Cancel = true;
  };
  auto S = open(O);
  ScrubOptions Opts;
  Opts.cancel = &Cancel;
  ScrubReport R = S->scrub(Opts);
  EXPECT_EQ(R.status.code(), Status::Code::Cancelled) << R.toString();
  EXPECT_FALSE(R.clean());
  EXPECT_EQ(R.corrupt_blobs, 1u);
  EXPECT_EQ(R.entries_checked, 0u); // stopped before the entries
  EXPECT_LT(R.blobs_checked, 52u);
  EXPECT_FALSE(S->contains(Rotten));
  EXPECT_TRUE(S->actionCache().get(key("rotten")).isNotFound());
  EXPECT_EQ(S->stats().action_entries, 0u);
  EXPECT_TRUE(S->scrub().clean());
}

} // namespace
