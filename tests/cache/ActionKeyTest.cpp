#include "msl/cache/ActionKey.h"

#include <gtest/gtest.h>

#include <functional>
#include <set>

using namespace msl::cache;

namespace {

ActionKeyBuilder base() {
  ActionKeyBuilder B;
  B.setMainSource("shader.metal", Digest::of("kernel void k() {}"))
      .addFile("inc/a.h", Digest::of("a"))
      .addFile("inc/b.h", Digest::of("b"))
      .setOptions({"-DA=1", "-DB=2", "-O2"})
      .setTarget("air64", "apple-gpu-family-9")
      .setOutputs({"metallib", "reflection"})
      .setCompilerIdentity(ActionKeyBuilder::compilerIdentity(
          "0.1.0", "19.1.7", Digest::of("stdlib")));
  return B;
}

TEST(ActionKeyTest, IsLowercaseHexSha256AndDeterministic) {
  std::string K = base().build();
  EXPECT_EQ(K.size(), 64u);
  EXPECT_TRUE(isValidHash(K));
  EXPECT_EQ(K, base().build());
  EXPECT_EQ(K, Digest::of(base().serialize()).hash);
  EXPECT_EQ(base().serialize().rfind(kActionKeyVersion, 8), 8u)
      << "serialization starts with the length-prefixed version tag";
}

TEST(ActionKeyTest, FileInsertionOrderDoesNotMatter) {
  ActionKeyBuilder B;
  B.setMainSource("shader.metal", Digest::of("kernel void k() {}"))
      .addFile("inc/b.h", Digest::of("b"))
      .addFile("inc/a.h", Digest::of("a"))
      .setOptions({"-DA=1", "-DB=2", "-O2"})
      .setTarget("air64", "apple-gpu-family-9")
      .setOutputs({"metallib", "reflection"})
      .setCompilerIdentity(ActionKeyBuilder::compilerIdentity(
          "0.1.0", "19.1.7", Digest::of("stdlib")));
  EXPECT_EQ(B.build(), base().build());
}

TEST(ActionKeyTest, EveryInputChangesTheKey) {
  const std::string Base = base().build();
  std::vector<std::pair<const char *, std::function<void(ActionKeyBuilder &)>>>
      Mutations = {
          {"main source digest",
           [](auto &B) {
             B.setMainSource("shader.metal", Digest::of("kernel void j() {}"));
           }},
          {"main source path",
           [](auto &B) {
             B.setMainSource("other.metal", Digest::of("kernel void k() {}"));
           }},
          {"file digest",
           [](auto &B) { B.addFile("inc/a.h", Digest::of("a2")); }},
          {"file digest size only",
           [](auto &B) {
             Digest D = Digest::of("a");
             D.size_bytes += 1;
             B.addFile("inc/a.h", D);
           }},
          {"file path",
           [](auto &B) {
             // Same content under another path: rebuild without inc/a.h.
             B = ActionKeyBuilder();
             B.setMainSource("shader.metal", Digest::of("kernel void k() {}"))
                 .addFile("inc/A.h", Digest::of("a"))
                 .addFile("inc/b.h", Digest::of("b"))
                 .setOptions({"-DA=1", "-DB=2", "-O2"})
                 .setTarget("air64", "apple-gpu-family-9")
                 .setOutputs({"metallib", "reflection"})
                 .setCompilerIdentity(ActionKeyBuilder::compilerIdentity(
                     "0.1.0", "19.1.7", Digest::of("stdlib")));
           }},
          {"extra file", [](auto &B) { B.addFile("inc/c.h", Digest::of("c")); }},
          {"option value",
           [](auto &B) { B.setOptions({"-DA=1", "-DB=3", "-O2"}); }},
          {"option removed", [](auto &B) { B.setOptions({"-DA=1", "-DB=2"}); }},
          {"option order",
           [](auto &B) { B.setOptions({"-DB=2", "-DA=1", "-O2"}); }},
          {"option split",
           [](auto &B) { B.setOptions({"-DA=1-DB=2", "-O2"}); }},
          {"target arch",
           [](auto &B) { B.setTarget("air32", "apple-gpu-family-9"); }},
          {"target cpu",
           [](auto &B) { B.setTarget("air64", "apple-gpu-family-8"); }},
          {"outputs", [](auto &B) { B.setOutputs({"metallib"}); }},
          {"outputs order",
           [](auto &B) { B.setOutputs({"reflection", "metallib"}); }},
          {"function constant value",
           [](auto &B) { B.setFunctionConstants({{"0", "true"}}); }},
          {"function constant key",
           [](auto &B) { B.setFunctionConstants({{"use_bias", "true"}}); }},
          {"compiler msld version",
           [](auto &B) {
             B.setCompilerIdentity(ActionKeyBuilder::compilerIdentity(
                 "0.1.1", "19.1.7", Digest::of("stdlib")));
           }},
          {"compiler llvm version",
           [](auto &B) {
             B.setCompilerIdentity(ActionKeyBuilder::compilerIdentity(
                 "0.1.0", "19.1.6", Digest::of("stdlib")));
           }},
          {"compiler stdlib digest",
           [](auto &B) {
             B.setCompilerIdentity(ActionKeyBuilder::compilerIdentity(
                 "0.1.0", "19.1.7", Digest::of("stdlib2")));
           }},
      };
  std::set<std::string> Seen = {Base};
  for (auto &[Name, Mutate] : Mutations) {
    ActionKeyBuilder B = base();
    Mutate(B);
    std::string K = B.build();
    EXPECT_NE(K, Base) << Name;
    EXPECT_TRUE(Seen.insert(K).second) << Name << " collides with another";
  }
}

TEST(ActionKeyTest, FieldBoundariesAreUnambiguous) {
  // Moving a character across a field boundary must change the key.
  ActionKeyBuilder A, B;
  A.setTarget("air64", "x");
  B.setTarget("air6", "4x");
  EXPECT_NE(A.build(), B.build());
  ActionKeyBuilder C, D;
  C.setOutputs({"ab", "c"});
  D.setOutputs({"a", "bc"});
  EXPECT_NE(C.build(), D.build());
  // Options and outputs with the same strings are different fields.
  ActionKeyBuilder E, F;
  E.setOptions({"x"});
  F.setOutputs({"x"});
  EXPECT_NE(E.build(), F.build());
  // Unset main source differs from an empty one.
  ActionKeyBuilder G, H;
  H.setMainSource("", Digest{});
  EXPECT_NE(G.build(), H.build());
}

} // namespace
