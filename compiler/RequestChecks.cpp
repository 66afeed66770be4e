#include "msl/compiler/RequestChecks.h"

#include <cstdint>

namespace msl::compiler {

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isIdentifierStart(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isIdentifierChar(char c) { return isIdentifierStart(c) || isDigit(c); }

bool isIdentifier(std::string_view s) {
  if (s.empty() || !isIdentifierStart(s[0]))
    return false;
  for (char c : s)
    if (!isIdentifierChar(c))
      return false;
  return true;
}

// The value of digit `c` in `radix`, or -1.
int digitValue(char c, unsigned radix) {
  int v = isDigit(c) ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
  return v >= 0 && unsigned(v) < radix ? v : -1;
}

// An integer literal as llvm::StringRef::getAsInteger(0, ...) reads it (the
// compile's reader), with an optional '-': true when it fits in 64 bits
// (down to -2^63 when negative).
bool isInteger64(std::string_view s) {
  bool negative = !s.empty() && s.front() == '-';
  if (negative)
    s.remove_prefix(1);
  unsigned radix = 10;
  if (s.size() > 1 && s[0] == '0') {
    char p = s[1];
    if (p == 'x' || p == 'X')
      radix = 16;
    else if (p == 'b' || p == 'B')
      radix = 2;
    else if (p == 'o')
      radix = 8;
    if (radix != 10)
      s.remove_prefix(2);
    else
      radix = 8, s.remove_prefix(1); // a leading 0: octal
  }
  if (s.empty())
    return false;
  uint64_t value = 0;
  for (char c : s) {
    int d = digitValue(c, radix);
    if (d < 0 || value > (UINT64_MAX - unsigned(d)) / radix)
      return false;
    value = value * radix + unsigned(d);
  }
  return !negative || value <= (uint64_t(1) << 63);
}

// A decimal floating-point literal: -?(digits[.digits]|.digits)([eE][+-]?digits)?
// with a '.' or an exponent (else it is an integer).
bool isDecimalFloat(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    size_t start = i;
    while (i < s.size() && isDigit(s[i]))
      ++i;
    return i - start;
  };
  if (i < s.size() && s[i] == '-')
    ++i;
  size_t mantissa = digits();
  bool point = i < s.size() && s[i] == '.';
  if (point) {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0)
    return false;
  bool exponent = i < s.size() && (s[i] == 'e' || s[i] == 'E');
  if (exponent) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-'))
      ++i;
    if (digits() == 0)
      return false;
  }
  return i == s.size() && (point || exponent);
}

std::string tooLong(std::string_view what, std::string_view s, size_t limit) {
  return std::string(what) + " " + quoteForMessage(s) + " is " + std::to_string(s.size()) +
         " bytes; at most " + std::to_string(limit) + " are allowed";
}

} // namespace

std::string quoteForMessage(std::string_view s) {
  constexpr size_t kShown = 64;
  static const char *kHex = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < kShown; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    // Non-ASCII too: the message stays valid UTF-8 wherever the cut falls.
    if (c < 0x20 || c >= 0x7f) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += char(c);
    }
  }
  out += '\'';
  if (s.size() > kShown)
    out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

std::string checkRequestCounts(size_t files, size_t functionConstants, const RequestLimits &limits) {
  auto tooMany = [](size_t n, const char *what, size_t limit) {
    return "the request has " + std::to_string(n) + " " + what + "; at most " + std::to_string(limit) +
           " are allowed";
  };
  if (files > limits.maxFiles)
    return tooMany(files, "files", limits.maxFiles);
  if (functionConstants > limits.maxFunctionConstants)
    return tooMany(functionConstants, "function constants", limits.maxFunctionConstants);
  return "";
}

std::string checkRequestPath(std::string_view role, std::string_view path, const RequestLimits &limits) {
  if (path.size() > limits.maxPathBytes)
    return tooLong(role, path, limits.maxPathBytes);
  for (char c : path)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
      return std::string(role) + " " + quoteForMessage(path) + " contains a control byte";
  bool canonical = !path.empty() && path.front() != '/';
  for (size_t start = 0; canonical && start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos)
      end = path.size();
    std::string_view part = path.substr(start, end - start);
    canonical = !part.empty() && part != "." && part != "..";
    start = end + 1;
  }
  if (!canonical)
    return std::string(role) + " " + quoteForMessage(path) +
           " must be relative to the compile root, without '.', '..' or empty parts";
  return "";
}

std::string checkFunctionConstant(std::string_view key, std::string_view value, const RequestLimits &limits) {
  if (key.size() > limits.maxConstantNameBytes)
    return tooLong("function constant name", key, limits.maxConstantNameBytes);
  bool index = !key.empty() && isDigit(key[0]);
  if (index) {
    // One spelling per index: the compile looks constants up by "3", not "03".
    bool ok = key.size() <= 5 && (key.size() == 1 || key[0] != '0');
    for (char c : key)
      ok = ok && isDigit(c);
    if (!ok || std::stoul(std::string(key)) > 65535)
      return "function constant index " + quoteForMessage(key) +
             " must be 0-65535, written without leading zeros";
  } else if (!isIdentifier(key)) {
    return "function constant key " + quoteForMessage(key) +
           " must be an index (0-65535) or a name ([A-Za-z_][A-Za-z0-9_]*)";
  }
  if (value.size() > limits.maxConstantValueBytes)
    return tooLong("the value of function constant " + quoteForMessage(key), value,
                   limits.maxConstantValueBytes);
  // A vector constant's lanes are separated by commas ("1,2"), at most 4.
  auto isLiteral = [](std::string_view v) {
    return v == "true" || v == "false" || isInteger64(v) || isDecimalFloat(v);
  };
  size_t lanes = 0;
  bool ok = true;
  for (size_t start = 0;; ++lanes) {
    size_t comma = value.find(',', start);
    ok = ok && isLiteral(value.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos)
      break;
    start = comma + 1;
  }
  if (!ok || lanes >= 4)
    return "the value " + quoteForMessage(value) + " of function constant " + quoteForMessage(key) +
           " is not a literal: true, false, an integer that fits in 64 bits or a decimal float (a "
           "vector's 2-4 lanes separated by commas: 1,2)";
  return "";
}

std::string checkNvptxCpu(std::string_view cpu) {
  std::string_view digits = cpu.substr(0, 3) == "sm_" ? cpu.substr(3) : std::string_view();
  if (!digits.empty() && digits.back() == 'a')
    digits.remove_suffix(1);
  bool ok = digits.size() >= 2 && digits.size() <= 3;
  for (char c : digits)
    ok = ok && isDigit(c);
  return ok ? "" : "target cpu " + quoteForMessage(cpu) + " is not an NVPTX SM such as sm_90 or sm_90a";
}

} // namespace msl::compiler
