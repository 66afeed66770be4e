//===- msl/cache/Digest.h - Content digests ---------------------*- C++ -*-===//
//
// A content digest shaped like the Remote Execution API's Digest (and
// msl.v1.Digest): the lowercase hex SHA-256 of the bytes plus their length.
// The length is part of the identity so a store can size a read before
// fetching it and so that a hash collision would also need equal lengths.
//
//===----------------------------------------------------------------------===//
#ifndef MSL_CACHE_DIGEST_H
#define MSL_CACHE_DIGEST_H

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace msl::cache {

/// Length in characters of a lowercase hex SHA-256.
inline constexpr size_t kHashHexLength = 64;

/// True iff \p Hash is exactly 64 lowercase hex characters.
bool isValidHash(std::string_view Hash);

/// Lowercase hex of arbitrary bytes.
std::string toHex(std::string_view Bytes);

struct Digest {
  std::string hash;       ///< Lowercase hex SHA-256 of the content.
  int64_t size_bytes = 0; ///< Length of the content in bytes.

  /// Digest of \p Bytes.
  static Digest of(std::string_view Bytes);

  /// Well-formed: valid hash and non-negative size (does not look at content).
  bool isValid() const { return isValidHash(hash) && size_bytes >= 0; }

  /// "<hash>/<size>", as used in REAPI resource names and in logs.
  std::string toString() const;

  friend bool operator==(const Digest &, const Digest &) = default;
};

/// Incremental SHA-256 (OpenSSL EVP), for content that arrives in chunks,
/// e.g. a ByteStream upload.
class Sha256 {
public:
  Sha256();
  ~Sha256();
  Sha256(Sha256 &&Other) noexcept;
  Sha256 &operator=(Sha256 &&Other) noexcept;
  Sha256(const Sha256 &) = delete;
  Sha256 &operator=(const Sha256 &) = delete;

  Sha256 &update(std::string_view Bytes);
  /// Total bytes passed to update() so far.
  int64_t size() const { return Size; }
  /// Finishes and returns the lowercase hex hash. The hasher is reset and
  /// may be reused afterwards.
  std::string finish();
  /// As finish(), but the 32 raw bytes.
  std::array<unsigned char, 32> finishRaw();

private:
  void *Ctx = nullptr; // EVP_MD_CTX*, kept opaque to keep OpenSSL out of
                       // the public header.
  int64_t Size = 0;
};

} // namespace msl::cache

#endif // MSL_CACHE_DIGEST_H
