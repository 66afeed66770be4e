// Fuzz target: the action key (cache/ActionKey.h) is a function of exactly
// the compile's inputs. The input describes two compiles (split at the first
// 0xff byte); each field is a line. Property: their serializations are equal
// exactly when the inputs are equal in the key's documented sense (files and
// function constants as sets by name, options and outputs in order), and the
// key is 64 lowercase hex digits.
#include "FuzzInput.h"
#include "msl/cache/ActionKey.h"
#include "msl/cache/Digest.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace {

using msl::cache::ActionKeyBuilder;
using msl::cache::Digest;

struct Inputs {
  std::string mainPath, mainContent, arch, cpu, identity;
  std::map<std::string, std::string> files; // path -> content (re-adding replaces)
  std::vector<std::string> options, outputs;
  std::map<std::string, std::string> constants;

  auto tied() const { return std::tie(mainPath, mainContent, arch, cpu, identity, files, options, outputs, constants); }
  bool operator==(const Inputs &o) const { return tied() == o.tied(); }
};

// Lines: main path, main content, arch, cpu, identity, then tagged lines:
// "f<path>=<content>", "o<option>", "u<output>", "c<key>=<value>".
Inputs parse(std::string_view s) {
  Inputs in;
  auto l = msl::fuzz::splitLines(s);
  std::string *fixed[] = {&in.mainPath, &in.mainContent, &in.arch, &in.cpu, &in.identity};
  size_t i = 0;
  for (; i < l.size() && i < 5; ++i)
    *fixed[i] = l[i];
  for (; i < l.size(); ++i) {
    const std::string &x = l[i];
    if (x.empty())
      continue;
    std::string rest = x.substr(1);
    size_t eq = rest.find('=');
    std::string key = rest.substr(0, eq), value = eq == std::string::npos ? "" : rest.substr(eq + 1);
    switch (x[0]) {
    case 'f': in.files[key] = value; break;
    case 'o': in.options.push_back(rest); break;
    case 'u': in.outputs.push_back(rest); break;
    case 'c': in.constants[key] = value; break;
    default: break;
    }
  }
  return in;
}

std::string serialize(const Inputs &in, std::string *key) {
  ActionKeyBuilder b;
  b.setMainSource(in.mainPath, Digest::of(in.mainContent));
  for (const auto &[path, content] : in.files)
    b.addFile(path, Digest::of(content));
  b.setOptions(in.options).setTarget(in.arch, in.cpu).setOutputs(in.outputs);
  b.setFunctionConstants(in.constants).setCompilerIdentity(in.identity);
  *key = b.build();
  return b.serialize();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  size_t cut = input.find('\xff');
  std::string_view first = input.substr(0, cut);
  std::string_view second = cut == std::string_view::npos ? input : input.substr(cut + 1);
  Inputs a = parse(first), b = parse(second);
  std::string keyA, keyB;
  std::string sa = serialize(a, &keyA), sb = serialize(b, &keyB);
  if ((sa == sb) != (a == b))
    std::abort(); // two different compiles share a key, or one compile has two
  if (keyA.size() != 64 || !msl::cache::isValidHash(keyA) || (sa == sb) != (keyA == keyB))
    std::abort();
  return 0;
}
