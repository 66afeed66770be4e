#include "CubinCache.h"

#include "DigestProto.h"

#include "msl/cache/ActionCache.h"
#include "msl/cache/Digest.h"
#include "msl/v1/digest.pb.h"

namespace msl::service {

std::string cubinCacheKey(const CubinKey &key) {
  cache::Sha256 hash;
  auto field = [&](const std::string &value) {
    hash.update(std::to_string(value.size()) + ":");
    hash.update(value);
  };
  field(kCubinKeyVersion);
  field(key.ptxDigest);
  field(key.sm);
  field(key.driverBuild);
  field(std::to_string(key.cudaVersion));
  field(key.jitOptions);
  return hash.finish();
}

std::string findCubin(cache::ContentStore &store, const std::string &key) {
  auto entry = store.actionCache().get(key);
  if (!entry)
    return "";
  msl::v1::Digest digest;
  if (!digest.ParseFromString(*entry) || !isValidDigest(digest))
    return "";
  auto blob = store.get(fromProto(digest));
  return blob ? blob.take() : "";
}

bool keepCubin(cache::ContentStore &store, const std::string &key, const std::string &cubin) {
  auto digest = store.putBytes(cubin);
  if (!digest)
    return false;
  msl::v1::Digest proto;
  toProto(*digest, proto);
  return store.actionCache().put(key, proto.SerializeAsString()).isOk();
}

} // namespace msl::service
