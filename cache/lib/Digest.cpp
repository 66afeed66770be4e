//===- Digest.cpp - SHA-256 digests via OpenSSL EVP -----------------------===//

#include "msl/cache/Digest.h"
#include "msl/cache/Status.h"

#include <openssl/evp.h>

#include <cstdlib>
#include <cstdio>
#include <utility>

namespace msl::cache {

std::string Status::toString() const {
  const char *Name = "OK";
  switch (C) {
  case Code::Ok: return "OK";
  case Code::InvalidArgument: Name = "InvalidArgument"; break;
  case Code::NotFound: Name = "NotFound"; break;
  case Code::TooLarge: Name = "TooLarge"; break;
  case Code::IOError: Name = "IOError"; break;
  case Code::Cancelled: Name = "Cancelled"; break;
  }
  return std::string(Name) + ": " + Msg;
}

bool isValidHash(std::string_view Hash) {
  if (Hash.size() != kHashHexLength)
    return false;
  for (char C : Hash)
    if (!((C >= '0' && C <= '9') || (C >= 'a' && C <= 'f')))
      return false;
  return true;
}

std::string toHex(std::string_view Bytes) {
  static constexpr char Digits[] = "0123456789abcdef";
  std::string Out;
  Out.reserve(Bytes.size() * 2);
  for (unsigned char B : Bytes) {
    Out.push_back(Digits[B >> 4]);
    Out.push_back(Digits[B & 0xf]);
  }
  return Out;
}

Digest Digest::of(std::string_view Bytes) {
  Sha256 H;
  H.update(Bytes);
  return Digest{H.finish(), static_cast<int64_t>(Bytes.size())};
}

std::string Digest::toString() const {
  return hash + "/" + std::to_string(size_bytes);
}

// OpenSSL only fails here on allocation failure or a broken library; there
// is no sensible recovery, so abort loudly rather than return a wrong hash.
static void check(int Ok, const char *What) {
  if (Ok != 1) {
    std::fprintf(stderr, "msl-cache: OpenSSL %s failed\n", What);
    std::abort();
  }
}

static EVP_MD_CTX *ctx(void *P) { return static_cast<EVP_MD_CTX *>(P); }

Sha256::Sha256() : Ctx(EVP_MD_CTX_new()) {
  check(Ctx != nullptr, "EVP_MD_CTX_new");
  check(EVP_DigestInit_ex(ctx(Ctx), EVP_sha256(), nullptr), "DigestInit");
}

Sha256::~Sha256() { EVP_MD_CTX_free(ctx(Ctx)); }

Sha256::Sha256(Sha256 &&Other) noexcept
    : Ctx(std::exchange(Other.Ctx, nullptr)), Size(Other.Size) {}

Sha256 &Sha256::operator=(Sha256 &&Other) noexcept {
  if (this != &Other) {
    EVP_MD_CTX_free(ctx(Ctx));
    Ctx = std::exchange(Other.Ctx, nullptr);
    Size = Other.Size;
  }
  return *this;
}

Sha256 &Sha256::update(std::string_view Bytes) {
  check(EVP_DigestUpdate(ctx(Ctx), Bytes.data(), Bytes.size()),
        "DigestUpdate");
  Size += static_cast<int64_t>(Bytes.size());
  return *this;
}

std::array<unsigned char, 32> Sha256::finishRaw() {
  std::array<unsigned char, 32> Out{};
  unsigned int Len = 0;
  check(EVP_DigestFinal_ex(ctx(Ctx), Out.data(), &Len), "DigestFinal");
  check(Len == Out.size(), "DigestFinal length");
  check(EVP_DigestInit_ex(ctx(Ctx), EVP_sha256(), nullptr), "DigestInit");
  Size = 0;
  return Out;
}

std::string Sha256::finish() {
  auto Raw = finishRaw();
  return toHex(std::string_view(reinterpret_cast<const char *>(Raw.data()),
                                Raw.size()));
}

} // namespace msl::cache
