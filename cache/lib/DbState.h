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
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace msl::cache::detail {

// Keys of the bookkeeping entries in the default column family.
inline constexpr std::string_view kFormatKey = "meta/format_version";
inline constexpr std::string_view kFormatVersion = "1";
inline constexpr std::string_view kBlobCountKey = "meta/cas_blob_count";
inline constexpr std::string_view kTotalBytesKey = "meta/cas_total_bytes";

/// Counter values: 8-byte little-endian two's complement.
std::string encodeI64(int64_t V);
int64_t decodeI64(std::string_view S); // 0 unless exactly 8 bytes

struct DbState {
  StoreOptions Opts;
  std::unique_ptr<rocksdb::DB> Db;
  // Owned; destroyed before Db in ~DbState.
  rocksdb::ColumnFamilyHandle *Meta = nullptr; // "default"
  rocksdb::ColumnFamilyHandle *Cas = nullptr;
  rocksdb::ColumnFamilyHandle *Ac = nullptr;
  rocksdb::WriteOptions WriteOpts;

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
                                    int64_t DBytes);

  void warn(std::string_view Msg) const;

  ~DbState();
};

} // namespace msl::cache::detail

#endif // MSL_CACHE_LIB_DBSTATE_H
