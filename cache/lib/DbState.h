//===- DbState.h - State shared by ContentStore and ActionCache -*- C++ -*-===//
//
// Private to the library: keeps RocksDB out of the public headers.
//
//===----------------------------------------------------------------------===//
#ifndef MSL_CACHE_LIB_DBSTATE_H
#define MSL_CACHE_LIB_DBSTATE_H

#include "msl/cache/ContentStore.h"

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

namespace msl::cache::detail {

// Keys of the bookkeeping entries in the default column family.
inline constexpr std::string_view kFormatKey = "meta/format_version";
inline constexpr std::string_view kFormatVersion = "1";
inline constexpr std::string_view kBlobCountKey = "meta/cas_blob_count";
inline constexpr std::string_view kTotalBytesKey = "meta/cas_total_bytes";
// Present (value kIndexVersion) once the "lru" family describes every blob
// and action entry; a store written by an older build lacks it and gets its
// index rebuilt by one scan at open.
inline constexpr std::string_view kIndexKey = "meta/lru_index_version";
inline constexpr std::string_view kIndexVersion = "1";

// Keys of the "lru" family (and of DbState::Index): the kind, then the key
// of the item in its own family.
inline constexpr char kBlobTag = 'c';  // 'c' + "<hash>/<size>"
inline constexpr char kEntryTag = 'a'; // 'a' + "<64 hex action key>"

/// Counter values: 8-byte little-endian two's complement.
std::string encodeI64(int64_t V);
int64_t decodeI64(std::string_view S); // 0 unless exactly 8 bytes

/// One blob or action entry of the recency index.
struct IndexItem {
  uint64_t Size = 0;           // blob size, or the entry's stored value size
  uint64_t Stamp = 0;          // last use: microseconds since the epoch, unique
  uint64_t PersistedStamp = 0; // the stamp its "lru" record holds
  uint32_t Refs = 0;           // blobs: live entries referencing it
  bool Evicting = false;       // picked by eviction, not deleted yet
  bool Seen = false;           // visited by the scrub under way
  std::vector<std::string> RefKeys; // entries: index keys of their blobs
};

/// "lru" record values: u64 stamp; entries add u64 size, u64 n, n x (u64
/// len, bytes) of the referenced blobs' "cas" keys.
std::string encodeIndexRecord(const IndexItem &Item, bool IsEntry);
/// Action values: 0x01, SHA-256 of the payload (32 raw bytes), payload.
/// True (and \p Payload set) when well-formed with a matching checksum.
bool unwrapActionValue(std::string_view Stored, std::string_view &Payload);
bool decodeIndexRecord(std::string_view V, bool IsEntry, IndexItem &Out);

struct DbState {
  StoreOptions Opts;
  std::unique_ptr<rocksdb::DB> Db;
  // Owned; destroyed before Db in ~DbState.
  rocksdb::ColumnFamilyHandle *Meta = nullptr; // "default"
  rocksdb::ColumnFamilyHandle *Cas = nullptr;
  rocksdb::ColumnFamilyHandle *Ac = nullptr;
  rocksdb::ColumnFamilyHandle *Lru = nullptr; // recency index records
  rocksdb::WriteOptions WriteOpts;

  // The recency index: every blob and action entry, its size, last use and
  // references, mirrored by the "lru" family (written in the same batch as
  // the item itself, so a crash cannot separate them; stamps are rewritten
  // at most once per access_time_persist_interval_ms). Loaded at open.
  // Under a key's stripe lock the index agrees with the database for that
  // key: items are added and removed only under it, after their write.
  std::mutex IndexMu; // taken after a stripe lock, never before one
  std::unordered_map<std::string, IndexItem> Index;
  // Candidates for eviction, oldest first: every entry, and the blobs no
  // entry references.
  std::map<uint64_t, std::string> Evictable;
  uint64_t LastStamp = 0;
  std::mutex EvictMu; // one evicting thread at a time (the evictor, or open)

  std::atomic<uint64_t> EntryCount{0};
  std::atomic<uint64_t> EntryBytes{0};
  std::atomic<uint64_t> EvictedBlobs{0}, EvictedBlobBytes{0};
  std::atomic<uint64_t> EvictedEntries{0}, EvictedEntryBytes{0};
  std::atomic<uint64_t> ActionPutsDropped{0};
  std::atomic<uint64_t> *CorruptEntries = nullptr; // the ActionCache's counter

  // In-memory mirrors of the persisted counters, so stats() is free.
  std::atomic<uint64_t> BlobCount{0};
  std::atomic<uint64_t> TotalBytes{0};
  std::atomic<uint64_t> CorruptBlobs{0};

  // Striped locks serialize "does it exist? then write/delete" per key, so
  // two racing puts of the same new blob count it once, and corruption
  // cleanup cannot delete a copy that was just repaired. Reads take no lock.
  std::array<std::mutex, 64> Stripes;
  std::mutex &stripeFor(std::string_view Key) {
    return Stripes[std::hash<std::string_view>{}(Key) % Stripes.size()];
  }

