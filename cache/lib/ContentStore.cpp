//===- ContentStore.cpp - RocksDB content-addressed store -----------------===//

#include "msl/cache/ContentStore.h"
#include "msl/cache/ActionCache.h"

#include "DbState.h"

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <unordered_set>

namespace msl::cache {
namespace detail {

std::string encodeI64(int64_t V) {
  std::string Out(8, '\0');
  auto U = static_cast<uint64_t>(V);
  for (int I = 0; I < 8; ++I)
    Out[I] = static_cast<char>((U >> (8 * I)) & 0xff);
  return Out;
}

int64_t decodeI64(std::string_view S) {
  if (S.size() != 8)
    return 0;
  uint64_t U = 0;
  for (int I = 0; I < 8; ++I)
    U |= uint64_t(static_cast<unsigned char>(S[I])) << (8 * I);
  return static_cast<int64_t>(U);
}

void DbState::warn(std::string_view Msg) const {
  if (Opts.warning_handler)
    Opts.warning_handler(Msg);
  else
    std::fprintf(stderr, "msl-cache: %.*s\n", int(Msg.size()), Msg.data());
}

rocksdb::Status DbState::writeWithCounters(rocksdb::WriteBatch &B,
                                           int64_t DCount, int64_t DBytes,
                                           const rocksdb::WriteOptions *O) {
  std::lock_guard<std::mutex> Lock(CountersMu);
  int64_t Count = int64_t(BlobCount.load()) + DCount;
  int64_t Bytes = int64_t(TotalBytes.load()) + DBytes;
  B.Put(Meta, kBlobCountKey, encodeI64(Count < 0 ? 0 : Count));
  B.Put(Meta, kTotalBytesKey, encodeI64(Bytes < 0 ? 0 : Bytes));
  rocksdb::Status S = Db->Write(O ? *O : WriteOpts, &B);
  if (S.ok()) {
    BlobCount.store(uint64_t(Count < 0 ? 0 : Count));
    TotalBytes.store(uint64_t(Bytes < 0 ? 0 : Bytes));
  }
  return S;
}

DbState::~DbState() {
  stopEvictor();
  if (!Db)
    return;
  for (auto *H : {Meta, Cas, Ac, Lru})
    if (H)
      Db->DestroyColumnFamilyHandle(H);
  Db->Close();
}

} // namespace detail

namespace {

using detail::DbState;

// "<64 hex>/<decimal size>": readable in `ldb scan`, and the size can be
// recovered from the key alone (used by recount_stats_on_open).
std::string casKey(const Digest &D) { return D.toString(); }

Status fromRocks(const rocksdb::Status &S, std::string_view What) {
  return Status::ioError(std::string(What) + ": " + S.ToString());
}

Status checkDigest(const Digest &D) {
  if (!isValidHash(D.hash))
    return Status::invalidArgument("malformed digest hash '" + D.hash +
                                   "' (want 64 lowercase hex chars)");
  if (D.size_bytes < 0)
    return Status::invalidArgument("negative digest size " +
                                   std::to_string(D.size_bytes));
  return Status::ok();
}

rocksdb::CompressionType pickCompression(bool Want) {
  if (!Want)
    return rocksdb::kNoCompression;
  auto Supported = rocksdb::GetSupportedCompressions();
  bool HasLz4 = std::find(Supported.begin(), Supported.end(),
                          rocksdb::kLZ4Compression) != Supported.end();
  return HasLz4 ? rocksdb::kLZ4Compression : rocksdb::kNoCompression;
}

Status readCounter(DbState &S, std::string_view Key, uint64_t &Out) {
  std::string V;
  auto RS = S.Db->Get(rocksdb::ReadOptions(), S.Meta, Key, &V);
  if (RS.IsNotFound()) {
    Out = 0;
    return Status::ok();
  }
  if (!RS.ok())
    return fromRocks(RS, "reading " + std::string(Key));
  int64_t N = detail::decodeI64(V);
  Out = N < 0 ? 0 : static_cast<uint64_t>(N);
  return Status::ok();
}

std::string blobIndexKey(const std::string &CasKey) {
  return std::string(1, detail::kBlobTag) + CasKey;
}

// "<64 hex>/<decimal size>" back to a digest; false if malformed.
bool parseCasKey(std::string_view K, Digest &D) {
  auto Slash = K.find('/');
  if (Slash != kHashHexLength)
    return false;
  D.hash = std::string(K.substr(0, Slash));
  std::string_view Size = K.substr(Slash + 1);
  int64_t N = -1;
  auto [Ptr, Ec] = std::from_chars(Size.data(), Size.data() + Size.size(), N);
  if (Ec != std::errc() || Ptr != Size.data() + Size.size() || Size.empty())
    return false;
  D.size_bytes = N;
  return D.isValid() && D.toString() == K;
}

} // namespace

Result<std::unique_ptr<ContentStore>>
ContentStore::open(const StoreOptions &Opts) {
  if (Opts.path.empty())
    return Status::invalidArgument("StoreOptions::path is empty");

  auto S = std::make_unique<DbState>();
  S->Opts = Opts;
  S->WriteOpts.sync = Opts.sync_writes;

  S->TouchOpts.sync = false;

  rocksdb::DBOptions DbOpts;
  DbOpts.create_if_missing = Opts.create_if_missing;
  // Also for an existing store of an older build, which lacks "lru".
  DbOpts.create_missing_column_families = true;

  rocksdb::BlockBasedTableOptions Table;
  if (Opts.block_cache_bytes > 0)
    Table.block_cache = rocksdb::NewLRUCache(Opts.block_cache_bytes);
  else
    Table.no_block_cache = true;
  // Bloom filters make lookups of absent keys (findMissing, AC misses) skip
  // SST reads; most lookups in a cache are misses at first.
  Table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  auto TableFactory = std::shared_ptr<rocksdb::TableFactory>(
      rocksdb::NewBlockBasedTableFactory(Table));
  auto Compression = pickCompression(Opts.compress);

  rocksdb::ColumnFamilyOptions MetaOpts;

  rocksdb::ColumnFamilyOptions CasOpts;
  CasOpts.table_factory = TableFactory;
  CasOpts.compression = Compression;
  if (Opts.large_blob_threshold_bytes > 0) {
    CasOpts.enable_blob_files = true;
    CasOpts.min_blob_size = Opts.large_blob_threshold_bytes;
    CasOpts.blob_compression_type = Compression;
    // Reclaim blob-file space of deleted (corrupt) blobs during compaction.
    CasOpts.enable_blob_garbage_collection = true;
  }

  rocksdb::ColumnFamilyOptions AcOpts;
  AcOpts.table_factory = TableFactory;
  AcOpts.compression = Compression;

  // Small records (a stamp; entries add their references), read at open.
  rocksdb::ColumnFamilyOptions LruOpts;
  LruOpts.table_factory = TableFactory;
  LruOpts.compression = Compression;

  std::vector<rocksdb::ColumnFamilyDescriptor> Cfs = {
      {rocksdb::kDefaultColumnFamilyName, MetaOpts},
      {"cas", CasOpts},
      {"ac", AcOpts},
      {"lru", LruOpts}};
  std::vector<rocksdb::ColumnFamilyHandle *> Handles;
  rocksdb::DB *Raw = nullptr;
  auto RS = rocksdb::DB::Open(DbOpts, Opts.path, Cfs, &Handles, &Raw);
  if (!RS.ok())
    return fromRocks(RS, "opening store at '" + Opts.path + "'");
  S->Db.reset(Raw);
  S->Meta = Handles[0];
  S->Cas = Handles[1];
  S->Ac = Handles[2];
  S->Lru = Handles[3];

  // The format marker lets a future layout change refuse (or migrate) old
  // stores instead of misreading them.
  std::string Format;
  RS = S->Db->Get(rocksdb::ReadOptions(), S->Meta, detail::kFormatKey, &Format);
  bool Fresh = RS.IsNotFound();
  if (!RS.ok() && !Fresh)
    return fromRocks(RS, "reading format version");
  if (Fresh) {
    rocksdb::WriteBatch B;
    B.Put(S->Meta, detail::kFormatKey, detail::kFormatVersion);
    B.Put(S->Meta, detail::kIndexKey, detail::kIndexVersion);
    RS = S->Db->Write(S->WriteOpts, &B);
    if (!RS.ok())
      return fromRocks(RS, "writing format version");
  } else if (Format != detail::kFormatVersion) {
    return Status::ioError("store at '" + Opts.path + "' has format version '" +
                           Format + "', this build reads version '" +
                           std::string(detail::kFormatVersion) + "'");
  }

  uint64_t Count = 0, Bytes = 0;
  if (Status St = readCounter(*S, detail::kBlobCountKey, Count); !St.isOk())
    return St;
  if (Status St = readCounter(*S, detail::kTotalBytesKey, Bytes); !St.isOk())
    return St;
  S->BlobCount = Count;
  S->TotalBytes = Bytes;

  // The recency index: loaded from "lru", or rebuilt by one scan of the
  // data (which also recounts the counters) when a store of an older build
  // has none or a recount was asked for.
  std::string IndexVersion;
  RS = S->Db->Get(rocksdb::ReadOptions(), S->Meta, detail::kIndexKey,
                  &IndexVersion);
  if (!RS.ok() && !RS.IsNotFound())
    return fromRocks(RS, "reading the index version");
  Status St = Opts.recount_stats_on_open || IndexVersion != detail::kIndexVersion
                  ? S->rebuildIndex()
                  : S->loadIndex();
  if (!St.isOk())
    return St;

  std::unique_ptr<ContentStore> Store(new ContentStore(std::move(S)));
  // A store reopened with a smaller max_bytes shrinks now, before any put;
  // from here on the evictor thread keeps it under the bound.
  Store->State->evictToTarget();
  Store->State->startEvictor();
  return Store;
}

ContentStore::ContentStore(std::unique_ptr<detail::DbState> St)
    : State(std::move(St)), AC(new ActionCache(*State)) {
  State->CorruptEntries = &AC->CorruptFound;
}

// The evictor uses State and must be joined first; AC references State, so
// it goes before it too (members die in reverse order, which already does
// that; spelled out for clarity).
ContentStore::~ContentStore() {
  State->stopEvictor();
  AC.reset();
}

bool ContentStore::waitForEviction(uint64_t TimeoutMs) const {
  return State->waitForEviction(TimeoutMs);
}

ActionCache &ContentStore::actionCache() { return *AC; }

Status ContentStore::put(const Digest &D, std::string_view Bytes) {
  if (Status St = checkDigest(D); !St.isOk())
    return St;
  if (State->Opts.max_blob_bytes && Bytes.size() > State->Opts.max_blob_bytes)
    return Status::tooLarge("blob of " + std::to_string(Bytes.size()) +
                            " bytes exceeds max_blob_bytes " +
                            std::to_string(State->Opts.max_blob_bytes));
  // Hash outside the lock: it is the expensive part.
  Digest Actual = Digest::of(Bytes);
  if (Actual != D)
    return Status::invalidArgument("digest mismatch: expected " +
                                   D.toString() + ", actual " +
                                   Actual.toString());

  if (State->Opts.max_bytes && Bytes.size() > State->Opts.max_bytes)
    return Status::tooLarge("blob of " + std::to_string(Bytes.size()) +
                            " bytes exceeds max_bytes " +
                            std::to_string(State->Opts.max_bytes));

  std::string Key = casKey(D);
  std::string IndexKey = blobIndexKey(Key);
  {
    std::lock_guard<std::mutex> Lock(State->stripeFor(Key));
    rocksdb::PinnableSlice Existing;
    auto RS = State->Db->Get(rocksdb::ReadOptions(), State->Cas, Key, &Existing);
    bool IsNew = RS.IsNotFound();
    if (RS.ok() && Existing.ToStringView() == Bytes) {
      // Already stored and intact: a use (which also cancels an eviction
      // that picked it and has not deleted it yet).
      std::string Record;
      bool Indexed;
      {
        std::lock_guard<std::mutex> L(State->IndexMu);
        Indexed = State->restampHeldLocked(IndexKey, &Record);
      }
      if (!Indexed) {
        // Written behind the library's back (so not counted either): adopt
        // it, as scrub() does.
        detail::IndexItem Item;
        {
          std::lock_guard<std::mutex> L(State->IndexMu);
          Item.Stamp = State->nextStampLocked();
        }
        rocksdb::WriteBatch B;
        B.Put(State->Lru, IndexKey, detail::encodeIndexRecord(Item, false));
        if (State->writeWithCounters(B, 1, D.size_bytes).ok())
          State->indexBlobWritten(IndexKey, uint64_t(D.size_bytes), Item.Stamp);
      } else if (!Record.empty()) {
        State->Db->Put(State->TouchOpts, State->Lru, IndexKey, Record);
      }
      return Status::ok();
    }
    // A present-but-different or unreadable copy is damaged: overwrite it
    // (a repair, so the counters do not change).
    if (!RS.ok() && !IsNew && !RS.IsCorruption())
      return fromRocks(RS, "reading blob " + Key);
    if (!IsNew)
      State->warn("repairing damaged blob " + Key + " on put");

    // The blob, its index record and the new counter values go in one
    // WriteBatch, so a crash can never leave them out of step.
    detail::IndexItem Item;
    {
      std::lock_guard<std::mutex> L(State->IndexMu);
      Item.Stamp = State->nextStampLocked();
    }
    rocksdb::WriteBatch B;
    B.Put(State->Cas, Key, rocksdb::Slice(Bytes.data(), Bytes.size()));
    B.Put(State->Lru, IndexKey, detail::encodeIndexRecord(Item, false));
    RS = IsNew ? State->writeWithCounters(B, 1, D.size_bytes)
               : State->Db->Write(State->WriteOpts, &B);
    if (!RS.ok())
      return fromRocks(RS, "writing blob " + Key);
    State->indexBlobWritten(IndexKey, uint64_t(D.size_bytes), Item.Stamp);
  }
  State->afterWrite();
  return Status::ok();
}

Result<Digest> ContentStore::putBytes(std::string_view Bytes) {
  Digest D = Digest::of(Bytes);
  if (Status St = put(D, Bytes); !St.isOk())
    return St;
  return D;
}

bool ContentStore::contains(const Digest &D) const {
  if (!checkDigest(D).isOk())
    return false;
  rocksdb::PinnableSlice V;
  std::string Key = casKey(D);
  if (!State->Db->Get(rocksdb::ReadOptions(), State->Cas, Key, &V).ok())
    return false;
  State->touch(blobIndexKey(Key));
  return true;
}

std::vector<Digest>
ContentStore::findMissing(const std::vector<Digest> &Digests) const {
  std::vector<Digest> Missing;
  std::vector<size_t> Index; // positions of well-formed digests
  std::vector<std::string> Keys;
  for (size_t I = 0; I < Digests.size(); ++I) {
    if (checkDigest(Digests[I]).isOk()) {
      Index.push_back(I);
      Keys.push_back(casKey(Digests[I]));
    }
  }
  std::vector<rocksdb::Slice> KeySlices(Keys.begin(), Keys.end());
  std::vector<rocksdb::PinnableSlice> Values(Keys.size());
  std::vector<rocksdb::Status> Statuses(Keys.size());
  if (!Keys.empty())
    State->Db->MultiGet(rocksdb::ReadOptions(), State->Cas, Keys.size(),
                        KeySlices.data(), Values.data(), Statuses.data());
  size_t J = 0;
  std::vector<std::string> Used; // presence checks count as uses (REAPI)
  for (size_t I = 0; I < Digests.size(); ++I) {
    bool Matches = J < Index.size() && Index[J] == I;
    bool Present = Matches && Statuses[J].ok();
    if (Present)
      Used.push_back(blobIndexKey(Keys[J]));
    if (Matches)
      ++J;
    if (!Present)
      Missing.push_back(Digests[I]);
  }
  if (!Used.empty())
    State->touchMany(Used);
  return Missing;
}

Result<std::string> ContentStore::get(const Digest &D) {
  if (Status St = checkDigest(D); !St.isOk())
    return St;
  std::string Key = casKey(D);
  rocksdb::PinnableSlice V;
  auto RS = State->Db->Get(rocksdb::ReadOptions(), State->Cas, Key, &V);
  if (RS.IsNotFound())
    return Status::notFound("blob " + Key + " not found");

  std::string Problem;
  if (RS.IsCorruption()) {
    Problem = "RocksDB reports corruption: " + RS.ToString();
  } else if (!RS.ok()) {
    return fromRocks(RS, "reading blob " + Key);
  } else {
    Digest Actual = Digest::of(V.ToStringView());
    if (Actual == D) {
      State->touch(blobIndexKey(Key));
      return std::string(V.ToStringView());
    }
    Problem = "stored bytes hash to " + Actual.toString();
  }

  // Corrupt: never hand it out. Delete it so the next put stores a good copy
  // and contains()/findMissing() report it missing meanwhile.
  State->CorruptBlobs.fetch_add(1, std::memory_order_relaxed);
  State->warn("corrupt blob " + Key + " (" + Problem + "); deleting it");
  if (dropCorruptBlob(Key, &D))
    State->dropEntriesReferencing({blobIndexKey(Key)});
  return Status::notFound("blob " + Key + " was corrupt and has been removed");
}

bool ContentStore::dropCorruptBlob(const std::string &Key, const Digest *D) {
  std::lock_guard<std::mutex> Lock(State->stripeFor(Key));
  // Re-check under the lock: a concurrent put may have repaired it.
  rocksdb::PinnableSlice Again;
  auto RS2 = State->Db->Get(rocksdb::ReadOptions(), State->Cas, Key, &Again);
  bool StillBad = RS2.IsCorruption() ||
                  (RS2.ok() && (!D || Digest::of(Again.ToStringView()) != *D));
  if (!StillBad)
    return false;
  std::string IndexKey = blobIndexKey(Key);
  bool Counted;
  {
    std::lock_guard<std::mutex> L(State->IndexMu);
    Counted = State->Index.count(IndexKey) > 0;
  }
  rocksdb::WriteBatch B;
  B.Delete(State->Cas, Key);
  B.Delete(State->Lru, IndexKey);
  // A malformed key (no digest) was never counted by this library.
  auto WS = D && Counted ? State->writeWithCounters(B, -1, -D->size_bytes)
                         : State->Db->Write(State->WriteOpts, &B);
  if (!WS.ok()) {
    State->warn("failed to delete corrupt blob " + Key + ": " + WS.ToString());
    return false;
  }
  State->indexRemoved(IndexKey);
  return true;
}

StoreStats ContentStore::stats() const {
  StoreStats St;
  St.blob_count = blobCount();
  St.total_bytes = totalBytes();
  St.corrupt_blobs_found = corruptBlobsFound();
  St.action_entries = State->EntryCount.load();
  St.action_bytes = State->EntryBytes.load();
  St.cache_bytes = St.total_bytes + St.action_bytes;
  St.evicted_blobs = State->EvictedBlobs.load();
  St.evicted_blob_bytes = State->EvictedBlobBytes.load();
  St.evicted_entries = State->EvictedEntries.load();
  St.evicted_entry_bytes = State->EvictedEntryBytes.load();
  St.action_puts_dropped = State->ActionPutsDropped.load();
  return St;
}
uint64_t ContentStore::cacheBytes() const { return State->cacheBytes(); }
uint64_t ContentStore::blobCount() const {
  return State->BlobCount.load(std::memory_order_relaxed);
}
uint64_t ContentStore::totalBytes() const {
  return State->TotalBytes.load(std::memory_order_relaxed);
}
uint64_t ContentStore::corruptBlobsFound() const {
  return State->CorruptBlobs.load(std::memory_order_relaxed);
}

} // namespace msl::cache

