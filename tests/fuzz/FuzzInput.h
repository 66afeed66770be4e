// What the fuzz targets share: reading their input as lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace msl::fuzz {

/// `s` split at '\n' (an empty input is one empty line; NULs stay inside).
inline std::vector<std::string> splitLines(std::string_view s) {
  std::vector<std::string> out;
  for (size_t start = 0; start <= s.size();) {
    size_t end = s.find('\n', start);
    if (end == std::string_view::npos)
      end = s.size();
    out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

} // namespace msl::fuzz
