//===- Index.cpp - Recency index, eviction and its persistence ------------===//
//
// Every blob and action entry has an IndexItem in DbState::Index and a record
// in the "lru" column family (key: tag + the item's key, see DbState.h). The
// record is written in the same WriteBatch as the item, so after any crash
// the two agree; recency stamps are rewritten lazily (at most once per
// access_time_persist_interval_ms per item), so after a restart the order is
// the one of the last persisted uses.
//
// Locks: a key's stripe lock, then IndexMu (never the other way round);
// CountersMu (writeWithCounters) nests inside a stripe lock too. EvictMu is
// taken with no other lock held, EvictorMu likewise (and never while
// evicting: writers take it to wake the evictor).
//
// Eviction runs on the evictor thread (evictorLoop), not on the writers'
// threads: a put that takes the total past max_bytes only wakes it.
//
//===----------------------------------------------------------------------===//

#include "DbState.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <unordered_set>

namespace msl::cache::detail {

namespace {

uint64_t nowUs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

void putU64(std::string &Out, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}

bool getU64(std::string_view &In, uint64_t &V) {
  if (In.size() < 8)
    return false;
  V = 0;
  for (int I = 0; I < 8; ++I)
    V |= uint64_t(static_cast<unsigned char>(In[I])) << (8 * I);
  In.remove_prefix(8);
  return true;
}

bool isEntryKey(const std::string &IndexKey) {
  return !IndexKey.empty() && IndexKey[0] == kEntryTag;
}

std::string_view rawKey(const std::string &IndexKey) {
  return std::string_view(IndexKey).substr(1);
}

/// Size of a blob from its "cas" key "<hash>/<size>" (0 if malformed).
uint64_t sizeFromCasKey(std::string_view K) {
  uint64_t Size = 0;
  auto Slash = K.find('/');
  if (Slash != std::string_view::npos)
    std::from_chars(K.data() + Slash + 1, K.data() + K.size(), Size);
  return Size;
}

} // namespace

std::string encodeIndexRecord(const IndexItem &Item, bool IsEntry) {
  std::string Out;
  putU64(Out, Item.Stamp);
  if (!IsEntry)
    return Out;
  putU64(Out, Item.Size);
  putU64(Out, Item.RefKeys.size());
  for (const std::string &R : Item.RefKeys) {
    std::string_view Cas = std::string_view(R).substr(1);
    putU64(Out, Cas.size());
    Out.append(Cas);
  }
  return Out;
}

bool decodeIndexRecord(std::string_view V, bool IsEntry, IndexItem &Out) {
  if (!getU64(V, Out.Stamp))
    return false;
  Out.PersistedStamp = Out.Stamp;
  if (!IsEntry)
    return V.empty();
  uint64_t N = 0;
  if (!getU64(V, Out.Size) || !getU64(V, N) || N > V.size())
    return false;
  Out.RefKeys.clear();
  for (uint64_t I = 0; I < N; ++I) {
    uint64_t Len = 0;
    if (!getU64(V, Len) || Len > V.size())
      return false;
    Out.RefKeys.push_back(std::string(1, kBlobTag) + std::string(V.substr(0, Len)));
    V.remove_prefix(Len);
  }
  return V.empty();
}

uint64_t DbState::nextStampLocked() {
  LastStamp = std::max(nowUs(), LastStamp + 1);
  return LastStamp;
}

std::vector<std::string> DbState::referencesOf(std::string_view Payload) const {
  std::vector<std::string> Out;
  if (!Opts.action_references)
    return Out;
  for (const Digest &D : Opts.action_references(Payload))
    if (D.isValid())
      Out.push_back(std::string(1, kBlobTag) + D.toString());
  std::sort(Out.begin(), Out.end());
  Out.erase(std::unique(Out.begin(), Out.end()), Out.end());
  return Out;
}

bool DbState::restampHeldLocked(const std::string &K, std::string *Record) {
  auto It = Index.find(K);
  if (It == Index.end())
    return false;
  IndexItem &I = It->second;
  bool Candidate = isEntryKey(K) || I.Refs == 0;
  if (Candidate && !I.Evicting)
    Evictable.erase(I.Stamp);
  // A put of the item while eviction had picked it cancels the eviction
  // (eviction re-checks the flag under the same stripe lock before it
  // deletes), so an acknowledged put is never undone by an eviction already
  // under way.
  I.Evicting = false;
  I.Stamp = nextStampLocked();
  if (Candidate)
    Evictable.emplace(I.Stamp, K);
  if (Record && I.Stamp - I.PersistedStamp >=
                    Opts.access_time_persist_interval_ms * 1000) {
    I.PersistedStamp = I.Stamp;
    *Record = encodeIndexRecord(I, isEntryKey(K));
  }
  return true;
}

void DbState::touchMany(const std::vector<std::string> &Keys) {
  const uint64_t IntervalUs = Opts.access_time_persist_interval_ms * 1000;
  std::vector<std::string> Persist;
  {
    std::lock_guard<std::mutex> L(IndexMu);
    for (const std::string &K : Keys) {
      auto It = Index.find(K);
      if (It == Index.end() || It->second.Evicting)
        continue;
      IndexItem &I = It->second;
      uint64_t Old = I.Stamp;
      I.Stamp = nextStampLocked();
      if (isEntryKey(K) || I.Refs == 0) {
        Evictable.erase(Old);
        Evictable.emplace(I.Stamp, K);
      }
      if (I.Stamp - I.PersistedStamp >= IntervalUs)
        Persist.push_back(K);
    }
  }
  // Rare (once per interval per item): rewrite the record under the key's
  // stripe lock, where the index agrees with the database, so a record is
  // never resurrected for an item deleted meanwhile.
  for (const std::string &K : Persist) {
    std::lock_guard<std::mutex> S(stripeFor(rawKey(K)));
    std::string Record;
    {
      std::lock_guard<std::mutex> L(IndexMu);
      auto It = Index.find(K);
      if (It == Index.end() || It->second.Evicting ||
          It->second.Stamp == It->second.PersistedStamp)
        continue;
      It->second.PersistedStamp = It->second.Stamp;
      Record = encodeIndexRecord(It->second, isEntryKey(K));
    }
    auto RS = Db->Put(TouchOpts, Lru, K, Record);
    if (!RS.ok())
      warn("failed to persist the last use of " + std::string(rawKey(K)) +
           ": " + RS.ToString());
  }
}

void DbState::touch(const std::string &K) { touchMany({K}); }

void DbState::indexBlobWritten(const std::string &K, uint64_t Size,
                               uint64_t Stamp) {
  std::lock_guard<std::mutex> L(IndexMu);
  auto [It, New] = Index.try_emplace(K);
  IndexItem &I = It->second;
  if (!New && !I.Evicting && I.Refs == 0)
    Evictable.erase(I.Stamp);
  I.Evicting = false;
  I.Size = Size;
  I.Stamp = Stamp;
  I.PersistedStamp = Stamp;
  if (I.Refs == 0)
    Evictable.emplace(Stamp, K);
}

void DbState::incRefsLocked(const std::vector<std::string> &Refs) {
  for (const std::string &R : Refs) {
    auto It = Index.find(R);
    if (It == Index.end())
      continue;
    if (It->second.Refs++ == 0 && !It->second.Evicting)
      Evictable.erase(It->second.Stamp);
  }
}

void DbState::decRefsLocked(const std::vector<std::string> &Refs) {
  for (const std::string &R : Refs) {
    auto It = Index.find(R);
    if (It == Index.end() || It->second.Refs == 0)
      continue;
    // The blob becomes a candidate with its own last use: usually old, so
    // the blobs of an evicted entry follow it soon unless used meanwhile.
    if (--It->second.Refs == 0 && !It->second.Evicting)
      Evictable.emplace(It->second.Stamp, R);
  }
}

void DbState::indexRemoved(const std::string &K) {
  std::lock_guard<std::mutex> L(IndexMu);
  auto It = Index.find(K);
  if (It == Index.end())
    return;
  IndexItem I = std::move(It->second);
  Index.erase(It);
  bool Entry = isEntryKey(K);
  if (!I.Evicting && (Entry || I.Refs == 0)) {
    auto E = Evictable.find(I.Stamp);
    if (E != Evictable.end() && E->second == K)
      Evictable.erase(E);
  }
  if (Entry) {
    EntryCount.fetch_sub(1);
    EntryBytes.fetch_sub(std::min<uint64_t>(I.Size, EntryBytes.load()));
    decRefsLocked(I.RefKeys);
  }
}

void DbState::indexEntryWrittenLocked(const std::string &K, IndexItem Item) {
  auto [It, New] = Index.try_emplace(K);
  if (!New) {
    IndexItem &Old = It->second;
    if (!Old.Evicting)
      Evictable.erase(Old.Stamp);
    EntryCount.fetch_sub(1);
    EntryBytes.fetch_sub(std::min<uint64_t>(Old.Size, EntryBytes.load()));
    decRefsLocked(Old.RefKeys);
  }
  It->second = std::move(Item);
  Evictable.emplace(It->second.Stamp, K);
  EntryCount.fetch_add(1);
  EntryBytes.fetch_add(It->second.Size);
}

bool DbState::evictOne(const std::string &K) {
  const bool Entry = isEntryKey(K);
  std::string Raw(rawKey(K));
  std::lock_guard<std::mutex> S(stripeFor(Raw));
  uint64_t Size = 0;
  {
    std::lock_guard<std::mutex> L(IndexMu);
    auto It = Index.find(K);
    if (It == Index.end() || !It->second.Evicting)
      return true; // used (put) meanwhile: the eviction was cancelled
    Size = It->second.Size;
  }
  rocksdb::WriteBatch B;
  B.Delete(Entry ? Ac : Cas, Raw);
  B.Delete(Lru, K);
  auto RS = Entry ? Db->Write(TouchOpts, &B)
                  : writeWithCounters(B, -1, -int64_t(Size), &TouchOpts);
  if (!RS.ok()) {
    warn("evicting " + Raw + " failed: " + RS.ToString());
    std::lock_guard<std::mutex> L(IndexMu);
    auto It = Index.find(K);
    if (It != Index.end() && It->second.Evicting) {
      It->second.Evicting = false;
      Evictable.emplace(It->second.Stamp, K);
    }
    return false;
  }
  indexRemoved(K);
  if (Entry) {
    EvictedEntries.fetch_add(1);
    EvictedEntryBytes.fetch_add(Size);
  } else {
    EvictedBlobs.fetch_add(1);
    EvictedBlobBytes.fetch_add(Size);
  }
  return true;
}

void DbState::evictToTarget() {
  if (Opts.max_bytes == 0 || cacheBytes() <= Opts.max_bytes)
    return;
  std::lock_guard<std::mutex> E(EvictMu);
  double F = Opts.eviction_target_fraction;
  if (!(F > 0.0) || F > 1.0)
    F = 1.0;
  const uint64_t Target = uint64_t(double(Opts.max_bytes) * F);
  int Failures = 0;
  while (cacheBytes() > Target && !Stopping.load(std::memory_order_relaxed)) {
    std::string K;
    {
      std::lock_guard<std::mutex> L(IndexMu);
      if (Evictable.empty())
        break;
      auto It = Evictable.begin();
      K = It->second;
      Evictable.erase(It);
      auto Item = Index.find(K);
      if (Item == Index.end())
        continue;
      Item->second.Evicting = true;
    }
    if (!evictOne(K) && ++Failures > 8)
      break; // the database refuses writes: stop instead of spinning
  }
}

void DbState::afterWrite() {
  if (Opts.max_bytes == 0 || cacheBytes() <= Opts.max_bytes)
    return;
  std::unique_lock<std::mutex> L(EvictorMu);
  if (!Evictor.joinable() || StopEvictor)
    return; // closing: the next open evicts
  const uint64_t Ticket = ++EvictionsRequested;
  EvictorWake.notify_one();
  // Far past the bound the evictor is falling behind the writers: this
  // writer waits for it, but never longer than the bound, so a held or
  // slow evictor delays puts by at most eviction_max_wait_ms each.
  const uint64_t Margin = Opts.max_bytes / 8;
  if (Opts.eviction_max_wait_ms == 0 || cacheBytes() <= Opts.max_bytes + Margin)
    return;
  EvictorIdle.wait_for(L, std::chrono::milliseconds(Opts.eviction_max_wait_ms), [&] {
    return StopEvictor || EvictionsDone >= Ticket || cacheBytes() <= Opts.max_bytes;
  });
}

void DbState::evictorLoop() {
  std::unique_lock<std::mutex> L(EvictorMu);
  for (;;) {
    EvictorWake.wait(L, [&] { return StopEvictor || EvictionsRequested > EvictionsDone; });
    if (StopEvictor)
      break;
    // Requests made during this pass get another one: the pass may have
    // looked at the total before their writes.
    const uint64_t Covered = EvictionsRequested;
    L.unlock();
    if (Opts.before_eviction_pass)
      Opts.before_eviction_pass();
    evictToTarget();
    L.lock();
    EvictionsDone = Covered;
    EvictorIdle.notify_all();
  }
  EvictorIdle.notify_all();
}

void DbState::startEvictor() {
  if (Opts.max_bytes == 0 || Evictor.joinable())
    return;
  Evictor = std::thread([this] { evictorLoop(); });
}

void DbState::stopEvictor() {
  {
    std::lock_guard<std::mutex> L(EvictorMu);
    StopEvictor = true;
  }
  Stopping = true; // a pass under way stops at its next item
  EvictorWake.notify_all();
  EvictorIdle.notify_all();
  if (Evictor.joinable())
    Evictor.join();
}

bool DbState::waitForEviction(uint64_t TimeoutMs) const {
  std::unique_lock<std::mutex> L(EvictorMu);
  return EvictorIdle.wait_for(L, std::chrono::milliseconds(TimeoutMs), [&] {
    return StopEvictor || EvictionsDone >= EvictionsRequested;
  });
}

bool DbState::deleteEntry(const std::string &AcKey,
                          const std::function<bool(const IndexItem *)> &Still) {
  const std::string K = std::string(1, kEntryTag) + AcKey;
  std::lock_guard<std::mutex> S(stripeFor(AcKey));
  if (Still) {
    std::lock_guard<std::mutex> L(IndexMu);
    auto It = Index.find(K);
    if (!Still(It == Index.end() ? nullptr : &It->second))
      return false;
  }
  rocksdb::WriteBatch B;
  B.Delete(Ac, AcKey);
  B.Delete(Lru, K);
  auto RS = Db->Write(WriteOpts, &B);
  if (!RS.ok()) {
    warn("failed to delete action " + AcKey + ": " + RS.ToString());
    return false;
  }
  indexRemoved(K);
  return true;
}

uint64_t
DbState::dropEntriesReferencing(const std::vector<std::string> &BlobKeys) {
  // With an empty list: every entry referencing a blob not in the index.
  std::unordered_set<std::string> Set(BlobKeys.begin(), BlobKeys.end());
  auto References = [&](const IndexItem &I) {
    for (const std::string &R : I.RefKeys)
      if (Set.empty() ? !Index.count(R) : Set.count(R) > 0)
        return true;
    return false;
  };
  std::vector<std::string> Victims;
  {
    std::lock_guard<std::mutex> L(IndexMu);
    for (const auto &[K, I] : Index)
      if (isEntryKey(K) && References(I))
        Victims.emplace_back(rawKey(K));
  }
  uint64_t Dropped = 0;
  for (const std::string &V : Victims) {
    // Re-checked under the entry's lock: a fresh put may have replaced it.
    if (deleteEntry(V, [&](const IndexItem *I) { return I && References(*I); })) {
      ++Dropped;
      warn("dropped action " + V + ": it references a blob that is gone");
    }
  }
  return Dropped;
}

Status DbState::loadIndex() {
  std::lock_guard<std::mutex> L(IndexMu);
  Index.clear();
  Evictable.clear();
  std::vector<std::string> BadRecords;
  {
    std::unique_ptr<rocksdb::Iterator> It(
        Db->NewIterator(rocksdb::ReadOptions(), Lru));
    for (It->SeekToFirst(); It->Valid(); It->Next()) {
      std::string K = It->key().ToString();
      IndexItem Item;
      bool Ok = !K.empty() && (K[0] == kBlobTag || K[0] == kEntryTag) &&
                decodeIndexRecord(It->value().ToStringView(), isEntryKey(K), Item);
      if (!Ok) {
        BadRecords.push_back(K);
        continue;
      }
      if (!isEntryKey(K))
        Item.Size = sizeFromCasKey(rawKey(K));
      Index.emplace(std::move(K), std::move(Item));
    }
    if (!It->status().ok())
      return Status::ioError("reading the recency index: " +
                             It->status().ToString());
  }
  // Unique stamps, in their persisted order.
  std::vector<std::pair<uint64_t, std::string>> Order;
  Order.reserve(Index.size());
  for (const auto &[K, I] : Index)
    Order.emplace_back(I.Stamp, K);
  std::sort(Order.begin(), Order.end());
  uint64_t Last = 0;
  for (auto &[Stamp, K] : Order) {
    IndexItem &I = Index[K];
    I.Stamp = std::max(Stamp, Last + 1);
    Last = I.Stamp;
  }
  LastStamp = std::max(LastStamp, Last);
  // References, and entries whose blobs are gone (a crash between dropping
  // a corrupt blob and its entries).
  std::vector<std::string> Dangling;
  uint64_t Count = 0, Bytes = 0;
  for (auto &[K, I] : Index) {
    if (!isEntryKey(K))
      continue;
    bool Ok = true;
    for (const std::string &R : I.RefKeys)
      Ok = Ok && Index.count(R) > 0;
    if (!Ok) {
      Dangling.emplace_back(rawKey(K));
      continue;
    }
    for (const std::string &R : I.RefKeys)
      ++Index[R].Refs;
    ++Count;
    Bytes += I.Size;
  }
  for (const std::string &D : Dangling)
    Index.erase(std::string(1, kEntryTag) + D);
  for (const auto &[K, I] : Index)
    if (isEntryKey(K) || I.Refs == 0)
      Evictable.emplace(I.Stamp, K);
  EntryCount = Count;
  EntryBytes = Bytes;

  rocksdb::WriteBatch B;
  for (const std::string &K : BadRecords)
    B.Delete(Lru, K);
  for (const std::string &D : Dangling) {
    B.Delete(Ac, D);
    B.Delete(Lru, std::string(1, kEntryTag) + D);
  }
  if (B.Count() > 0) {
    warn("recency index: dropped " + std::to_string(BadRecords.size()) +
         " malformed records and " + std::to_string(Dangling.size()) +
         " actions referencing missing blobs");
    auto RS = Db->Write(WriteOpts, &B);
    if (!RS.ok())
      return Status::ioError("repairing the recency index: " + RS.ToString());
  }
  return Status::ok();
}

Status DbState::rebuildIndex() {
  auto Fail = [](const rocksdb::Status &S, const char *What) {
    return Status::ioError(std::string(What) + ": " + S.ToString());
  };
  rocksdb::ReadOptions RO;
  RO.fill_cache = false;
  rocksdb::WriteBatch B;
  auto Flush = [&]() -> rocksdb::Status {
    if (B.Count() < 1024)
      return rocksdb::Status::OK();
    auto S = Db->Write(WriteOpts, &B);
    B.Clear();
    return S;
  };
  {
    std::unique_ptr<rocksdb::Iterator> It(Db->NewIterator(RO, Lru));
    for (It->SeekToFirst(); It->Valid(); It->Next()) {
      B.Delete(Lru, It->key());
      if (auto S = Flush(); !S.ok())
        return Fail(S, "clearing the recency index");
    }
    if (!It->status().ok())
      return Fail(It->status(), "scanning the recency index");
  }
  // No use is known: the scan order (key order) stands in for recency.
  uint64_t Stamp = nowUs();
  uint64_t Count = 0, Bytes = 0;
  {
    std::unique_ptr<rocksdb::Iterator> It(Db->NewIterator(RO, Cas));
    for (It->SeekToFirst(); It->Valid(); It->Next()) {
      IndexItem I;
      I.Stamp = Stamp++;
      B.Put(Lru, std::string(1, kBlobTag) + It->key().ToString(),
            encodeIndexRecord(I, false));
      ++Count;
      Bytes += sizeFromCasKey(It->key().ToStringView());
      if (auto S = Flush(); !S.ok())
        return Fail(S, "writing the recency index");
    }
    if (!It->status().ok())
      return Fail(It->status(), "scanning cas");
  }
  {
    std::unique_ptr<rocksdb::Iterator> It(Db->NewIterator(RO, Ac));
    for (It->SeekToFirst(); It->Valid(); It->Next()) {
      std::string_view Payload;
      if (!unwrapActionValue(It->value().ToStringView(), Payload)) {
        warn("dropping corrupt action entry " + It->key().ToString() +
             " while rebuilding the index");
        B.Delete(Ac, It->key());
        continue;
      }
      IndexItem I;
      I.Stamp = Stamp++;
      I.Size = It->value().size();
      I.RefKeys = referencesOf(Payload);
      B.Put(Lru, std::string(1, kEntryTag) + It->key().ToString(),
            encodeIndexRecord(I, true));
      if (auto S = Flush(); !S.ok())
        return Fail(S, "writing the recency index");
    }
    if (!It->status().ok())
      return Fail(It->status(), "scanning ac");
  }
  B.Put(Meta, kBlobCountKey, encodeI64(int64_t(Count)));
  B.Put(Meta, kTotalBytesKey, encodeI64(int64_t(Bytes)));
  B.Put(Meta, kIndexKey, kIndexVersion);
  if (auto S = Db->Write(WriteOpts, &B); !S.ok())
    return Fail(S, "writing the recency index");
  BlobCount = Count;
  TotalBytes = Bytes;
  return loadIndex();
}

} // namespace msl::cache::detail
