#include "msl/client/MslcRun.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "msl/client/Client.h"

namespace fs = std::filesystem;

namespace msl::client::mslc {
namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    auto p = s.find(sep);
    out.push_back(s.substr(0, p));
    if (p == std::string_view::npos) return out;
    s.remove_prefix(p + 1);
  }
}

// Decimal or 0x hex, no sign.
bool parseUnsigned(std::string_view s, std::uint64_t* out) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parseU32(std::string_view s, std::uint32_t* out) {
  std::uint64_t v;
  if (!parseUnsigned(s, &v) || v > std::numeric_limits<std::uint32_t>::max()) return false;
  *out = static_cast<std::uint32_t>(v);
  return true;
}

// A binary format of 16 bits with `expBits` exponent bits: the double
// rounded to nearest, ties to even.
std::uint16_t roundTo16(double value, int expBits, int mantBits) {
  std::uint64_t b;
  std::memcpy(&b, &value, sizeof b);
  const std::uint32_t sign = (b >> 63) ? (1u << (expBits + mantBits)) : 0;
  const int exp = static_cast<int>((b >> 52) & 0x7ff);
  const std::uint64_t frac = b & ((std::uint64_t(1) << 52) - 1);
  const std::uint32_t expMax = (1u << expBits) - 1;
  const std::uint32_t mantMask = (1u << mantBits) - 1;
  if (exp == 0x7ff) {
    if (frac == 0) return static_cast<std::uint16_t>(sign | expMax << mantBits);  // infinity
    // NaN: quiet, with the payload's top bits.
    return static_cast<std::uint16_t>(sign | expMax << mantBits | 1u << (mantBits - 1) |
                                      (static_cast<std::uint32_t>(frac >> (52 - mantBits)) & mantMask));
  }
  if (exp == 0) return static_cast<std::uint16_t>(sign);  // zero, or far below the smallest subnormal
  int e = exp - 1023;
  const int bias = (1 << (expBits - 1)) - 1;
  const int emin = 1 - bias;
  const std::uint64_t m = (std::uint64_t(1) << 52) | frac;
  const int shift = 52 - mantBits + (e < emin ? emin - e : 0);
  if (shift > 60) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
  std::uint64_t q = m >> shift;
  const std::uint64_t rem = m & ((std::uint64_t(1) << shift) - 1);
  const std::uint64_t halfway = std::uint64_t(1) << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) ++q;
  // A subnormal; q == 1 << mantBits is the smallest normal, encoded the same.
  if (e < emin) return static_cast<std::uint16_t>(sign | q);
  if (q == (std::uint64_t(1) << (mantBits + 1))) {
    q >>= 1;
    ++e;
  }
  const int biased = e + bias;
  if (biased >= static_cast<int>(expMax)) return static_cast<std::uint16_t>(sign | expMax << mantBits);
  return static_cast<std::uint16_t>(sign | std::uint32_t(biased) << mantBits | (q & mantMask));
}

void appendLittleEndian(std::string* out, std::uint64_t v, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint64_t readLittleEndian(std::string_view bytes, std::size_t size) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < size; ++i)
    v |= std::uint64_t(static_cast<unsigned char>(bytes[i])) << (8 * i);
  return v;
}

bool isFloatType(ValueType t) {
  return t == ValueType::kFloat || t == ValueType::kHalf || t == ValueType::kBFloat;
}

bool isSignedType(ValueType t) {
  return t == ValueType::kInt || t == ValueType::kShort || t == ValueType::kChar || t == ValueType::kLong;
}

// The shortest decimal that reads back (doubleToHalf / doubleToBFloat) as
// the same 16 bits.
std::string shortest16(std::uint16_t bits, float value, std::uint16_t (*round)(double)) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  const double v = value;
  const double mag = std::fabs(v);
  const bool fixed = mag == 0 || (mag >= 1e-4 && mag < 1e16);
  char buf[64];
  for (int precision = 0; precision <= 40; ++precision) {
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v,
                                 fixed ? std::chars_format::fixed : std::chars_format::scientific,
                                 precision);
    if (ec != std::errc()) break;
    std::string s(buf, p);
    if (round(std::strtod(s.c_str(), nullptr)) == bits) return s;
  }
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, p);
}

}  // namespace

// --- half and bfloat --------------------------------------------------------

std::uint16_t doubleToHalf(double value) { return roundTo16(value, 5, 10); }
std::uint16_t floatToHalf(float value) { return doubleToHalf(value); }  // float -> double is exact
std::uint16_t doubleToBFloat(double value) { return roundTo16(value, 8, 7); }
std::uint16_t floatToBFloat(float value) { return doubleToBFloat(value); }

float halfToFloat(std::uint16_t bits) {
  const bool negative = bits & 0x8000;
  const int exp = (bits >> 10) & 0x1f;
  const std::uint32_t mant = bits & 0x3ff;
  if (exp == 0x1f) {
    std::uint32_t f = (negative ? 0x80000000u : 0) | 0x7f800000u | (mant << 13);
    float out;
    std::memcpy(&out, &f, sizeof out);
    return out;
  }
  float magnitude = exp == 0 ? std::ldexp(float(mant), -24) : std::ldexp(float(mant | 0x400), exp - 25);
  return negative ? -magnitude : magnitude;
}

float bfloatToFloat(std::uint16_t bits) {
  std::uint32_t f = std::uint32_t(bits) << 16;
  float out;
  std::memcpy(&out, &f, sizeof out);
  return out;
}

// --- element types ----------------------------------------------------------

namespace {
struct TypeName {
  const char* name;
  ValueType type;
  std::size_t size;
};
constexpr TypeName kTypes[] = {
    {"float", ValueType::kFloat, 4}, {"half", ValueType::kHalf, 2},     {"bfloat", ValueType::kBFloat, 2},
    {"int", ValueType::kInt, 4},     {"uint", ValueType::kUInt, 4},     {"short", ValueType::kShort, 2},
    {"ushort", ValueType::kUShort, 2}, {"char", ValueType::kChar, 1},   {"uchar", ValueType::kUChar, 1},
    {"long", ValueType::kLong, 8},   {"ulong", ValueType::kULong, 8},
};
}  // namespace

