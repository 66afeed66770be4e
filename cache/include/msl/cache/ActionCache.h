//===- msl/cache/ActionCache.h - Action key -> result cache ------*- C++ -*-===//
//
// Maps an action key (see ActionKey.h) to an opaque, serialized result
// (typically a compile response listing output digests). Lives in the "ac"
// column family of the ContentStore's database; obtain it with
// ContentStore::actionCache(). Each stored value carries the SHA-256 of its
// payload, so a damaged entry is detected, counted, deleted and reported as
// a miss instead of being served.
//
// All methods are thread-safe. The object is owned by its ContentStore.
//
//===----------------------------------------------------------------------===//
#ifndef MSL_CACHE_ACTIONCACHE_H
#define MSL_CACHE_ACTIONCACHE_H

#include "msl/cache/Status.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>

namespace msl::cache {

class ContentStore;
namespace detail {
struct DbState;
}

class ActionCache {
public:
  ActionCache(const ActionCache &) = delete;
  ActionCache &operator=(const ActionCache &) = delete;

  /// Stores \p Value under \p ActionKeyHex (64 lowercase hex chars, as
  /// returned by ActionKeyBuilder::build()), replacing any previous value.
  /// InvalidArgument for a malformed key, TooLarge over max_blob_bytes.
  Status put(std::string_view ActionKeyHex, std::string_view Value);

  /// The stored value. NotFound if absent or corrupt (the corrupt entry is
  /// deleted and counted); InvalidArgument for a malformed key.
  Result<std::string> get(std::string_view ActionKeyHex);

  /// Entries found corrupt by get() since open.
  uint64_t corruptEntriesFound() const {
    return CorruptFound.load(std::memory_order_relaxed);
  }

private:
  friend class ContentStore;
  explicit ActionCache(detail::DbState &State) : State(State) {}
  detail::DbState &State;
  std::atomic<uint64_t> CorruptFound{0};
};

} // namespace msl::cache

#endif // MSL_CACHE_ACTIONCACHE_H
