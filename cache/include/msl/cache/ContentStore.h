//===- msl/cache/ContentStore.h - RocksDB content-addressed store -*- C++ -*-=//
//
// One RocksDB database holds both the content-addressed blob store (column
// family "cas") and the action cache (column family "ac", see
// ActionCache.h). Every read is verified against the digest, so a corrupt
// blob is never handed out: it is logged, counted, deleted and reported as
// missing, which makes clients re-upload or the daemon recompile.
//
// With StoreOptions::max_bytes the store is a bounded LRU cache: a thread of
// its own (the evictor, woken by the put that crosses the bound) evicts the
// least recently used action entries and blobs (an entry always before the
// blobs it references); get(), contains(), findMissing(), put() of an
// existing blob and ActionCache::get() count as uses.
//
// All methods are thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef MSL_CACHE_CONTENTSTORE_H
#define MSL_CACHE_CONTENTSTORE_H

#include "msl/cache/Digest.h"
#include "msl/cache/Status.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace msl::cache {

class ActionCache;
namespace detail {
struct DbState;
}

struct StoreOptions {
  /// Data directory of the RocksDB database. Required.
  std::string path;

  /// Create the database (and its column families) if it does not exist.
  /// When false, opening a missing store fails with IOError.
  bool create_if_missing = true;

  /// fsync the WAL before a write returns (rocksdb::WriteOptions::sync), so
  /// an acknowledged put survives power loss and OS crashes. Off by default:
  /// every write still goes to the WAL before it returns, which survives a
  /// crash of the process (kill -9, OOM kill) but not of the machine, where
  /// the last writes may be lost (a re-upload or a recompile).
  bool sync_writes = false;

  /// Size of the shared LRU block cache, in bytes. Default 64 MiB.
  uint64_t block_cache_bytes = 64ull << 20;

  /// Blobs at least this large are kept in RocksDB blob files (key-value
  /// separation) instead of in the LSM tree, so compaction does not rewrite
  /// large metallibs over and over. 0 keeps every blob inline. Default 64 KiB.
  uint64_t large_blob_threshold_bytes = 64ull << 10;

  /// Largest blob or action-cache value accepted by put(); larger puts fail
  /// with Code::TooLarge. 0 means unlimited. Default 256 MiB.
  uint64_t max_blob_bytes = 256ull << 20;

  /// Compress SST and blob files with LZ4 (shader sources and IR compress
  /// well). Default true.
  bool compress = true;

  /// Rebuild the counters and the recency index by scanning "cas" and "ac"
  /// at open (every value is read; recency is lost: scan order stands in).
  /// Only needed after the database was modified outside this library
  /// (scrub() repairs that online too). A store written by an older build,
  /// without the index, gets the same rebuild once. Default false.
  bool recount_stats_on_open = false;

  /// Receives warnings such as detected corruption. Default (empty): print
  /// "msl-cache: <message>" to stderr.
  std::function<void(std::string_view)> warning_handler;

  /// Upper bound on the bytes the store keeps: the sizes of the blobs plus
  /// the stored sizes of the action-cache values (RocksDB's own overhead,
  /// keys, indexes and space not yet compacted, is not counted). When a put
  /// takes the total past it, that put wakes the evictor thread, which
  /// evicts least recently used items down to max_bytes *
  /// eviction_target_fraction; the put does not evict itself (see
  /// eviction_max_wait_ms), so the total may pass max_bytes for a moment.
  /// An action-cache entry is always evicted before the blobs it references
  /// (see action_references), so a hit never finds its artifacts gone. A
  /// single value larger than max_bytes is refused with Code::TooLarge.
  /// Opening a store above max_bytes evicts before open() returns.
  /// 0 (the default) keeps everything and starts no evictor.
  uint64_t max_bytes = 0;

  /// Eviction frees down to this fraction of max_bytes, so that the puts
  /// right after it do not each evict again. In (0, 1]; default 0.95.
  double eviction_target_fraction = 0.95;

  /// Backpressure: a put that leaves the total past max_bytes by more than
  /// an eighth of it (the evictor falls behind the writers) waits for the
  /// evictor's pass, at most this many milliseconds, so that writers slow
  /// to the evictor's pace rather than the store outgrowing its bound. A
  /// put never waits longer, and below that margin not at all. 0: never
  /// wait. Default 100.
  uint64_t eviction_max_wait_ms = 100;

  /// Tests only: called on the evictor thread before each eviction pass
  /// (a test holds the evictor by blocking in it).
  std::function<void()> before_eviction_pass;

  /// Recency ("last used") is exact in memory; its persisted copy, which
  /// orders eviction after a restart, is rewritten at most once per this
  /// many milliseconds per item, so a hot blob costs no write per read.
  /// 0 persists every use. Default 60000 (one minute).
  uint64_t access_time_persist_interval_ms = 60000;

  /// The blobs an action-cache value references, e.g. the artifact digests
  /// of a serialized compile result; called on every ActionCache::put (and
  /// on the values found when the index is rebuilt). A referenced blob is
  /// not evicted while the entry lives; an entry whose references are not
  /// all in the store is not stored (it could only ever be a miss); a scrub
  /// or get() that drops a corrupt blob drops the entries referencing it.
  /// Default (empty): values reference nothing.
  std::function<std::vector<Digest>(std::string_view Value)>
      action_references;
};

/// What ContentStore::scrub() does.
struct ScrubOptions {
  /// Delete what is corrupt (and action entries referencing dropped blobs).
  /// When false the scrub only counts. Default true.
  bool drop_corrupt = true;