std::optional<ValueType> parseValueType(std::string_view name) {
  for (const auto& t : kTypes)
    if (name == t.name) return t.type;
  return std::nullopt;
}

std::string_view valueTypeName(ValueType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t.name;
  return "?";
}

std::size_t valueTypeSize(ValueType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t.size;
  return 1;
}

std::optional<ValueType> elementTypeOf(std::string_view reflection_type) {
  std::string t(trim(reflection_type));
  auto erase = [&t](const std::string& word) {
    for (auto p = t.find(word); p != std::string::npos; p = t.find(word)) t.erase(p, word.size());
  };
  erase("const ");
  erase("volatile ");
  erase("metal::");
  erase("struct ");
  t = std::string(trim(t));
  // atomic<T>, vec<T, N>, packed_vec<T, N>: the T.
  for (const char* wrapper : {"atomic<", "vec<", "packed_vec<"}) {
    if (startsWith(t, wrapper) && t.back() == '>') {
      std::string inner = t.substr(std::strlen(wrapper), t.size() - std::strlen(wrapper) - 1);
      return elementTypeOf(inner.substr(0, inner.find(',')));
    }
  }
  if (startsWith(t, "atomic_")) t.erase(0, 7);
  if (startsWith(t, "packed_")) t.erase(0, 7);
  // Matrices (float4x4) and vectors (float4, uint2).
  auto isDim = [](char c) { return c >= '2' && c <= '4'; };
  if (t.size() > 3 && isDim(t[t.size() - 1]) && t[t.size() - 2] == 'x' && isDim(t[t.size() - 3]))
    t.resize(t.size() - 3);
  else if (t.size() > 1 && isDim(t.back()) && std::isalpha(static_cast<unsigned char>(t[t.size() - 2])))
    t.pop_back();
  if (auto v = parseValueType(t)) return v;
  static const std::map<std::string, ValueType> kAliases = {
      {"unsigned int", ValueType::kUInt},    {"unsigned", ValueType::kUInt},
      {"unsigned short", ValueType::kUShort}, {"unsigned char", ValueType::kUChar},
      {"signed char", ValueType::kChar},      {"unsigned long", ValueType::kULong},
      {"long long", ValueType::kLong},        {"unsigned long long", ValueType::kULong},
      {"bool", ValueType::kUChar},            {"int8_t", ValueType::kChar},
      {"uint8_t", ValueType::kUChar},         {"int16_t", ValueType::kShort},
      {"uint16_t", ValueType::kUShort},       {"int32_t", ValueType::kInt},
      {"uint32_t", ValueType::kUInt},         {"int64_t", ValueType::kLong},
      {"uint64_t", ValueType::kULong},        {"size_t", ValueType::kULong},
      {"ptrdiff_t", ValueType::kLong},        {"bfloat16_t", ValueType::kBFloat},
      {"_Float16", ValueType::kHalf},         {"__fp16", ValueType::kHalf},
  };
  if (auto it = kAliases.find(t); it != kAliases.end()) return it->second;
  return std::nullopt;
}

// --- values -----------------------------------------------------------------

bool encodeValues(ValueType type, std::string_view list, std::string* out, std::string* error) {
  const std::size_t size = valueTypeSize(type);
  const std::string typeName(valueTypeName(type));
  std::string bytes;
  auto bad = [&](std::string_view v, const std::string& why) {
    *error = "bad " + typeName + " value '" + std::string(v) + "'" + (why.empty() ? "" : ": " + why);
    return false;
  };
  for (std::string_view raw : split(list, ',')) {
    std::string_view v = trim(raw);
    if (v.empty()) return *error = "empty value in the " + typeName + " list '" + std::string(list) + "'", false;
    if (isFloatType(type)) {
      std::string text(v);
      errno = 0;
      char* end = nullptr;
      if (type == ValueType::kFloat) {
        float f = std::strtof(text.c_str(), &end);
        if (end != text.c_str() + text.size()) return bad(v, "not a number");
        if (errno == ERANGE && std::isinf(f)) return bad(v, "out of range for float");
        std::uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        appendLittleEndian(&bytes, bits, 4);
      } else {
        double d = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size()) return bad(v, "not a number");
        std::uint16_t bits = type == ValueType::kHalf ? doubleToHalf(d) : doubleToBFloat(d);
        float back = type == ValueType::kHalf ? halfToFloat(bits) : bfloatToFloat(bits);
        if (std::isinf(back) && !std::isinf(d)) return bad(v, "out of range for " + typeName);
        appendLittleEndian(&bytes, bits, 2);
      }
      continue;
    }
    bool negative = false;
    std::string_view digits = v;
    if (startsWith(digits, "-") || startsWith(digits, "+")) {
      negative = digits[0] == '-';
      digits.remove_prefix(1);
    }
    std::uint64_t magnitude;
    if (!parseUnsigned(digits, &magnitude)) return bad(v, "not an integer");
    const unsigned bits = unsigned(size * 8);
    std::uint64_t encoded;
    if (isSignedType(type)) {
      const std::uint64_t limit = std::uint64_t(1) << (bits - 1);  // |min|
      if (negative ? magnitude > limit : magnitude >= limit) return bad(v, "out of range for " + typeName);
      encoded = negative ? (~magnitude + 1) : magnitude;
    } else {
      if (negative && magnitude != 0) return bad(v, typeName + " is unsigned");
      if (bits < 64 && magnitude >= (std::uint64_t(1) << bits)) return bad(v, "out of range for " + typeName);
      encoded = magnitude;
    }
    appendLittleEndian(&bytes, encoded, size);
  }
  *out = std::move(bytes);
  return true;
}

