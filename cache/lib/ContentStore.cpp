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
                                           int64_t DCount, int64_t DBytes) {
  std::lock_guard<std::mutex> Lock(CountersMu);
  int64_t Count = int64_t(BlobCount.load()) + DCount;
  int64_t Bytes = int64_t(TotalBytes.load()) + DBytes;
  B.Put(Meta, kBlobCountKey, encodeI64(Count < 0 ? 0 : Count));
  B.Put(Meta, kTotalBytesKey, encodeI64(Bytes < 0 ? 0 : Bytes));
  rocksdb::Status S = Db->Write(WriteOpts, &B);
  if (S.ok()) {
    BlobCount.store(uint64_t(Count < 0 ? 0 : Count));
    TotalBytes.store(uint64_t(Bytes < 0 ? 0 : Bytes));
  }
  return S;
}

DbState::~DbState() {
  if (!Db)
    return;
  for (auto *H : {Meta, Cas, Ac})
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

// Rebuilds the counters from the "cas" keys; sizes come from the keys, so
// blob values are not needed.
Status recount(DbState &S) {
  uint64_t Count = 0, Bytes = 0;
  std::unique_ptr<rocksdb::Iterator> It(
      S.Db->NewIterator(rocksdb::ReadOptions(), S.Cas));
  for (It->SeekToFirst(); It->Valid(); It->Next()) {
    std::string_view K = It->key().ToStringView();
    auto Slash = K.find('/');
    uint64_t Size = 0;
    if (Slash != std::string_view::npos)
      std::from_chars(K.data() + Slash + 1, K.data() + K.size(), Size);
    ++Count;
    Bytes += Size;
  }
  if (!It->status().ok())
    return fromRocks(It->status(), "scanning cas");
  rocksdb::WriteBatch B;
  B.Put(S.Meta, detail::kBlobCountKey, detail::encodeI64(int64_t(Count)));
  B.Put(S.Meta, detail::kTotalBytesKey, detail::encodeI64(int64_t(Bytes)));
  auto WS = S.Db->Write(S.WriteOpts, &B);
  return WS.ok() ? Status::ok() : fromRocks(WS, "writing counters");
}

} // namespace

Result<std::unique_ptr<ContentStore>>
ContentStore::open(const StoreOptions &Opts) {
  if (Opts.path.empty())
    return Status::invalidArgument("StoreOptions::path is empty");

  auto S = std::make_unique<DbState>();
  S->Opts = Opts;
  S->WriteOpts.sync = Opts.sync_writes;

  rocksdb::DBOptions DbOpts;
  DbOpts.create_if_missing = Opts.create_if_missing;
  DbOpts.create_missing_column_families = Opts.create_if_missing;

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

  std::vector<rocksdb::ColumnFamilyDescriptor> Cfs = {
      {rocksdb::kDefaultColumnFamilyName, MetaOpts},
      {"cas", CasOpts},
      {"ac", AcOpts}};
  std::vector<rocksdb::ColumnFamilyHandle *> Handles;
  rocksdb::DB *Raw = nullptr;
  auto RS = rocksdb::DB::Open(DbOpts, Opts.path, Cfs, &Handles, &Raw);
  if (!RS.ok())
    return fromRocks(RS, "opening store at '" + Opts.path + "'");
  S->Db.reset(Raw);
  S->Meta = Handles[0];
  S->Cas = Handles[1];
  S->Ac = Handles[2];

  // The format marker lets a future layout change refuse (or migrate) old
  // stores instead of misreading them.
  std::string Format;
  RS = S->Db->Get(rocksdb::ReadOptions(), S->Meta, detail::kFormatKey, &Format);
  bool Fresh = RS.IsNotFound();
  if (!RS.ok() && !Fresh)
    return fromRocks(RS, "reading format version");
  if (Fresh) {
    RS = S->Db->Put(S->WriteOpts, S->Meta, detail::kFormatKey,
                    detail::kFormatVersion);
    if (!RS.ok())
      return fromRocks(RS, "writing format version");
  } else if (Format != detail::kFormatVersion) {
    return Status::ioError("store at '" + Opts.path + "' has format version '" +
                           Format + "', this build reads version '" +
                           std::string(detail::kFormatVersion) + "'");
  }

  if (Opts.recount_stats_on_open) {
    if (Status St = recount(*S); !St.isOk())
      return St;
  }
  uint64_t Count = 0, Bytes = 0;
  if (Status St = readCounter(*S, detail::kBlobCountKey, Count); !St.isOk())
    return St;
  if (Status St = readCounter(*S, detail::kTotalBytesKey, Bytes); !St.isOk())
    return St;
  S->BlobCount = Count;
  S->TotalBytes = Bytes;

  return std::unique_ptr<ContentStore>(new ContentStore(std::move(S)));
}

