#include "msl/cache/Digest.h"

#include <gtest/gtest.h>

using namespace msl::cache;

namespace {

constexpr const char *kEmptySha =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr const char *kAbcSha =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(DigestTest, KnownVectors) {
  EXPECT_EQ(Digest::of(""), (Digest{kEmptySha, 0}));
  EXPECT_EQ(Digest::of("abc"), (Digest{kAbcSha, 3}));
  // FIPS 180-2 two-block vector.
  EXPECT_EQ(
      Digest::of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq").hash,
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(DigestTest, IncrementalMatchesOneShot) {
  Sha256 H;
  H.update("a").update("").update("bc");
  EXPECT_EQ(H.size(), 3);
  EXPECT_EQ(H.finish(), kAbcSha);
  // Reusable after finish().
  EXPECT_EQ(H.size(), 0);
  EXPECT_EQ(H.finish(), kEmptySha);

  std::string Big(1 << 20, 'x');
  Sha256 H2;
  for (size_t I = 0; I < Big.size(); I += 4096)
    H2.update(std::string_view(Big).substr(I, 4096));
  EXPECT_EQ(H2.finish(), Digest::of(Big).hash);
}

TEST(DigestTest, MoveKeepsState) {
  Sha256 H;
  H.update("ab");
  Sha256 Moved = std::move(H);
  Moved.update("c");
  EXPECT_EQ(Moved.finish(), kAbcSha);
}

TEST(DigestTest, IsValidHash) {
  EXPECT_TRUE(isValidHash(kEmptySha));
  EXPECT_FALSE(isValidHash(""));
  EXPECT_FALSE(isValidHash(std::string(63, 'a')));
  EXPECT_FALSE(isValidHash(std::string(65, 'a')));
  std::string Upper = kAbcSha;
  Upper[0] = 'B';
  EXPECT_FALSE(isValidHash(Upper));
  std::string NonHex = kAbcSha;
  NonHex[5] = 'g';
  EXPECT_FALSE(isValidHash(NonHex));
}

TEST(DigestTest, EqualityAndValidity) {
  Digest A = Digest::of("abc");
  EXPECT_EQ(A, (Digest{kAbcSha, 3}));
  EXPECT_NE(A, (Digest{kAbcSha, 4}));
  EXPECT_NE(A, Digest::of("abd"));
  EXPECT_TRUE(A.isValid());
  EXPECT_FALSE((Digest{kAbcSha, -1}).isValid());
  EXPECT_FALSE((Digest{"abc", 3}).isValid());
  EXPECT_EQ(A.toString(), std::string(kAbcSha) + "/3");
}

} // namespace
