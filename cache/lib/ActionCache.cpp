//===- ActionCache.cpp - Checksummed action cache on the "ac" family ------===//

#include "msl/cache/ActionCache.h"
#include "msl/cache/Digest.h"

#include "DbState.h"

#include <cstring>

namespace msl::cache {

namespace detail {
// Returns the payload if \p Stored is well-formed and its checksum matches.
bool unwrapActionValue(std::string_view Stored, std::string_view &Payload) {
  if (Stored.size() < 1 + 32 || Stored[0] != 1)
    return false;
  Payload = Stored.substr(1 + 32);
  auto Raw = Sha256().update(Payload).finishRaw();
  return std::string_view(reinterpret_cast<const char *>(Raw.data()), 32) ==
         Stored.substr(1, 32);
}
} // namespace detail

namespace {
// Value layout: 1 format byte, 32-byte raw SHA-256 of the payload, payload.
constexpr char kValueFormat = 1;
constexpr size_t kHeaderSize = 1 + 32;

std::string checksum(std::string_view Payload) {
  auto Raw = Sha256().update(Payload).finishRaw();
  return std::string(reinterpret_cast<const char *>(Raw.data()), Raw.size());
}

bool unwrap(std::string_view Stored, std::string_view &Payload) {
  return detail::unwrapActionValue(Stored, Payload);
}

Status checkKey(std::string_view Key) {
  if (!isValidHash(Key))
    return Status::invalidArgument("malformed action key '" +
                                   std::string(Key) +
                                   "' (want 64 lowercase hex chars)");
  return Status::ok();
}
} // namespace

Status ActionCache::put(std::string_view Key, std::string_view Value) {
  if (Status St = checkKey(Key); !St.isOk())
    return St;
  if (State.Opts.max_blob_bytes && Value.size() > State.Opts.max_blob_bytes)
    return Status::tooLarge("action result of " + std::to_string(Value.size()) +
                            " bytes exceeds max_blob_bytes");
  std::string Stored;
  Stored.reserve(kHeaderSize + Value.size());
  Stored.push_back(kValueFormat);
  Stored += checksum(Value);
  Stored.append(Value);
  if (State.Opts.max_bytes && Stored.size() > State.Opts.max_bytes)
    return Status::tooLarge("action result of " + std::to_string(Value.size()) +
                            " bytes exceeds max_bytes " +
                            std::to_string(State.Opts.max_bytes));
  std::vector<std::string> Refs = State.referencesOf(Value);
  const std::string IndexKey = std::string(1, detail::kEntryTag) + std::string(Key);
  {
    // Locked so get()'s compare-then-delete of a corrupt entry cannot remove
    // a fresh value written in between, and so that eviction of this key
    // waits for (or is cancelled by) this put.
    std::lock_guard<std::mutex> Lock(State.stripeFor(Key));
    detail::IndexItem Item;
    Item.Size = Stored.size();
    Item.RefKeys = std::move(Refs);
    {
      // Every referenced blob must be there, and stays (its reference count
      // is taken now, before the write, so eviction cannot pick it after
      // this check). One that is missing, or already picked by eviction,
      // makes the entry a future miss: it is not stored at all.
      std::lock_guard<std::mutex> L(State.IndexMu);
      for (const std::string &R : Item.RefKeys) {
        auto It = State.Index.find(R);
        if (It == State.Index.end() || It->second.Evicting) {
          State.ActionPutsDropped.fetch_add(1, std::memory_order_relaxed);
          return Status::ok();
        }
      }
      State.incRefsLocked(Item.RefKeys);
      Item.Stamp = State.nextStampLocked();
      Item.PersistedStamp = Item.Stamp;
    }
    rocksdb::WriteBatch B;
    B.Put(State.Ac, rocksdb::Slice(Key.data(), Key.size()), Stored);
    B.Put(State.Lru, IndexKey, detail::encodeIndexRecord(Item, true));
    auto RS = State.Db->Write(State.WriteOpts, &B);
    std::lock_guard<std::mutex> L(State.IndexMu);
    if (!RS.ok()) {
      State.decRefsLocked(Item.RefKeys);
      return Status::ioError("writing action " + std::string(Key) + ": " +
                             RS.ToString());
    }
    State.indexEntryWrittenLocked(IndexKey, std::move(Item));
  }
  State.afterWrite();
  return Status::ok();
}

Result<std::string> ActionCache::get(std::string_view Key) {
  if (Status St = checkKey(Key); !St.isOk())
    return St;
  rocksdb::Slice K(Key.data(), Key.size());
  rocksdb::PinnableSlice V;
  auto RS = State.Db->Get(rocksdb::ReadOptions(), State.Ac, K, &V);
  if (RS.IsNotFound())
    return Status::notFound("action " + std::string(Key) + " not cached");
  if (!RS.ok() && !RS.IsCorruption())
    return Status::ioError("reading action " + std::string(Key) + ": " +
                           RS.ToString());
  std::string_view Payload;
  if (RS.ok() && unwrap(V.ToStringView(), Payload)) {
    State.touch(std::string(1, detail::kEntryTag) + std::string(Key));
    return std::string(Payload);
  }

  CorruptFound.fetch_add(1, std::memory_order_relaxed);
  State.warn("corrupt action cache entry " + std::string(Key) +
             (RS.ok() ? " (checksum mismatch)" : " (" + RS.ToString() + ")") +
             "; deleting it");
  {
    std::lock_guard<std::mutex> Lock(State.stripeFor(Key));
    rocksdb::PinnableSlice Again;
    auto RS2 = State.Db->Get(rocksdb::ReadOptions(), State.Ac, K, &Again);
    std::string_view Ignored;
    if (RS2.IsCorruption() || (RS2.ok() && !unwrap(Again.ToStringView(), Ignored))) {
      const std::string IndexKey =
          std::string(1, detail::kEntryTag) + std::string(Key);
      rocksdb::WriteBatch B;
      B.Delete(State.Ac, K);
      B.Delete(State.Lru, IndexKey);
      auto WS = State.Db->Write(State.WriteOpts, &B);
      if (!WS.ok())
        State.warn("failed to delete corrupt action " + std::string(Key) +
                   ": " + WS.ToString());
      else
        State.indexRemoved(IndexKey);
    }
  }
  return Status::notFound("action " + std::string(Key) +
                          " was corrupt and has been removed");
}

} // namespace msl::cache