std::string formatValues(ValueType type, std::string_view bytes) {
  const std::size_t size = valueTypeSize(type);
  std::string out;
  char buf[64];
  for (std::size_t at = 0; at + size <= bytes.size(); at += size) {
    if (at) out += ',';
    std::uint64_t raw = readLittleEndian(bytes.substr(at, size), size);
    switch (type) {
      case ValueType::kFloat: {
        float f;
        std::uint32_t b = static_cast<std::uint32_t>(raw);
        std::memcpy(&f, &b, sizeof f);
        if (std::isnan(f)) {
          out += std::signbit(f) ? "-nan" : "nan";
        } else {
          auto [p, ec] = std::to_chars(buf, buf + sizeof buf, f);
          out.append(buf, p);
        }
        break;
      }
      case ValueType::kHalf:
        out += shortest16(std::uint16_t(raw), halfToFloat(std::uint16_t(raw)), doubleToHalf);
        break;
      case ValueType::kBFloat:
        out += shortest16(std::uint16_t(raw), bfloatToFloat(std::uint16_t(raw)), doubleToBFloat);
        break;
      default:
        if (isSignedType(type)) {
          const unsigned bits = unsigned(size * 8);
          std::int64_t v = bits < 64 && (raw >> (bits - 1)) ? std::int64_t(raw - (std::uint64_t(1) << bits))
                                                             : std::int64_t(raw);
          out += std::to_string(v);
        } else {
          out += std::to_string(raw);
        }
    }
  }
  return out;
}

std::string formatHex(std::string_view bytes, std::size_t element_size) {
  static const char* kDigits = "0123456789abcdef";
  if (element_size == 0) element_size = std::max<std::size_t>(1, bytes.size());
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i && i % element_size == 0) out += ',';
    auto c = static_cast<unsigned char>(bytes[i]);
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// --- specs ------------------------------------------------------------------

namespace {

// "N=REST" -> N, REST.
bool splitIndexed(std::string_view arg, const char* flag, std::uint32_t* index, std::string_view* rest,
                  std::string* error) {
  std::string_view attribute = std::string_view(flag) == "--texture"              ? "texture"
                               : std::string_view(flag) == "--sampler"            ? "sampler"
                               : std::string_view(flag) == "--threadgroup-memory" ? "threadgroup"
                                                                                  : "buffer";
  auto eq = arg.find('=');
  if (eq == std::string_view::npos || !parseU32(arg.substr(0, eq), index)) {
    *error = std::string(flag) + " needs N=..., with N the [[" + std::string(attribute) +
             "(N)]] index, not '" + std::string(arg) + "'";
    return false;
  }
  *rest = arg.substr(eq + 1);
  return true;
}

struct PixelFormatName {
  const char* name;
  msl::v1::TextureBinding::PixelFormat format;
};
constexpr PixelFormatName kPixelFormats[] = {
    {"r8unorm", msl::v1::TextureBinding::R8_UNORM},       {"rg8unorm", msl::v1::TextureBinding::RG8_UNORM},
    {"rgba8unorm", msl::v1::TextureBinding::RGBA8_UNORM}, {"r16float", msl::v1::TextureBinding::R16_FLOAT},
    {"rg16float", msl::v1::TextureBinding::RG16_FLOAT},   {"rgba16float", msl::v1::TextureBinding::RGBA16_FLOAT},
    {"r32float", msl::v1::TextureBinding::R32_FLOAT},     {"rg32float", msl::v1::TextureBinding::RG32_FLOAT},
    {"rgba32float", msl::v1::TextureBinding::RGBA32_FLOAT}, {"r32sint", msl::v1::TextureBinding::R32_SINT},
    {"rg32sint", msl::v1::TextureBinding::RG32_SINT},     {"rgba32sint", msl::v1::TextureBinding::RGBA32_SINT},
    {"r32uint", msl::v1::TextureBinding::R32_UINT},       {"rg32uint", msl::v1::TextureBinding::RG32_UINT},
    {"rgba32uint", msl::v1::TextureBinding::RGBA32_UINT},
};

}  // namespace

bool parseBufferSpec(std::string_view arg, BufferSpec* out, std::string* error) {
  BufferSpec spec;
  std::string_view rest;
  if (!splitIndexed(arg, "--buffer", &spec.index, &rest, error)) return false;
  const std::string where = "--buffer " + std::string(arg) + ": ";
  if (startsWith(rest, "@")) {
    spec.kind = BufferSpec::kFile;
    spec.file = std::string(rest.substr(1));
    if (spec.file.empty()) return *error = where + "'@' needs a file name", false;
  } else if (startsWith(rest, "zeros:")) {
    spec.kind = BufferSpec::kZeros;
    if (!parseUnsigned(rest.substr(6), &spec.zeros) || spec.zeros == 0)
      return *error = where + "zeros:BYTES needs a byte count of at least 1", false;
  } else {
    auto colon = rest.find(':');
    auto type = colon == std::string_view::npos ? std::nullopt : parseValueType(rest.substr(0, colon));
    if (!type) {
      *error = where + "expected @FILE, zeros:BYTES or TYPE:V,V,... with TYPE one of float, half, "
                       "bfloat, int, uint, short, ushort, char, uchar, long, ulong";
      return false;
    }
    spec.kind = BufferSpec::kValues;
    spec.type = *type;
    if (!encodeValues(*type, rest.substr(colon + 1), &spec.bytes, error)) {
      *error = where + *error;
      return false;
    }
  }
  *out = std::move(spec);
  return true;
}

bool parseSize3(std::string_view spec, msl::v1::Size3* out, std::string* error) {
  auto parts = split(spec, ',');
  std::uint32_t v[3] = {1, 1, 1};
  bool ok = parts.size() <= 3;
  for (std::size_t i = 0; ok && i < parts.size(); ++i) ok = parseU32(trim(parts[i]), &v[i]) && v[i] >= 1;
  if (!ok) {
    *error = "bad size '" + std::string(spec) + "' (expected X[,Y[,Z]], each at least 1)";
    return false;
  }
  out->set_x(v[0]);
  out->set_y(v[1]);
  out->set_z(v[2]);
  return true;
}

