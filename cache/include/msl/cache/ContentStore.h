//===- msl/cache/ContentStore.h - RocksDB content-addressed store -*- C++ -*-=//
//
// One RocksDB database holds both the content-addressed blob store (column
// family "cas") and the action cache (column family "ac", see
// ActionCache.h). Every read is verified against the digest, so a corrupt
// blob is never handed out: it is logged, counted, deleted and reported as
// missing, which makes clients re-upload or the daemon recompile.
//
// All methods are thread-safe.
//
//===----------------------------------------------------------------------===//
#ifndef MSL_CACHE_CONTENTSTORE_H
#define MSL_CACHE_CONTENTSTORE_H

#include "msl/cache/Digest.h"
#include "msl/cache/Status.h"

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

  /// fsync the WAL on every write. Off by default: the WAL still makes writes
  /// survive a process crash, and after an OS crash losing the last few cache
  /// entries only costs a recompile.
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

  /// Recount blob_count/total_bytes by scanning the "cas" keys at open and
  /// rewrite the persisted counters. Only needed to repair counters after
  /// the database was modified outside this library; cost is one key scan.
  /// Default false.
  bool recount_stats_on_open = false;

  /// Receives warnings such as detected corruption. Default (empty): print
  /// "msl-cache: <message>" to stderr.
  std::function<void(std::string_view)> warning_handler;
};

struct StoreStats {
  uint64_t blob_count = 0;          ///< Distinct blobs in "cas".
  uint64_t total_bytes = 0;         ///< Sum of their sizes (logical bytes).
  uint64_t corrupt_blobs_found = 0; ///< Since open, by get().
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

  StoreStats stats() const;
  uint64_t blobCount() const;
  uint64_t totalBytes() const;
  uint64_t corruptBlobsFound() const;

private:
  explicit ContentStore(std::unique_ptr<detail::DbState> State);
  std::unique_ptr<detail::DbState> State;
  std::unique_ptr<ActionCache> AC;
};

} // namespace msl::cache

#endif // MSL_CACHE_CONTENTSTORE_H
