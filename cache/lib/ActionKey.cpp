//===- ActionKey.cpp - Hermetic action key serialization ------------------===//

#include "msl/cache/ActionKey.h"

#include <cstdint>

namespace msl::cache {

namespace {
// Fixed-width little-endian integers: no varint edge cases, trivially
// reimplementable by anyone who wants to recompute a key.
void putU64(std::string &Out, uint64_t V) {
  for (int I = 0; I < 8; ++I)
    Out.push_back(static_cast<char>((V >> (8 * I)) & 0xff));
}
void putBytes(std::string &Out, std::string_view S) {
  putU64(Out, S.size());
  Out.append(S);
}
void putDigest(std::string &Out, const Digest &D) {
  putBytes(Out, D.hash);
  putU64(Out, static_cast<uint64_t>(D.size_bytes));
}
void putList(std::string &Out, const std::vector<std::string> &L) {
  putU64(Out, L.size());
  for (const auto &S : L)
    putBytes(Out, S);
}
// Each field is "tag byte + u64 length + body": a reader can always tell
// where a field ends, and the tags make the order of fields self-describing.
template <typename Fn> void field(std::string &Out, char Tag, Fn &&Body) {
  std::string B;
  Body(B);
  Out.push_back(Tag);
  putBytes(Out, B);
}
} // namespace

ActionKeyBuilder &ActionKeyBuilder::setMainSource(std::string Path,
                                                  Digest D) {
  MainSource.emplace(std::move(Path), std::move(D));
  return *this;
}

ActionKeyBuilder &ActionKeyBuilder::addFile(std::string Path, Digest D) {
  Files.insert_or_assign(std::move(Path), std::move(D));
  return *this;
}

ActionKeyBuilder &
ActionKeyBuilder::setOptions(std::vector<std::string> NormalizedOptions) {
  Options = std::move(NormalizedOptions);
  return *this;
}

ActionKeyBuilder &ActionKeyBuilder::setTarget(std::string A, std::string C) {
  Arch = std::move(A);
  Cpu = std::move(C);
  return *this;
}

ActionKeyBuilder &ActionKeyBuilder::setOutputs(std::vector<std::string> O) {
  Outputs = std::move(O);
  return *this;
}

ActionKeyBuilder &
ActionKeyBuilder::setFunctionConstants(std::map<std::string, std::string> Values) {
  FunctionConstants = std::move(Values);
  return *this;
}

ActionKeyBuilder &ActionKeyBuilder::setCompilerIdentity(std::string Id) {
  CompilerId = std::move(Id);
  return *this;
}

std::string ActionKeyBuilder::compilerIdentity(std::string_view MsldVersion,
                                               std::string_view LlvmVersion,
                                               const Digest &StdlibDigest) {
  std::string Out = "msld-compiler-v1";
  putBytes(Out, MsldVersion);
  putBytes(Out, LlvmVersion);
  putDigest(Out, StdlibDigest);
  return Out;
}

std::string ActionKeyBuilder::serialize() const {
  std::string Out;
  putBytes(Out, kActionKeyVersion);
  field(Out, 'S', [&](std::string &B) {
    // Presence byte: an unset main source differs from an empty one.
    B.push_back(MainSource ? 1 : 0);
    if (MainSource) {
      putBytes(B, MainSource->first);
      putDigest(B, MainSource->second);
    }
  });
  field(Out, 'F', [&](std::string &B) {
    putU64(B, Files.size());
    for (const auto &[Path, D] : Files) { // std::map: sorted by path
      putBytes(B, Path);
      putDigest(B, D);
    }
  });
  field(Out, 'O', [&](std::string &B) { putList(B, Options); });
  field(Out, 'T', [&](std::string &B) {
    putBytes(B, Arch);
    putBytes(B, Cpu);
  });
  field(Out, 'U', [&](std::string &B) { putList(B, Outputs); });
  field(Out, 'K', [&](std::string &B) {
    putU64(B, FunctionConstants.size());
    for (const auto &[Key, Value] : FunctionConstants) { // std::map: sorted
      putBytes(B, Key);
      putBytes(B, Value);
    }
  });
  field(Out, 'C', [&](std::string &B) { putBytes(B, CompilerId); });
  return Out;
}

std::string ActionKeyBuilder::build() const {
  return Digest::of(serialize()).hash;
}

} // namespace msl::cache