namespace msl::cache {

std::string ScrubReport::toString() const {
  std::string Out = "blobs_checked=" + std::to_string(blobs_checked) +
                    " bytes_checked=" + std::to_string(bytes_checked) +
                    " corrupt_blobs=" + std::to_string(corrupt_blobs) +
                    " entries_checked=" + std::to_string(entries_checked) +
                    " corrupt_entries=" + std::to_string(corrupt_entries) +
                    " entries_missing_blobs=" +
                    std::to_string(entries_missing_blobs) +
                    " index_repairs=" + std::to_string(index_repairs);
  if (!status.isOk())
    Out += " incomplete=\"" + status.toString() + "\"";
  return Out;
}

namespace {

// A scan of one column family for scrub(): its iterator is re-created every
// few thousand keys or tens of MiB, resuming after the last key, so that a
// scrub of a large live store does not pin one RocksDB version (memtables,
// and SST and blob files that compaction has replaced) for its whole run.
class Scan {
public:
  Scan(rocksdb::DB &Db, rocksdb::ColumnFamilyHandle *Cf, const rocksdb::ReadOptions &RO)
      : Db(Db), Cf(Cf), RO(RO), It(Db.NewIterator(RO, Cf)) {
    It->SeekToFirst();
  }
  bool valid() const { return It->Valid(); }
  rocksdb::Slice key() const { return It->key(); }
  rocksdb::Slice value() const { return It->value(); }
  rocksdb::Status status() const { return It->status(); }
  void next() {
    Bytes += It->value().size();
    if (++Keys < kKeysPerIterator && Bytes < kBytesPerIterator) {
      It->Next();
      return;
    }
    std::string Last = It->key().ToString();
    Keys = Bytes = 0;
    It.reset(Db.NewIterator(RO, Cf));
    It->Seek(Last);
    if (It->Valid() && It->key() == rocksdb::Slice(Last))
      It->Next();
  }

private:
  static constexpr uint64_t kKeysPerIterator = 4096;
  static constexpr uint64_t kBytesPerIterator = 64ull << 20;
  rocksdb::DB &Db;
  rocksdb::ColumnFamilyHandle *Cf;
  rocksdb::ReadOptions RO;
  std::unique_ptr<rocksdb::Iterator> It;
  uint64_t Keys = 0, Bytes = 0;
};

} // namespace

// Safe beside other calls: nothing is deleted or adopted on the scan's word
// alone. Each delete re-reads the item under its key's stripe lock (where
// the index and the database agree for that key, see DbState.h) and
// happens only if it is still bad or still missing; each adoption re-reads
// what is there now. No lock is held across the scan, only per item, and
// IndexMu for the passes over the in-memory index.
ScrubReport ContentStore::scrub(const ScrubOptions &Opts) {
  DbState &S = *State;
  std::lock_guard<std::mutex> One(S.ScrubMu);
  ScrubReport R;
  const bool Drop = Opts.drop_corrupt;
  rocksdb::ReadOptions RO;
  RO.fill_cache = Opts.fill_cache;
  bool Stopped = false;
  auto ShouldStop = [&](const char *Where) {
    if (!Stopped && Opts.cancel && Opts.cancel->load(std::memory_order_relaxed)) {
      Stopped = true;
      R.status = Status::cancelled(std::string("the scrub was cancelled ") + Where);
    }
    return Stopped;
  };
  {
    std::lock_guard<std::mutex> L(S.IndexMu);
    for (auto &[K, I] : S.Index)
      I.Seen = false;
  }
  auto MarkSeen = [&](const std::string &IndexKey) {
    std::lock_guard<std::mutex> L(S.IndexMu);
    auto It = S.Index.find(IndexKey);
    if (It == S.Index.end())
      return false;
    It->second.Seen = true;
    return true;
  };
  std::vector<std::string> Corrupt; // of corrupt blobs (also when not dropped)

  auto CheckBlob = [&](const std::string &Key, std::string_view Value,
                       const rocksdb::Status &ReadStatus) {
    ++R.blobs_checked;
    R.bytes_checked += Value.size();
    Digest D;
    bool KeyOk = parseCasKey(Key, D);
    if (ReadStatus.ok() && KeyOk && Digest::of(Value) == D)
      return true;
    ++R.corrupt_blobs;
    S.CorruptBlobs.fetch_add(1, std::memory_order_relaxed);
    S.warn("scrub: corrupt blob " + Key + " (" +
           (!ReadStatus.ok() ? ReadStatus.ToString()
            : !KeyOk         ? std::string("malformed key")
                             : "stored bytes hash to " + Digest::of(Value).toString()) +
           ")" + (Drop ? "; deleting it" : ""));
    Corrupt.push_back(blobIndexKey(Key));
    MarkSeen(blobIndexKey(Key)); // counted once, dropped or not
    // The entries referencing it go at once, as get() does: on a live store
    // a hit must not name an artifact that is gone for the rest of the scan.
    if (Drop && dropCorruptBlob(Key, KeyOk ? &D : nullptr))
      R.entries_missing_blobs += S.dropEntriesReferencing({blobIndexKey(Key)});
    return false;
  };

  // 1. Every blob, re-hashed. Blobs the index lacks (written behind the
  //    library's back) are adopted, counted and made evictable.
  {
    Scan It(*S.Db, S.Cas, RO);
    for (; It.valid() && !ShouldStop("while reading the blobs"); It.next()) {
      std::string Key = It.key().ToString();
      if (!CheckBlob(Key, It.value().ToStringView(), rocksdb::Status::OK()))
        continue;
      std::string IndexKey = blobIndexKey(Key);
      if (MarkSeen(IndexKey) || !Drop)
        continue;
      std::lock_guard<std::mutex> Lock(S.stripeFor(Key));
      {
        std::lock_guard<std::mutex> L(S.IndexMu);
        if (S.Index.count(IndexKey))
          continue; // put meanwhile
      }
      rocksdb::PinnableSlice Now;
      if (!S.Db->Get(rocksdb::ReadOptions(), S.Cas, Key, &Now).ok())
        continue; // evicted or dropped since the scan read it
      Digest D;
      parseCasKey(Key, D);
      detail::IndexItem Item;
      {
        std::lock_guard<std::mutex> L(S.IndexMu);
        Item.Stamp = S.nextStampLocked();
      }
      rocksdb::WriteBatch B;
      B.Put(S.Lru, IndexKey, detail::encodeIndexRecord(Item, false));
      if (S.writeWithCounters(B, 1, D.size_bytes).ok()) {
        S.indexBlobWritten(IndexKey, uint64_t(D.size_bytes), Item.Stamp);
        MarkSeen(IndexKey);
        ++R.index_repairs;
      }
    }
    if (!Stopped && !It.status().ok())
      R.status = Status::ioError("the scan of cas stopped: " +
                                 It.status().ToString());
  }

  // 2. Indexed blobs the scan did not visit: put during the scan (behind
  //    its cursor), behind a read error, or gone from the database. Each is
  //    read on its own.
  std::vector<std::string> Unseen;
  if (!Stopped) {
    std::lock_guard<std::mutex> L(S.IndexMu);
    for (const auto &[K, I] : S.Index)
      if (K[0] == detail::kBlobTag && !I.Seen && !I.Evicting)
        Unseen.push_back(K);
  }
  for (const std::string &IndexKey : Unseen) {
    if (ShouldStop("while reading the blobs written during the scan"))
      break;
    std::string Key = IndexKey.substr(1);
    rocksdb::PinnableSlice V;
    auto RS = S.Db->Get(RO, S.Cas, Key, &V);
    if (RS.ok() || RS.IsCorruption()) {
      CheckBlob(Key, V.ToStringView(), RS);
      continue;
    }
    if (!RS.IsNotFound() || !Drop)
      continue;
    std::lock_guard<std::mutex> Lock(S.stripeFor(Key));
    {
      std::lock_guard<std::mutex> L(S.IndexMu);
      auto It = S.Index.find(IndexKey);
      if (It == S.Index.end() || It->second.Evicting)
        continue;
    }
    if (!S.Db->Get(rocksdb::ReadOptions(), S.Cas, Key, &V).IsNotFound())
      continue;
    // Indexed and counted, but deleted behind the library's back.
    Digest D;
    parseCasKey(Key, D);
    rocksdb::WriteBatch B;
    B.Delete(S.Lru, IndexKey);
    if (S.writeWithCounters(B, -1, -D.size_bytes).ok()) {
      S.indexRemoved(IndexKey);
      ++R.index_repairs;
    }
  }

  // 3. Every action entry, checksummed; entries the index lacks adopted.
  auto DropEntryIfStillBad = [&](const std::string &Key) {
    return S.deleteEntry(Key, [&](const detail::IndexItem *) {
      rocksdb::PinnableSlice Again;
      auto RS = S.Db->Get(rocksdb::ReadOptions(), S.Ac, Key, &Again);
      std::string_view P;
      return RS.IsCorruption() ||
             (RS.ok() && !detail::unwrapActionValue(Again.ToStringView(), P));
    });
  };
  if (!Stopped) {
    Scan It(*S.Db, S.Ac, RO);
    for (; It.valid() && !ShouldStop("while reading the action entries"); It.next()) {
      ++R.entries_checked;
      std::string Key = It.key().ToString();
      std::string IndexKey = std::string(1, detail::kEntryTag) + Key;
      std::string_view Payload;
      if (!isValidHash(Key) ||
          !detail::unwrapActionValue(It.value().ToStringView(), Payload)) {
        ++R.corrupt_entries;
        AC->CorruptFound.fetch_add(1, std::memory_order_relaxed);
        MarkSeen(IndexKey);
        S.warn("scrub: corrupt action entry " + Key +
               (Drop ? "; deleting it" : ""));
        if (Drop)
          DropEntryIfStillBad(Key);
        continue;
      }
      if (MarkSeen(IndexKey) || !Drop)
        continue;
      std::lock_guard<std::mutex> Lock(S.stripeFor(Key));
      {
        std::lock_guard<std::mutex> L(S.IndexMu);
        if (S.Index.count(IndexKey))
          continue; // put meanwhile
      }
      // What is there now, not the scan's copy: it may have been evicted
      // (adopting it would index an entry that does not exist) or replaced.
      rocksdb::PinnableSlice Now;
      std::string_view NowPayload;
      if (!S.Db->Get(rocksdb::ReadOptions(), S.Ac, Key, &Now).ok() ||
          !detail::unwrapActionValue(Now.ToStringView(), NowPayload))
        continue;
      detail::IndexItem Item;
      Item.Size = Now.size();
      Item.RefKeys = S.referencesOf(NowPayload);
      bool AllThere = true;
      {
        // As in ActionCache::put: the references are counted before the
        // write, so eviction cannot pick one of them after this check.
        std::lock_guard<std::mutex> L(S.IndexMu);
        for (const std::string &Ref : Item.RefKeys) {
          auto Blob = S.Index.find(Ref);
          AllThere = AllThere && Blob != S.Index.end() && !Blob->second.Evicting;
        }
        if (AllThere) {
          S.incRefsLocked(Item.RefKeys);
          Item.Stamp = S.nextStampLocked();
          Item.PersistedStamp = Item.Stamp;
        }
      }
      rocksdb::WriteBatch B;
      if (AllThere)
        B.Put(S.Lru, IndexKey, detail::encodeIndexRecord(Item, true));
      else
        B.Delete(S.Ac, Key); // it could only be a miss
      bool Written = S.Db->Write(S.WriteOpts, &B).ok();
      std::lock_guard<std::mutex> L(S.IndexMu);
      if (!Written) {
        if (AllThere)
          S.decRefsLocked(Item.RefKeys);
        continue;
      }
      ++R.index_repairs;
      if (AllThere) {
        Item.Seen = true;
        S.indexEntryWrittenLocked(IndexKey, std::move(Item));
      } else {
        ++R.entries_missing_blobs;
      }
    }
    if (!Stopped && !It.status().ok() && R.status.isOk())
      R.status = Status::ioError("the scan of ac stopped: " +
                                 It.status().ToString());
  }
  // Indexed entries the scan did not visit and that are gone.
  Unseen.clear();
  if (!Stopped) {
    std::lock_guard<std::mutex> L(S.IndexMu);
    for (const auto &[K, I] : S.Index)
      if (K[0] == detail::kEntryTag && !I.Seen && !I.Evicting)
        Unseen.push_back(K.substr(1));
  }
  for (const std::string &Key : Unseen) {
    if (ShouldStop("while reading the entries written during the scan"))
      break;
    rocksdb::PinnableSlice V;
    auto RS = S.Db->Get(RO, S.Ac, Key, &V);
    std::string_view P;
    if (RS.ok() && detail::unwrapActionValue(V.ToStringView(), P))
      continue;
    if (RS.ok() || RS.IsCorruption()) {
      ++R.entries_checked;
      ++R.corrupt_entries;
      AC->CorruptFound.fetch_add(1, std::memory_order_relaxed);
      if (Drop)
        DropEntryIfStillBad(Key);
    } else if (RS.IsNotFound() && Drop) {
      if (S.deleteEntry(Key, [&](const detail::IndexItem *I) {
            rocksdb::PinnableSlice Again;
            return I && !I->Evicting &&
                   S.Db->Get(rocksdb::ReadOptions(), S.Ac, Key, &Again)
                       .IsNotFound();
          }))
        ++R.index_repairs;
    }
  }

  // 4. Entries referencing a blob that was dropped or is missing (also
  //    after a cancel: an entry must not outlive its blobs).
  if (Drop) {
    // Dropped blobs have left the index: one pass finds them all.
    R.entries_missing_blobs += S.dropEntriesReferencing({});
  } else if (!Corrupt.empty()) {
    std::unordered_set<std::string> Set(Corrupt.begin(), Corrupt.end());
    std::lock_guard<std::mutex> L(S.IndexMu);
    for (const auto &[K, I] : S.Index)
      if (K[0] == detail::kEntryTag)
        for (const std::string &Ref : I.RefKeys)
          if (Set.count(Ref)) {
            ++R.entries_missing_blobs;
            break;
          }
  }
  return R;
}

} // namespace msl::cache