bool parseTextureSpec(std::string_view arg, TextureSpec* out, std::string* error) {
  TextureSpec spec;
  std::uint32_t index;
  std::string_view rest;
  if (!splitIndexed(arg, "--texture", &index, &rest, error)) return false;
  const std::string where = "--texture " + std::string(arg) + ": ";
  auto parts = split(rest, ':');
  if (parts.size() < 3 || parts.size() > 4)
    return *error = where + "expected N=TYPE:FORMAT:W[,H[,D]][:@FILE|:zeros]", false;
  auto& b = spec.binding;
  b.set_index(index);
  if (parts[0] == "1d") b.set_type(msl::v1::TextureBinding::TEXTURE_1D);
  else if (parts[0] == "2d") b.set_type(msl::v1::TextureBinding::TEXTURE_2D);
  else if (parts[0] == "2d_array") b.set_type(msl::v1::TextureBinding::TEXTURE_2D_ARRAY);
  else if (parts[0] == "3d") b.set_type(msl::v1::TextureBinding::TEXTURE_3D);
  else return *error = where + "unknown texture type '" + std::string(parts[0]) + "' (1d, 2d, 2d_array, 3d)", false;
  bool known = false;
  for (const auto& f : kPixelFormats)
    if (parts[1] == f.name) {
      b.set_format(f.format);
      known = true;
    }
  if (!known) return *error = where + "unknown pixel format '" + std::string(parts[1]) + "' (e.g. rgba8unorm, r32float)", false;
  msl::v1::Size3 size;
  if (!parseSize3(parts[2], &size, error)) return *error = where + *error, false;
  b.set_width(size.x());
  b.set_height(size.y());
  if (b.type() == msl::v1::TextureBinding::TEXTURE_2D_ARRAY) {
    b.set_depth(1);
    b.set_array_length(size.z());
  } else {
    b.set_depth(size.z());
    b.set_array_length(1);
  }
  if (parts.size() == 4 && parts[3] != "zeros") {
    if (!startsWith(parts[3], "@") || parts[3].size() == 1)
      return *error = where + "the texels are given as @FILE, or zeros", false;
    spec.file = std::string(parts[3].substr(1));
  }
  *out = std::move(spec);
  return true;
}

namespace {
std::optional<msl::v1::SamplerBinding::CompareFunction> compareFunction(std::string_view name) {
  using SB = msl::v1::SamplerBinding;
  static const std::pair<const char*, SB::CompareFunction> kNames[] = {
      {"never", SB::COMPARE_NEVER},     {"less", SB::COMPARE_LESS},
      {"less_equal", SB::COMPARE_LESS_EQUAL}, {"greater", SB::COMPARE_GREATER},
      {"greater_equal", SB::COMPARE_GREATER_EQUAL}, {"equal", SB::COMPARE_EQUAL},
      {"not_equal", SB::COMPARE_NOT_EQUAL}, {"always", SB::COMPARE_ALWAYS}};
  for (const auto& [n, f] : kNames)
    if (name == n) return f;
  return std::nullopt;
}

// The type --print shows a texture's texels in: its components as stored.
ValueType storedTypeOf(msl::v1::TextureBinding::PixelFormat format) {
  switch ((int(format) - 1) / 3) {
    case 0: return ValueType::kUChar;  // unorm8: 0..255
    case 1: return ValueType::kHalf;
    case 2: return ValueType::kFloat;
    case 3: return ValueType::kInt;
    default: return ValueType::kUInt;
  }
}

// Bytes of a texture's texels: r, rg or rgba components of the stored type.
std::size_t textureByteSize(const msl::v1::TextureBinding& t) {
  static const std::size_t kComponents[] = {1, 2, 4};
  return std::size_t(t.width()) * std::max(1u, t.height()) * std::max(1u, t.depth()) *
         std::max(1u, t.array_length()) * valueTypeSize(storedTypeOf(t.format())) *
         kComponents[(int(t.format()) - 1) % 3];
}
}  // namespace

bool parseSamplerSpec(std::string_view arg, msl::v1::SamplerBinding* out, std::string* error) {
  msl::v1::SamplerBinding s;
  std::uint32_t index;
  std::string_view rest;
  std::string withEq(arg);
  if (withEq.find('=') == std::string::npos) withEq += '=';
  if (!splitIndexed(withEq, "--sampler", &index, &rest, error)) return false;
  const std::string where = "--sampler " + std::string(arg) + ": ";
  s.set_index(index);
  s.set_normalized_coordinates(true);
  using SB = msl::v1::SamplerBinding;
  for (std::string_view item : split(rest, ',')) {
    if (item.empty()) continue;
    auto eq = item.find('=');
    std::string_view key = item.substr(0, eq), value = eq == std::string_view::npos ? "" : item.substr(eq + 1);
    std::optional<SB::Filter> filter;
    if (value == "nearest") filter = SB::NEAREST;
    if (value == "linear") filter = SB::LINEAR;
    std::optional<SB::AddressMode> mode;
    if (value == "clamp_to_edge") mode = SB::CLAMP_TO_EDGE;
    if (value == "repeat") mode = SB::REPEAT;
    if (value == "mirrored_repeat") mode = SB::MIRRORED_REPEAT;
    if (value == "clamp_to_zero") mode = SB::CLAMP_TO_ZERO;
    if (value == "clamp_to_border") mode = SB::CLAMP_TO_BORDER;
    if ((key == "filter" || key == "min" || key == "mag") && filter) {
      if (key != "mag") s.set_min_filter(*filter);
      if (key != "min") s.set_mag_filter(*filter);
    } else if ((key == "address" || key == "s" || key == "t" || key == "r") && mode) {
      if (key == "address" || key == "s") s.set_s_address(*mode);
      if (key == "address" || key == "t") s.set_t_address(*mode);
      if (key == "address" || key == "r") s.set_r_address(*mode);
    } else if (key == "coord" && (value == "normalized" || value == "pixel")) {
      s.set_normalized_coordinates(value == "normalized");
    } else if (key == "border" &&
               (value == "transparent_black" || value == "opaque_black" || value == "opaque_white")) {
      s.set_border_color(value == "transparent_black" ? SB::TRANSPARENT_BLACK
                         : value == "opaque_black"    ? SB::OPAQUE_BLACK
                                                      : SB::OPAQUE_WHITE);
    } else if (key == "compare" && compareFunction(value)) {
      s.set_compare_function(*compareFunction(value));
    } else {
      *error = where + "bad setting '" + std::string(item) +
               "' (filter|min|mag=nearest|linear, address|s|t|r=clamp_to_edge|repeat|mirrored_repeat|"
               "clamp_to_zero|clamp_to_border, coord=normalized|pixel, "
               "border=transparent_black|opaque_black|opaque_white, "
               "compare=never|less|less_equal|greater|greater_equal|equal|not_equal|always)";
      return false;
    }
  }
  *out = s;
  return true;
}