  // Serializes counter updates: counters are stored as absolute values
  // (not merge operands) so that any RocksDB tool can open the database
  // without a custom merge operator, which means each update must read the
  // current value and write the next one in order. Held only around the
  // Write of a batch that adds or removes a blob; always taken after a
  // stripe lock.
  std::mutex CountersMu;

  /// Adds the counter updates to \p B, writes it, then updates the
  /// in-memory mirrors. The caller holds the stripe lock of the blob.
  rocksdb::Status writeWithCounters(rocksdb::WriteBatch &B, int64_t DCount,
                                    int64_t DBytes,
                                    const rocksdb::WriteOptions *Opts = nullptr);

  void warn(std::string_view Msg) const;

  // --- Recency index and eviction (Index.cpp) -------------------------------
  /// A new unique stamp, now or later than every earlier one. IndexMu held.
  uint64_t nextStampLocked();
  /// Records uses of items (no-ops for keys not indexed), persisting a
  /// stamp when the last persisted one is older than the interval. Takes
  /// no lock on entry.
  void touch(const std::string &IndexKey);
  void touchMany(const std::vector<std::string> &IndexKeys);
  /// A use by a put: caller holds the key's stripe lock and IndexMu. Cancels
  /// a pending eviction of the item. False when the item is not indexed.
  /// Fills \p Record with the item's record when it is due to be persisted.
  bool restampHeldLocked(const std::string &IndexKey, std::string *Record);
  /// After a blob's write succeeded (caller holds its stripe lock).
  void indexBlobWritten(const std::string &IndexKey, uint64_t Size,
                        uint64_t Stamp);
  /// After an entry's write succeeded (caller holds its stripe lock and
  /// IndexMu, and has already counted Item's references).
  void indexEntryWrittenLocked(const std::string &IndexKey, IndexItem Item);
  /// After an item's delete succeeded (caller holds its stripe lock).
  void indexRemoved(const std::string &IndexKey);
  void incRefsLocked(const std::vector<std::string> &BlobIndexKeys);
  void decRefsLocked(const std::vector<std::string> &BlobIndexKeys);
  /// Evicts until cacheBytes() is at most the target, when past max_bytes.
  /// Call with no lock held. Run by the evictor thread, and by open().
  void evictToTarget();
  /// After a write: when past max_bytes, wakes the evictor (and, far past
  /// it, waits for its pass, at most eviction_max_wait_ms). Call with no
  /// lock held.
  void afterWrite();
  bool evictOne(const std::string &IndexKey);
  uint64_t cacheBytes() const { return TotalBytes.load() + EntryBytes.load(); }
  /// Deletes the action entries referencing any of \p BlobIndexKeys (blobs
  /// that were found corrupt or missing); with an empty list, those
  /// referencing any blob that is not indexed. Returns how many.
  uint64_t dropEntriesReferencing(const std::vector<std::string> &BlobIndexKeys);
  /// Deletes one action entry and its record, when \p Still (checked under
  /// the entry's stripe lock and IndexMu, given its item or null) agrees.
  bool deleteEntry(const std::string &AcKey,
                   const std::function<bool(const IndexItem *)> &Still);
  /// Builds Index from the "lru" family (load) or from the data (rebuild,
  /// for stores without an index, or for recount_stats_on_open).
  Status loadIndex();
  Status rebuildIndex();
  /// The references of an action payload (through Opts.action_references),
  /// as sorted, unique blob index keys.
  std::vector<std::string> referencesOf(std::string_view Payload) const;

  // Writes of recency stamps and evictions never sync: losing one on power
  // loss only ages an item or brings an evicted one back (with its counters:
  // the batch is whole or absent), and a later synced write syncs them too.
  rocksdb::WriteOptions TouchOpts;
  std::mutex ScrubMu; // one scrub at a time

  // --- The evictor thread (Index.cpp) ----------------------------------------
  // Writers do not evict: the put that takes the total past max_bytes asks
  // for a pass (EvictionsRequested) and returns; the evictor runs passes
  // until every request is covered (EvictionsDone). Started by open() when
  // max_bytes is set, stopped (and joined) by ~ContentStore.
  std::thread Evictor;
  mutable std::mutex EvictorMu; // guards the three fields below
  mutable std::condition_variable EvictorWake, EvictorIdle;
  uint64_t EvictionsRequested = 0;
  uint64_t EvictionsDone = 0;
  bool StopEvictor = false;
  std::atomic<bool> Stopping{false}; // read by a pass in progress
  void startEvictor();
  void stopEvictor();
  void evictorLoop();
  bool waitForEviction(uint64_t TimeoutMs) const;

  ~DbState();
};

} // namespace msl::cache::detail

#endif // MSL_CACHE_LIB_DBSTATE_H