ContentStore::ContentStore(std::unique_ptr<detail::DbState> St)
    : State(std::move(St)), AC(new ActionCache(*State)) {}

// AC references State, so it must go first (members die in reverse order,
// which already does that; spelled out for clarity).
ContentStore::~ContentStore() { AC.reset(); }

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

  std::string Key = casKey(D);
  std::lock_guard<std::mutex> Lock(State->stripeFor(Key));
  rocksdb::PinnableSlice Existing;
  auto RS = State->Db->Get(rocksdb::ReadOptions(), State->Cas, Key, &Existing);
  bool IsNew = RS.IsNotFound();
  if (RS.ok() && Existing.ToStringView() == Bytes)
    return Status::ok(); // Already stored and intact.
  // A present-but-different or unreadable copy is damaged: overwrite it
  // (a repair, so the counters do not change).
  if (!RS.ok() && !IsNew && !RS.IsCorruption())
    return fromRocks(RS, "reading blob " + Key);
  if (!IsNew)
    State->warn("repairing damaged blob " + Key + " on put");

  // The blob and the new counter values go in one WriteBatch, so a crash
  // can never leave the counters out of step with the blobs.
  rocksdb::WriteBatch B;
  B.Put(State->Cas, Key, rocksdb::Slice(Bytes.data(), Bytes.size()));
  RS = IsNew ? State->writeWithCounters(B, 1, D.size_bytes)
             : State->Db->Write(State->WriteOpts, &B);
  if (!RS.ok())
    return fromRocks(RS, "writing blob " + Key);
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
  return State->Db->Get(rocksdb::ReadOptions(), State->Cas, casKey(D), &V)
      .ok();
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
  for (size_t I = 0; I < Digests.size(); ++I) {
    bool Present = J < Index.size() && Index[J] == I && Statuses[J++].ok();
    if (!Present)
      Missing.push_back(Digests[I]);
  }
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
    if (Actual == D)
      return std::string(V.ToStringView());
    Problem = "stored bytes hash to " + Actual.toString();
  }

  // Corrupt: never hand it out. Delete it so the next put stores a good copy
  // and contains()/findMissing() report it missing meanwhile.
  State->CorruptBlobs.fetch_add(1, std::memory_order_relaxed);
  State->warn("corrupt blob " + Key + " (" + Problem + "); deleting it");
  {
    std::lock_guard<std::mutex> Lock(State->stripeFor(Key));
    // Re-check under the lock: a concurrent put may have repaired it.
    rocksdb::PinnableSlice Again;
    auto RS2 = State->Db->Get(rocksdb::ReadOptions(), State->Cas, Key, &Again);
    bool StillBad = RS2.IsCorruption() ||
                    (RS2.ok() && Digest::of(Again.ToStringView()) != D);
    if (StillBad) {
      rocksdb::WriteBatch B;
      B.Delete(State->Cas, Key);
      auto WS = State->writeWithCounters(B, -1, -D.size_bytes);
      if (!WS.ok()) {
        State->warn("failed to delete corrupt blob " + Key + ": " +
                    WS.ToString());
      }
    }
  }
  return Status::notFound("blob " + Key + " was corrupt and has been removed");
}

StoreStats ContentStore::stats() const {
  return {blobCount(), totalBytes(), corruptBlobsFound()};
}
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
