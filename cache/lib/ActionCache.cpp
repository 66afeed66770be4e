//===- ActionCache.cpp - Checksummed action cache on the "ac" family ------===//

#include "msl/cache/ActionCache.h"
#include "msl/cache/Digest.h"

#include "DbState.h"

#include <cstring>

namespace msl::cache {

namespace {
// Value layout: 1 format byte, 32-byte raw SHA-256 of the payload, payload.
constexpr char kValueFormat = 1;
constexpr size_t kHeaderSize = 1 + 32;

std::string checksum(std::string_view Payload) {
  auto Raw = Sha256().update(Payload).finishRaw();
  return std::string(reinterpret_cast<const char *>(Raw.data()), Raw.size());
}

// Returns the payload if \p Stored is well-formed and its checksum matches.
bool unwrap(std::string_view Stored, std::string_view &Payload) {
  if (Stored.size() < kHeaderSize || Stored[0] != kValueFormat)
    return false;
  Payload = Stored.substr(kHeaderSize);
  return checksum(Payload) == Stored.substr(1, 32);
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
  // Locked so get()'s compare-then-delete of a corrupt entry cannot remove
  // a fresh value written in between.
  std::lock_guard<std::mutex> Lock(State.stripeFor(Key));
  auto RS = State.Db->Put(State.WriteOpts, State.Ac,
                          rocksdb::Slice(Key.data(), Key.size()), Stored);
  if (!RS.ok())
    return Status::ioError("writing action " + std::string(Key) + ": " +
                           RS.ToString());
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
  if (RS.ok() && unwrap(V.ToStringView(), Payload))
    return std::string(Payload);

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
      auto WS = State.Db->Delete(State.WriteOpts, State.Ac, K);
      if (!WS.ok())
        State.warn("failed to delete corrupt action " + std::string(Key) +
                   ": " + WS.ToString());
    }
  }
  return Status::notFound("action " + std::string(Key) +
                          " was corrupt and has been removed");
}

} // namespace msl::cache