  /// Let the scrub's reads fill the block cache. Default false: a scrub
  /// reads everything once and would only evict the hot blocks.
  bool fill_cache = false;

  /// When set and true, the scrub stops at the next item, reports what it
  /// checked (status Cancelled), and still drops the entries referencing
  /// blobs it dropped. Read by the scrub's thread; set from any thread.
  const std::atomic<bool> *cancel = nullptr;
};

struct ScrubReport {
  uint64_t blobs_checked = 0;         ///< "cas" values read and re-hashed.
  uint64_t bytes_checked = 0;         ///< Their bytes.
  uint64_t corrupt_blobs = 0;         ///< Bytes not matching their key's digest (or unreadable, or a malformed key).
  uint64_t entries_checked = 0;       ///< "ac" values read and checksummed.
  uint64_t corrupt_entries = 0;       ///< Failing their checksum (or unreadable).
  uint64_t entries_missing_blobs = 0; ///< Entries referencing blobs no longer present.
  uint64_t index_repairs = 0;         ///< Recency-index records added or dropped to match the data.
  /// OK when every key was visited; otherwise why not (e.g. RocksDB reported
  /// corruption in a file it cannot read past). What was found is counted.
  Status status;

  bool clean() const {
    return corrupt_blobs == 0 && corrupt_entries == 0 &&
           entries_missing_blobs == 0 && status.isOk();
  }
  /// One line: "blobs_checked=N bytes_checked=N corrupt_blobs=N ...".
  std::string toString() const;
};

struct StoreStats {
  uint64_t blob_count = 0;          ///< Distinct blobs in "cas".
  uint64_t total_bytes = 0;         ///< Sum of their sizes (logical bytes).
  uint64_t corrupt_blobs_found = 0; ///< Since open, by get() and scrub().
  uint64_t action_entries = 0;      ///< Entries in "ac".
  uint64_t action_bytes = 0;        ///< Sum of their stored value sizes.
  uint64_t cache_bytes = 0;         ///< total_bytes + action_bytes: what max_bytes bounds.
  uint64_t evicted_blobs = 0;       ///< Since open.
  uint64_t evicted_blob_bytes = 0;  ///< Since open.
  uint64_t evicted_entries = 0;     ///< Since open.
  uint64_t evicted_entry_bytes = 0; ///< Since open.
  /// Action puts not stored because a blob they reference was missing
  /// (evicted meanwhile, or never stored). Since open.
  uint64_t action_puts_dropped = 0;
};

class ContentStore {
public:
  /// Opens (or creates) the store at Opts.path.
  static Result<std::unique_ptr<ContentStore>> open(const StoreOptions &Opts);

  ~ContentStore();
  ContentStore(const ContentStore &) = delete;
  ContentStore &operator=(const ContentStore &) = delete;

  /// Stores \p Bytes under \p D. Fails with InvalidArgument if D is malformed
  /// or does not match the bytes ("digest mismatch: expected <hash>/<size>,
  /// actual <hash>/<size>"). Storing an existing blob is a cheap no-op (and
  /// repairs the stored copy if it was damaged).
  Status put(const Digest &D, std::string_view Bytes);

  /// Computes the digest of \p Bytes, stores them and returns the digest.
  Result<Digest> putBytes(std::string_view Bytes);

  /// Whether the blob is present. Does not verify content (get() does).
  /// Read errors count as "absent", the safe answer for a cache.
  bool contains(const Digest &D) const;

  /// The subset of \p Digests that are absent (or malformed), in input order.
  /// Like contains(), read errors count as absent.
  std::vector<Digest> findMissing(const std::vector<Digest> &Digests) const;

  /// The blob's bytes, verified against \p D. Returns NotFound if absent or
  /// if the stored bytes are corrupt (the corrupt copy is then deleted and
  /// counted in corruptBlobsFound()); InvalidArgument if D is malformed.
  Result<std::string> get(const Digest &D);

  /// The action cache living in the same database.
  ActionCache &actionCache();

  /// Reads every blob and action entry, re-hashes blobs against their
  /// digests and checks entries' checksums, drops what is corrupt (with
  /// ScrubOptions::drop_corrupt) and the entries referencing dropped or
  /// missing blobs, and makes the recency index match the data. Runs
  /// alongside other calls on a live store: it holds no lock across the
  /// scan (each item is re-checked under its key's lock before anything is
  /// deleted, so a good or freshly written item is never dropped), and
  /// costs one full read. Scrubs run one at a time (a second call waits).
  ScrubReport scrub(const ScrubOptions &Opts = {});

  /// Waits until the evictor has finished every pass requested so far (the
  /// store is then under max_bytes, unless writes continue). True when it
  /// got there within \p TimeoutMs. Writers never need it; tests and tools
  /// that read the size right after a put do.
  bool waitForEviction(uint64_t TimeoutMs) const;

  StoreStats stats() const;
  uint64_t blobCount() const;
  uint64_t totalBytes() const;
  /// blob bytes + action-cache bytes, the quantity max_bytes bounds.
  uint64_t cacheBytes() const;
  uint64_t corruptBlobsFound() const;

private:
  explicit ContentStore(std::unique_ptr<detail::DbState> State);
  /// Deletes blob \p Key if (re-checked under its lock) it still does not
  /// match \p D (null: a malformed key). True if it was deleted.
  bool dropCorruptBlob(const std::string &Key, const Digest *D);
  std::unique_ptr<detail::DbState> State;
  std::unique_ptr<ActionCache> AC;
};

} // namespace msl::cache

#endif // MSL_CACHE_CONTENTSTORE_H
