//===- DigestProto.h - msl.v1.Digest <-> cache::Digest --------------------===//
//
// The conversions and checks every service applies to a digest a request
// names (one place, so CAS, Compile and Execute judge digests alike).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/cache/Digest.h"
#include "msl/compiler/RequestChecks.h"
#include "msl/v1/digest.pb.h"

#include <string>

namespace msl::service {

inline cache::Digest fromProto(const msl::v1::Digest &d) { return {d.hash(), d.size_bytes()}; }

inline void toProto(const cache::Digest &d, msl::v1::Digest &out) {
  out.set_hash(d.hash);
  out.set_size_bytes(d.size_bytes);
}

/// "hash/size", the hash quoted safely (it is request data).
inline std::string describe(const msl::v1::Digest &d) {
  return compiler::quoteForMessage(d.hash()) + "/" + std::to_string(d.size_bytes());
}

/// 64 lowercase hex characters of SHA-256 and a non-negative size.
inline bool isValidDigest(const msl::v1::Digest &d) {
  return cache::isValidHash(d.hash()) && d.size_bytes() >= 0;
}

} // namespace msl::service