// --- command line -----------------------------------------------------------

std::string runUsage() {
  return R"(usage: mslc run FILE.metal --kernel NAME [metal options] [--constant KEY=VALUE]...
                [--device cpu|cuda[:N]]
                (--grid X[,Y[,Z]] | --threadgroups X[,Y[,Z]]) --threadgroup x[,y[,z]]
                [--buffer N=SPEC]... [--threadgroup-memory N=BYTES]... [--texture N=...]...
                [--sampler N=...]... [--out [texture:]N=FILE]... [--print [texture:]N[:TYPE]]...
                [--repeat R] [--timeout-ms MS] [--stats] [--server HOST:PORT]
                [--tls-ca FILE [--tls-cert FILE --tls-key FILE]] [--token-file FILE]

Compiles FILE.metal on an msld server and runs kernel NAME there.

  --kernel NAME           the kernel's function name or [[host_name]]
  --device D              cpu (default), cuda or cuda:N
  --grid X,Y,Z            dispatchThreads: the grid in threads
  --threadgroups X,Y,Z    dispatchThreadgroups: the grid in threadgroups
  --threadgroup x,y,z     threads per threadgroup
  --buffer N=SPEC         a buffer bound at [[buffer(N)]]; SPEC is
                            @FILE         the file's bytes
                            zeros:BYTES   that many zero bytes
                            TYPE:V,V,...  values of TYPE: float half bfloat int uint
                                          short ushort char uchar long ulong
  --threadgroup-memory N=BYTES  threadgroup memory length at [[threadgroup(N)]]
  --texture N=TYPE:FORMAT:W[,H[,D]][:@FILE|:zeros]  a texture (one mip level) at
                          [[texture(N)]]: TYPE 1d|2d|2d_array|3d (for 2d_array D is
                          the array length), FORMAT r8unorm rg8unorm rgba8unorm
                          r16float rg16float rgba16float r32float rg32float rgba32float
                          r32sint rg32sint rgba32sint r32uint rg32uint rgba32uint;
                          FILE holds the texels row by row, tightly packed (its size
                          must be W*H*D*texel bytes); default zeros
  --sampler N=K=V,...     a sampler at [[sampler(N)]]: filter|min|mag=nearest|linear,
                          address|s|t|r=clamp_to_edge|repeat|mirrored_repeat|
                          clamp_to_zero|clamp_to_border, coord=normalized|pixel,
                          border=transparent_black|opaque_black|opaque_white,
                          compare=never|less|less_equal|greater|greater_equal|equal|
                          not_equal|always (defaults: nearest, clamp_to_edge,
                          normalized, transparent_black, never)
  --out N=FILE            write buffer N's final bytes to FILE
  --out texture:N=FILE    write texture N's final texels to FILE
  --print N[:TYPE]        print buffer N's final values, comma-separated on one line
                          (default TYPE: the kernel argument's; hex bytes for structs)
  --print texture:N[:TYPE]  print texture N's final texel components, as stored
                          (default TYPE: the format's: uchar for unorm8, half, float,
                          int or uint)
  --repeat R              dispatch R times in a row on the same buffers
  --timeout-ms MS         time limit of all dispatches (default: the server's)
  --stats                 print the compile cache hit and each dispatch's kernel time
                          to stderr
  --server ADDR           the msld server (default: $MSLD_ADDRESS, else 127.0.0.1:8980)
  --tls-ca FILE           connect over TLS, verifying the server with this CA
  --tls-cert FILE, --tls-key FILE  client certificate and key (msld --tls-client-ca)
  --token-file FILE       the token to send (default: $MSLD_TOKEN)
  --request-id ID         sent as x-request-id: msld logs it on the request's lines

Metal options (-D, -I, -include, -std=, -ffast-math, -fno-fast-math, -W...) and --constant work
as for mslc -c; headers the source includes are found and sent with it.
Exit status: 0 when the kernel ran, 1 when the compile, the request or the kernel failed.
)";
}

bool parseRunCommandLine(const std::vector<std::string>& args, const char* env_address,
                         const fs::path& cwd, RunInvocation* out, std::string* error) {
  RunInvocation inv;
  static_cast<SourceOptions&>(inv) = defaultSourceOptions(env_address);
  bool haveInput = false, haveGrid = false, haveThreadgroup = false;
  std::set<std::uint32_t> bufferIndices, textureIndices;
  for (ArgReader r(args); !r.done(); r.next()) {
    const std::string a = r.arg();
    switch (parseSourceOption(r, cwd, &inv, error)) {
      case OptionParse::kTaken: continue;
      case OptionParse::kFailed: return false;
      case OptionParse::kNotMine: break;
    }
    std::string v;
    auto take = [&](const char* flag) { return r.value(flag, true, &v, error); };
    if (a == "-h" || a == "--help") {
      inv.help = true;
    } else if (r.is("--kernel")) {
      if (!take("--kernel")) return false;
      if (v.empty()) return *error = "empty --kernel name", false;
      inv.kernel = v;
    } else if (r.is("--device")) {
      if (!take("--device")) return false;
      std::uint32_t n;
      if (v == "cpu") inv.device = "cpu";
      else if (v == "cuda") inv.device = "cuda:0";
      else if (startsWith(v, "cuda:") && v.size() > 5 &&
               std::all_of(v.begin() + 5, v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) &&
               parseU32(v.substr(5), &n))
        inv.device = "cuda:" + std::to_string(n);
      else return *error = "unknown --device '" + v + "' (expected cpu, cuda or cuda:N)", false;
    } else if (r.is("--grid") || r.is("--threadgroups")) {
      const bool threads = r.is("--grid");
      if (!take(threads ? "--grid" : "--threadgroups")) return false;
      if (haveGrid) return *error = "give the grid once: --grid X,Y,Z (threads) or --threadgroups X,Y,Z", false;
      if (!parseSize3(v, &inv.grid, error)) return *error = std::string(threads ? "--grid: " : "--threadgroups: ") + *error, false;
      inv.grid_in_threads = threads;
      haveGrid = true;
    } else if (r.is("--threadgroup")) {
      if (!take("--threadgroup")) return false;
      if (!parseSize3(v, &inv.threadgroup, error)) return *error = "--threadgroup: " + *error, false;
      haveThreadgroup = true;
    } else if (r.is("--buffer")) {
      if (!take("--buffer")) return false;
      BufferSpec spec;
      if (!parseBufferSpec(v, &spec, error)) return false;
      if (!bufferIndices.insert(spec.index).second)
        return *error = "[[buffer(" + std::to_string(spec.index) + ")]] is given twice (--buffer " + v + ")", false;
      inv.buffers.push_back(std::move(spec));
    } else if (r.is("--threadgroup-memory")) {
      if (!take("--threadgroup-memory")) return false;
      std::uint32_t index, bytes;
      std::string_view rest;
      if (!splitIndexed(v, "--threadgroup-memory", &index, &rest, error)) return false;
      if (!parseU32(rest, &bytes) || bytes == 0)
        return *error = "--threadgroup-memory " + v + ": BYTES must be a byte count of at least 1", false;
      if (!inv.threadgroup_memory.emplace(index, bytes).second)
        return *error = "[[threadgroup(" + std::to_string(index) + ")]] is given twice", false;
    } else if (r.is("--texture")) {
      if (!take("--texture")) return false;
      TextureSpec spec;
      if (!parseTextureSpec(v, &spec, error)) return false;
      if (!textureIndices.insert(spec.binding.index()).second)
        return *error = "[[texture(" + std::to_string(spec.binding.index()) + ")]] is given twice (--texture " + v +
                        ")", false;
      inv.textures.push_back(std::move(spec));
    } else if (r.is("--sampler")) {
      if (!take("--sampler")) return false;
      msl::v1::SamplerBinding s;
      if (!parseSamplerSpec(v, &s, error)) return false;
      inv.samplers.push_back(s);
    } else if (r.is("--out")) {
      if (!take("--out")) return false;
      std::uint32_t index;
      std::string_view rest;
      const bool texture = startsWith(v, "texture:");
      if (!splitIndexed(std::string_view(v).substr(texture ? 8 : 0), "--out", &index, &rest, error))
        return *error = "--out needs [texture:]N=FILE, not '" + v + "'", false;
      if (rest.empty()) return *error = "--out " + v + ": missing file name", false;
      (texture ? inv.texture_outs : inv.outs).emplace_back(index, std::string(rest));
    } else if (r.is("--print")) {
      if (!take("--print")) return false;
      RunInvocation::Print p;
      p.texture = startsWith(v, "texture:");
      std::string_view spec = std::string_view(v).substr(p.texture ? 8 : 0);
      auto colon = spec.find(':');
      if (!parseU32(spec.substr(0, colon), &p.index))
        return *error = "--print needs [texture:]N[:TYPE], with N a [[buffer(N)]] (or [[texture(N)]]) index, not '" +
                        v + "'", false;
      if (colon != std::string_view::npos) {
        p.type = parseValueType(spec.substr(colon + 1));
        if (!p.type)
          return *error = "--print " + v + ": unknown TYPE '" + std::string(spec.substr(colon + 1)) +
                          "' (float, half, bfloat, int, uint, short, ushort, char, uchar, long, ulong)", false;
      }
      inv.prints.push_back(p);
    } else if (r.is("--repeat")) {
      if (!take("--repeat")) return false;
      if (!parseU32(v, &inv.repeat) || inv.repeat == 0)
        return *error = "--repeat needs a count of at least 1, not '" + v + "'", false;
    } else if (r.is("--timeout-ms")) {
      if (!take("--timeout-ms")) return false;
      if (!parseU32(v, &inv.timeout_ms) || inv.timeout_ms == 0)
        return *error = "--timeout-ms needs milliseconds, at least 1, not '" + v + "'", false;
    } else if (a.size() > 1 && a.front() == '-') {
      *error = "unknown argument to mslc run: '" + a + "'";
      if (a == "-c" || a == "-o" || r.is("--target") || r.is("--emit"))
        *error += " (that is for mslc -c; mslc run writes buffers with --out N=FILE)";
      return false;
    } else {
      if (haveInput) return *error = "more than one input file ('" + inv.input + "', '" + a + "')", false;
      inv.input = a;
      haveInput = true;
    }
  }
  if (inv.help) {
    *out = std::move(inv);
    return true;
  }
  if (!haveInput) return *error = "no input file (mslc run FILE.metal --kernel NAME ...)", false;
  if (inv.kernel.empty()) return *error = "no kernel (--kernel NAME)", false;
  if (!haveGrid) return *error = "no grid (--grid X,Y,Z for threads or --threadgroups X,Y,Z)", false;
  if (!haveThreadgroup) return *error = "no threadgroup size (--threadgroup x,y,z)", false;
  for (const auto& [index, file] : inv.outs)
    if (!bufferIndices.count(index))
      return *error = "--out " + std::to_string(index) + "=" + file + ": no --buffer " + std::to_string(index) + "=...", false;
  for (const auto& [index, file] : inv.texture_outs)
    if (!textureIndices.count(index))
      return *error = "--out texture:" + std::to_string(index) + "=" + file + ": no --texture " +
                      std::to_string(index) + "=...", false;
  for (const auto& p : inv.prints)
    if (!(p.texture ? textureIndices : bufferIndices).count(p.index))
      return *error = std::string("--print ") + (p.texture ? "texture:" : "") + std::to_string(p.index) + ": no --" +
                      (p.texture ? "texture " : "buffer ") + std::to_string(p.index) + "=...", false;
  *out = std::move(inv);
  return true;
}

bool buildExecuteRequest(const RunInvocation& inv, const msl::v1::CompileRequest& compile,
                         const fs::path& cwd, msl::v1::ExecuteRequest* out, std::string* error) {
  msl::v1::ExecuteRequest req;
  *req.mutable_compile() = compile;
  req.set_kernel(inv.kernel);
  req.set_device(inv.device);
  auto read = [&](const std::string& file, std::string* bytes) {
    fs::path p = fs::path(file).is_absolute() ? fs::path(file) : cwd / file;
    if (!readFile(p, bytes)) {
      *error = "cannot read '" + file + "'";
      return false;
    }
    return true;
  };
  for (const auto& b : inv.buffers) {
    auto* contents = req.add_buffers();
    switch (b.kind) {
      case BufferSpec::kFile: {
        std::string bytes;
        if (!read(b.file, &bytes)) return false;
        contents->set_inline_(std::move(bytes));
        break;
      }
      case BufferSpec::kZeros: contents->set_zeros(b.zeros); break;
      case BufferSpec::kValues: contents->set_inline_(b.bytes); break;
    }
    auto* binding = req.add_buffer_bindings();
    binding->set_index(b.index);
    binding->set_buffer(static_cast<std::uint32_t>(req.buffers_size() - 1));
    binding->set_offset(0);
  }
  for (const auto& [index, bytes] : inv.threadgroup_memory) {
    auto* t = req.add_threadgroup_memory();
    t->set_index(index);
    t->set_length(bytes);
  }
  for (const auto& t : inv.textures) {
    auto* binding = req.add_textures();
    *binding = t.binding;
    if (!t.file.empty()) {
      std::string bytes;
      if (!read(t.file, &bytes)) return false;
      binding->mutable_contents()->set_inline_(std::move(bytes));
    }
  }
  for (const auto& s : inv.samplers) *req.add_samplers() = s;
  auto* d = req.mutable_dispatch();
  *(inv.grid_in_threads ? d->mutable_threads() : d->mutable_threadgroups()) = inv.grid;
  *d->mutable_threads_per_threadgroup() = inv.threadgroup;
  req.set_repeat(inv.repeat);
  req.set_timeout_ms(inv.timeout_ms);
  *out = std::move(req);
  return true;
}

msl::v1::Target targetForDevice(const std::string& device) {
  msl::v1::Target t;
  t.set_arch(startsWith(device, "cuda") ? msl::v1::Target::NVPTX64 : msl::v1::Target::X86_64);
  return t;
}

std::vector<msl::v1::ArtifactKind> outputsForDevice(const std::string& device) {
  if (startsWith(device, "cuda")) return {msl::v1::PTX, msl::v1::REFLECTION};
  return {msl::v1::LLVM_BITCODE, msl::v1::REFLECTION};
}

bool findBufferArgument(const std::string& reflection_json, const std::string& kernel,
                        std::uint32_t index, BufferArgument* out, std::string* error) {
  auto j = nlohmann::json::parse(reflection_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("functions") || !j["functions"].is_array())
    return *error = "the server's reflection is not JSON with \"functions\"", false;
  for (const auto& f : j["functions"]) {
    if (!f.is_object() || (f.value("name", "") != kernel && f.value("symbol", "") != kernel)) continue;
    if (!f.contains("arguments") || !f["arguments"].is_array()) break;
    for (const auto& a : f["arguments"]) {
      if (!a.is_object() || a.value("kind", "") != "buffer" || !a.contains("index") ||
          !a["index"].is_number_unsigned() || a["index"].get<std::uint32_t>() != index)
        continue;
      out->name = a.value("name", "");
      out->type = a.value("type", "");
      out->type_size = a.value("type_size", std::uint64_t(0));
      return true;
    }
    *error = "kernel '" + kernel + "' has no argument at [[buffer(" + std::to_string(index) + ")]]";
    return false;
  }
  *error = "the reflection has no kernel '" + kernel + "'";
  return false;
}

// --- the command ------------------------------------------------------------

int runKernel(const std::vector<std::string>& args, const char* env_address, std::ostream& out,
              std::ostream& err) {
  RunInvocation inv;
  fs::path cwd;
  LoadedSources sources;
  if (auto done = startCommand(args, env_address, out, err, parseRunCommandLine, runUsage, "mslc run --help", &inv,
                               &cwd, &sources))
    return *done;
  std::string error;

  ClientOptions copts;
  if (!makeClientOptions(inv, std::getenv(kTokenEnv), &copts, &error)) {
    err << "mslc: error: " << error << "\n";
    return 1;
  }
  // The kernel's own limit comes first; leave room for the compile and transfers.
  copts.call_deadline = std::max<std::chrono::milliseconds>(
      copts.call_deadline, std::chrono::milliseconds(inv.timeout_ms) + std::chrono::seconds(60));
  auto clientHolder = makeCommandClient(copts);
  Client& client = *clientHolder;
  auto failed = [&](const grpc::Status& s) {
    err << describeFailure(s, inv, false);
    return 1;
  };

  // Compile first, with the target and outputs the Executor compiles with:
  // diagnostics as mslc -c prints them, the reflection for --print, and the
  // Execute's compile is then an action-cache hit.
  auto compileRequest = client.prepareCompileRequest(sources.main_path, sources.main_source, sources.files,
                                                     sources.options, targetForDevice(inv.device),
                                                     outputsForDevice(inv.device), inv.function_constants);
  if (!compileRequest) return failed(compileRequest.status());
  auto compiled = client.compile(*compileRequest);
  if (!compiled) return failed(compiled.status());
  mapDiagnosticPaths(&*compiled, sources);
  err << formatDiagnostics(*compiled);
  if (!compiled->success()) return 1;

  msl::v1::ExecuteRequest request;
  if (!buildExecuteRequest(inv, *compileRequest, cwd, &request, &error)) {
    err << "mslc: error: " << error << "\n";
    return 1;
  }
  // Large buffers go through the store rather than inside the request.
  constexpr std::size_t kInlineBufferBytes = 1 << 20;
  std::vector<std::string> initial(static_cast<std::size_t>(request.buffers_size()));
  for (int i = 0; i < request.buffers_size(); ++i) {
    auto* b = request.mutable_buffers(i);
    if (b->contents_case() == msl::v1::BufferContents::kZeros) {
      initial[i].assign(b->zeros(), '\0');
    } else {
      initial[i] = b->inline_();
      if (initial[i].size() > kInlineBufferBytes) {
        auto up = client.uploadMissingBlobs({initial[i]});
        if (!up) return failed(up.status());
        *b->mutable_digest() = up->front();
      }
    }
  }
  std::map<std::uint32_t, std::string> textureBytes;  // [[texture(n)]] -> initial texels ("" for zeros)
  for (auto& t : *request.mutable_textures()) {
    std::string& bytes = textureBytes[t.index()];
    if (!t.contents().has_inline_()) continue;
    bytes = t.contents().inline_();
    if (bytes.size() > kInlineBufferBytes) {
      auto up = client.uploadMissingBlobs({bytes});
      if (!up) return failed(up.status());
      *t.mutable_contents()->mutable_digest() = up->front();
    }
  }

  auto response = client.execute(request);
  if (!response) return failed(response.status());

  if (inv.stats) {
    err << "mslc: stats: cache_hit=" << (compiled->cache_hit() ? "true" : "false")
        << " compile_time=" << (compiled->compile_time_us() / 1000.0) << " ms device=" << response->device()
        << " dispatches=" << response->dispatch_time_ns_size() << "\n";
    for (int i = 0; i < response->dispatch_time_ns_size(); ++i)
      err << "mslc: stats: dispatch " << (i + 1) << ": kernel_time=" << (response->dispatch_time_ns(i) / 1e6)
          << " ms\n";
  }

  // Each --buffer's final bytes: what the server returned, else (the kernel
  // cannot write it) what went in.
  std::vector<std::string> finalBytes = std::move(initial);
  for (auto& b : *response->mutable_buffers())
    if (b.buffer() < finalBytes.size()) finalBytes[b.buffer()] = std::move(*b.mutable_inline_data());
  std::map<std::uint32_t, std::size_t> positionOf;
  for (std::size_t i = 0; i < inv.buffers.size(); ++i) positionOf[inv.buffers[i].index] = i;

  // Each --texture's final texels likewise (zeros it went in with, if the
  // kernel cannot write it and it had no file).
  std::map<std::uint32_t, msl::v1::TextureBinding::PixelFormat> formatOf;
  for (const auto& t : request.textures()) formatOf[t.index()] = t.format();
  for (auto& t : *response->mutable_textures())
    if (textureBytes.count(t.index())) textureBytes[t.index()] = std::move(*t.mutable_inline_data());
  for (const auto& t : request.textures())
    if (std::string& bytes = textureBytes[t.index()]; bytes.empty() && !t.contents().has_inline_())
      bytes.assign(textureByteSize(t), '\0');

  int status = 0;
  auto write = [&](const std::string& file, const std::string& bytes) {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    f.close();
    if (!f) {
      err << "mslc: error: cannot write '" << file << "'\n";
      status = 1;
    }
  };
  for (const auto& [index, file] : inv.outs) write(file, finalBytes[positionOf[index]]);
  for (const auto& [index, file] : inv.texture_outs) write(file, textureBytes[index]);

  std::optional<std::string> reflection;
  for (const auto& p : inv.prints) {
    const std::string& bytes = p.texture ? textureBytes[p.index] : finalBytes[positionOf[p.index]];
    std::optional<ValueType> type = p.type;
    std::size_t elementSize = 0;
    if (!type && p.texture) type = storedTypeOf(formatOf[p.index]);
    if (!type) {
      if (!reflection) {
        reflection.emplace();
        for (const auto& a : compiled->artifacts())
          if (a.kind() == msl::v1::REFLECTION) {
            auto text = client.fetchArtifact(a);
            if (!text) return failed(text.status());
            *reflection = std::move(*text);
          }
      }
      BufferArgument arg;
      if (findBufferArgument(*reflection, inv.kernel, p.index, &arg, &error)) {
        type = elementTypeOf(arg.type);
        elementSize = arg.type_size;
      } else {
        err << "mslc: warning: --print " << p.index << ": " << error << "; printing hex bytes\n";
      }
    }
    if (type) {
      const std::size_t size = valueTypeSize(*type);
      if (bytes.size() % size)
        err << "mslc: warning: --print " << p.index << ": the buffer's last " << bytes.size() % size
            << " bytes are not a whole " << valueTypeName(*type) << "\n";
      out << formatValues(*type, bytes) << "\n";
    } else {
      out << formatHex(bytes, elementSize) << "\n";
    }
  }
  out.flush();
  return status;
}

}  // namespace msl::client::mslc
