// Fuzz target: the checks every compile request passes through in msld and
// the worker (compiler/Options.h, compiler/RequestChecks.h). The input is a
// command line, one argument per line (a NUL stays inside its argument).
// Properties, each an abort when broken:
//  - an accepted command line normalizes to one that parses to itself;
//  - a refusal says why, and no message carries raw control or non-ASCII
//    bytes from the request (they come back quoted);
//  - an accepted path is relative and canonical, within its bound;
//  - quoteForMessage output is printable ASCII of bounded length.
#include "FuzzInput.h"
#include "msl/compiler/Options.h"
#include "msl/compiler/RequestChecks.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

namespace {

using namespace msl::compiler;

void require(bool ok) {
  if (!ok)
    std::abort();
}

bool printable(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c >= 0x7f)
      return false;
  return true;
}

bool noControlBytes(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f)
      return false;
  return true;
}

// (File names may be UTF-8: bytes >= 0x80 are allowed.)
bool canonicalRelativePath(std::string_view p, const RequestLimits &limits) {
  if (p.empty() || p.size() > limits.maxPathBytes || p.front() == '/' || !noControlBytes(p))
    return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos)
      end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..")
      return false;
    start = end + 1;
  }
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view input(reinterpret_cast<const char *>(data), size);
  const std::vector<std::string> args = msl::fuzz::splitLines(input);
  const RequestLimits limits;

  std::string error;
  auto opts = parseMetalOptions(args, error, limits);
  if (opts) {
    std::string again;
    auto reparsed = parseMetalOptions(opts->normalized(), again, limits);
    require(reparsed && reparsed->normalized() == opts->normalized());
  } else {
    require(!error.empty() && printable(error));
  }

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    std::string pathError = checkRequestPath("file path", a, limits);
    if (pathError.empty())
      require(canonicalRelativePath(a, limits));
    else
      require(printable(pathError));
    if (i + 1 < args.size()) {
      std::string constantError = checkFunctionConstant(a, args[i + 1], limits);
      require(printable(constantError));
      if (constantError.empty())
        require(!a.empty() && a.size() <= limits.maxConstantNameBytes &&
                args[i + 1].size() <= limits.maxConstantValueBytes && printable(a));
    }
    std::string quoted = quoteForMessage(a);
    require(printable(quoted) && quoted.size() <= 4 * 64 + 64);
    require(printable(checkNvptxCpu(a)));
  }
  return 0;
}
