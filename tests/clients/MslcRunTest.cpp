// `mslc run`: command-line parsing, value encoding and formatting, half and
// bfloat conversion, the ExecuteRequest it builds. No server needed.
#include "msl/client/MslcRun.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

namespace fs = std::filesystem;
using namespace msl::client::mslc;
using Strings = std::vector<std::string>;

namespace {

const fs::path kCwd = "/home/u/proj";
const Strings kMinimal = {"k.metal", "--kernel", "k", "--grid", "64", "--threadgroup", "32"};

Strings with(Strings extra) {
  Strings args = kMinimal;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

RunInvocation parseOk(const Strings& args, const char* env = nullptr) {
  RunInvocation inv;
  std::string error;
  EXPECT_TRUE(parseRunCommandLine(args, env, kCwd, &inv, &error)) << error;
  return inv;
}

std::string parseError(const Strings& args) {
  RunInvocation inv;
  std::string error;
  EXPECT_FALSE(parseRunCommandLine(args, nullptr, kCwd, &inv, &error));
  return error;
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

std::string le32(std::uint32_t v) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &v, 4);
  return s;
}

std::string floatBytes(std::initializer_list<float> values) {
  std::string s;
  for (float f : values) s.append(reinterpret_cast<const char*>(&f), sizeof f);
  return s;
}

std::string encode(ValueType t, const std::string& list) {
  std::string out, error;
  EXPECT_TRUE(encodeValues(t, list, &out, &error)) << error;
  return out;
}

std::string encodeError(ValueType t, const std::string& list) {
  std::string out, error;
  EXPECT_FALSE(encodeValues(t, list, &out, &error)) << list;
  return error;
}

float floatOf(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

}  // namespace

// --- half and bfloat ---------------------------------------------------------

TEST(Half, KnownValues) {
  EXPECT_EQ(floatToHalf(0.0f), 0x0000);
  EXPECT_EQ(floatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(0.5f), 0x3800);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);       // the largest half
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF);       // below the midpoint to 65536
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00);       // the tie rounds to even: infinity
  EXPECT_EQ(floatToHalf(1e6f), 0x7C00);
  EXPECT_EQ(floatToHalf(-INFINITY), 0xFC00);
  EXPECT_EQ(floatToHalf(0.1f), 0x2E66);
  EXPECT_EQ(floatToHalf(1.0f / 3.0f), 0x3555);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -14)), 0x0400);  // the smallest normal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);  // the smallest subnormal
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and 2^-24: even
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -26)), 0x0001);  // above the tie
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002);  // 1.5 * 2^-24: tie, to even (2)
  EXPECT_EQ(floatToHalf(std::ldexp(1023.0f, -24) + std::ldexp(1.0f, -25)), 0x0400);  // rounds up to the smallest normal
  // 1 + 2^-11 is the tie between 1 and 1 + 2^-10: to even (1); 1 + 3*2^-11 to 1 + 2*2^-10.
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3C02);
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)), 0x3C01);
  std::uint16_t nan = floatToHalf(NAN);
  EXPECT_EQ(nan & 0x7C00, 0x7C00);
  EXPECT_NE(nan & 0x03FF, 0);

  EXPECT_EQ(halfToFloat(0x3C00), 1.0f);
  EXPECT_EQ(halfToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(halfToFloat(0x03FF), std::ldexp(1023.0f, -24));
  EXPECT_EQ(halfToFloat(0xC000), -2.0f);
  EXPECT_TRUE(std::signbit(halfToFloat(0x8000)));
  EXPECT_EQ(halfToFloat(0x7C00), INFINITY);
  EXPECT_TRUE(std::isnan(halfToFloat(0x7E00)));
}

TEST(Half, EveryHalfRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    float f = halfToFloat(std::uint16_t(b));
    if (std::isnan(f)) continue;
    ASSERT_EQ(floatToHalf(f), b) << std::hex << b;
  }
}

TEST(Half, RandomFloatsRoundToNearest) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-70000.0f, 70000.0f);
  for (int i = 0; i < 20000; ++i) {
    float f = dist(rng) * (i % 2 ? 1.0f : 1e-4f);
    std::uint16_t h = floatToHalf(f);
    double got = halfToFloat(h);
    if (std::isinf(got)) {
      ASSERT_GE(std::fabs(f), 65520.0f);
      continue;
    }
    // No other half is nearer.
    for (int d : {-1, 1}) {
      std::uint16_t other = std::uint16_t(h + d);
      float o = halfToFloat(other);
      if (std::isnan(o) || (h & 0x7FFF) == 0) continue;
      ASSERT_LE(std::fabs(got - f), std::fabs(double(o) - f)) << f;
    }
  }
}

TEST(BFloat, KnownValues) {
  EXPECT_EQ(floatToBFloat(1.0f), 0x3F80);
  EXPECT_EQ(floatToBFloat(-1.0f), 0xBF80);
  EXPECT_EQ(floatToBFloat(3.14159265f), 0x4049);
  EXPECT_EQ(floatToBFloat(floatOf(0x3F808000)), 0x3F80);  // 1 + 2^-8: tie, to even
  EXPECT_EQ(floatToBFloat(floatOf(0x3F818000)), 0x3F82);  // 1 + 3*2^-8: tie, to even
  EXPECT_EQ(floatToBFloat(floatOf(0x3F808001)), 0x3F81);  // above the tie
  EXPECT_EQ(floatToBFloat(std::numeric_limits<float>::max()), 0x7F80);  // rounds to infinity
  EXPECT_EQ(floatToBFloat(floatOf(0x7F7F0000)), 0x7F7F);  // the largest bfloat
  EXPECT_EQ(floatToBFloat(floatOf(0x00010000)), 0x0001);  // a subnormal
  EXPECT_EQ(floatToBFloat(floatOf(0x00008000)), 0x0000);  // tie to even
  EXPECT_EQ(floatToBFloat(floatOf(0x00018000)), 0x0002);
  EXPECT_EQ(floatToBFloat(floatOf(0x007FFFFF)), 0x0080);  // the largest subnormal float -> smallest normal bfloat
  std::uint16_t nan = floatToBFloat(floatOf(0x7FC00001));
  EXPECT_EQ(nan & 0x7F80, 0x7F80);
  EXPECT_NE(nan & 0x007F, 0);
  EXPECT_EQ(bfloatToFloat(0x4049), 3.140625f);
  EXPECT_EQ(bfloatToFloat(0xBF80), -1.0f);
}

TEST(BFloat, MatchesTruncationWithRoundingBitTrick) {
  // The usual bit trick (add 0x7FFF plus the lowest kept bit) for finite floats.
  std::mt19937 rng(11);
  for (int i = 0; i < 100000; ++i) {
    std::uint32_t b = rng();
    float f = floatOf(b);
    if (std::isnan(f)) continue;
    std::uint32_t rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16;
    ASSERT_EQ(floatToBFloat(f), std::uint16_t(rounded)) << std::hex << b;
  }
}

// --- types and values ----------------------------------------------------------

TEST(ValueTypes, NamesAndSizes) {
  const std::pair<const char*, std::size_t> kAll[] = {{"float", 4}, {"half", 2},   {"bfloat", 2}, {"int", 4},
                                                      {"uint", 4},  {"short", 2},  {"ushort", 2}, {"char", 1},
                                                      {"uchar", 1}, {"long", 8},   {"ulong", 8}};
  for (const auto& [name, size] : kAll) {
    auto t = parseValueType(name);
    ASSERT_TRUE(t) << name;
    EXPECT_EQ(valueTypeName(*t), name);
    EXPECT_EQ(valueTypeSize(*t), size) << name;
  }
  EXPECT_FALSE(parseValueType("double"));
  EXPECT_FALSE(parseValueType("float4"));
}

TEST(ValueTypes, FromReflection) {
  EXPECT_EQ(elementTypeOf("float"), ValueType::kFloat);
  EXPECT_EQ(elementTypeOf("float4"), ValueType::kFloat);
  EXPECT_EQ(elementTypeOf("packed_half3"), ValueType::kHalf);
  EXPECT_EQ(elementTypeOf("float4x4"), ValueType::kFloat);
  EXPECT_EQ(elementTypeOf("uint2"), ValueType::kUInt);
  EXPECT_EQ(elementTypeOf("atomic_uint"), ValueType::kUInt);
  EXPECT_EQ(elementTypeOf("atomic_int"), ValueType::kInt);
  EXPECT_EQ(elementTypeOf("metal::atomic<uint>"), ValueType::kUInt);
  EXPECT_EQ(elementTypeOf("const uchar"), ValueType::kUChar);
  EXPECT_EQ(elementTypeOf("uint32_t"), ValueType::kUInt);
  EXPECT_EQ(elementTypeOf("int64_t"), ValueType::kLong);
  EXPECT_EQ(elementTypeOf("bfloat2"), ValueType::kBFloat);
  EXPECT_EQ(elementTypeOf("bool"), ValueType::kUChar);
  EXPECT_FALSE(elementTypeOf("Params"));
  EXPECT_FALSE(elementTypeOf("struct Particle"));
}

TEST(EncodeValues, LittleEndianBytes) {
  EXPECT_EQ(encode(ValueType::kFloat, "1,-2.5,0x1p-3"), floatBytes({1.0f, -2.5f, 0.125f}));
  EXPECT_EQ(encode(ValueType::kFloat, "0.1"), floatBytes({0.1f}));
  EXPECT_EQ(encode(ValueType::kFloat, " 3 , 4 "), floatBytes({3.0f, 4.0f}));
  std::string inf = encode(ValueType::kFloat, "inf,-inf,nan");
  EXPECT_EQ(inf.substr(0, 8), floatBytes({INFINITY, -INFINITY}));
  EXPECT_TRUE(std::isnan(*reinterpret_cast<const float*>(inf.data() + 8)));
  EXPECT_EQ(encode(ValueType::kHalf, "1,-2,65504"), std::string("\x00\x3C\x00\xC0\xFF\x7B", 6));
  EXPECT_EQ(encode(ValueType::kBFloat, "1,3.14159265"), std::string("\x80\x3F\x49\x40", 4));
  EXPECT_EQ(encode(ValueType::kInt, "1,-1,2147483647,-2147483648"),
            le32(1) + le32(0xFFFFFFFF) + le32(0x7FFFFFFF) + le32(0x80000000));
  EXPECT_EQ(encode(ValueType::kUInt, "0,4294967295,0x10"), le32(0) + le32(0xFFFFFFFF) + le32(16));
  EXPECT_EQ(encode(ValueType::kShort, "-2,32767"), std::string("\xFE\xFF\xFF\x7F", 4));
  EXPECT_EQ(encode(ValueType::kUShort, "65535,258"), std::string("\xFF\xFF\x02\x01", 4));
  EXPECT_EQ(encode(ValueType::kChar, "-128,127,-1"), std::string("\x80\x7F\xFF", 3));
  EXPECT_EQ(encode(ValueType::kUChar, "0,255,0x7f"), std::string("\x00\xFF\x7F", 3));
  EXPECT_EQ(encode(ValueType::kLong, "-1"), std::string(8, '\xFF'));
  EXPECT_EQ(encode(ValueType::kLong, "-9223372036854775808"), std::string(7, '\0') + "\x80");
  EXPECT_EQ(encode(ValueType::kULong, "18446744073709551615"), std::string(8, '\xFF'));
  EXPECT_EQ(encode(ValueType::kULong, "0x0102030405060708"), std::string("\x08\x07\x06\x05\x04\x03\x02\x01", 8));
}

TEST(EncodeValues, BadValuesAreNamed) {
  EXPECT_CONTAINS(encodeError(ValueType::kFloat, "1,x,3"), "'x'");
  EXPECT_CONTAINS(encodeError(ValueType::kFloat, "1e39"), "out of range for float");
  EXPECT_CONTAINS(encodeError(ValueType::kHalf, "70000"), "out of range for half");
  EXPECT_CONTAINS(encodeError(ValueType::kFloat, "1,,2"), "empty value");
  EXPECT_CONTAINS(encodeError(ValueType::kFloat, ""), "empty value");
  EXPECT_CONTAINS(encodeError(ValueType::kInt, "1.5"), "not an integer");
  EXPECT_CONTAINS(encodeError(ValueType::kInt, "2147483648"), "out of range for int");
  EXPECT_CONTAINS(encodeError(ValueType::kInt, "-2147483649"), "out of range for int");
  EXPECT_CONTAINS(encodeError(ValueType::kUInt, "-1"), "unsigned");
  EXPECT_CONTAINS(encodeError(ValueType::kUInt, "4294967296"), "out of range");
  EXPECT_CONTAINS(encodeError(ValueType::kUChar, "256"), "out of range for uchar");
  EXPECT_CONTAINS(encodeError(ValueType::kChar, "128"), "out of range for char");
  EXPECT_CONTAINS(encodeError(ValueType::kULong, "18446744073709551616"), "not an integer");
  EXPECT_CONTAINS(encodeError(ValueType::kShort, "0x"), "not an integer");
}

TEST(FormatValues, EveryType) {
  EXPECT_EQ(formatValues(ValueType::kFloat, floatBytes({1.0f, -2.5f, 0.1f, 1e-10f})), "1,-2.5,0.1,1e-10");
  EXPECT_EQ(formatValues(ValueType::kFloat, floatBytes({INFINITY, -INFINITY, NAN})), "inf,-inf,nan");
  EXPECT_EQ(formatValues(ValueType::kHalf, encode(ValueType::kHalf, "0.1,1,-65504,0.333")), "0.1,1,-65504,0.333");
  EXPECT_EQ(formatValues(ValueType::kBFloat, encode(ValueType::kBFloat, "3.140625,1,-2")), "3.14,1,-2");
  EXPECT_EQ(formatValues(ValueType::kInt, le32(0xFFFFFFFF) + le32(5)), "-1,5");
  EXPECT_EQ(formatValues(ValueType::kUInt, le32(0xFFFFFFFF) + le32(5)), "4294967295,5");
  EXPECT_EQ(formatValues(ValueType::kChar, std::string("\x80\x7F", 2)), "-128,127");
  EXPECT_EQ(formatValues(ValueType::kUChar, std::string("\x80\x7F", 2)), "128,127");
  EXPECT_EQ(formatValues(ValueType::kShort, std::string("\xFE\xFF", 2)), "-2");
  EXPECT_EQ(formatValues(ValueType::kUShort, std::string("\xFE\xFF", 2)), "65534");
  EXPECT_EQ(formatValues(ValueType::kLong, std::string(8, '\xFF')), "-1");
  EXPECT_EQ(formatValues(ValueType::kULong, std::string(8, '\xFF')), "18446744073709551615");
  EXPECT_EQ(formatValues(ValueType::kUInt, le32(7) + "ab"), "7");  // a partial value is left out
  EXPECT_EQ(formatValues(ValueType::kFloat, ""), "");
}

TEST(FormatValues, RoundTripsRandomValues) {
  std::mt19937 rng(3);
  for (auto type : {ValueType::kFloat, ValueType::kHalf, ValueType::kBFloat, ValueType::kInt, ValueType::kULong,
                    ValueType::kChar}) {
    std::string bytes;
    for (int i = 0; i < 4000; ++i) bytes.push_back(static_cast<char>(rng()));
    // Keep only non-NaN values (NaN payloads need not survive).
    std::string kept;
    const std::size_t size = valueTypeSize(type);
    for (std::size_t at = 0; at + size <= bytes.size(); at += size) {
      std::string v = bytes.substr(at, size);
      bool nan = (type == ValueType::kFloat && std::isnan(*reinterpret_cast<const float*>(v.data()))) ||
                 (type == ValueType::kHalf && std::isnan(halfToFloat(*reinterpret_cast<const std::uint16_t*>(v.data())))) ||
                 (type == ValueType::kBFloat && std::isnan(bfloatToFloat(*reinterpret_cast<const std::uint16_t*>(v.data()))));
      if (!nan) kept += v;
    }
    std::string text = formatValues(type, kept);
    EXPECT_EQ(encode(type, text), kept) << valueTypeName(type);
  }
}

TEST(FormatHex, Elements) {
  EXPECT_EQ(formatHex(std::string("\x01\x02\xAB\xFF\x10", 5), 2), "0102,abff,10");
  EXPECT_EQ(formatHex(std::string("\x01\x02", 2), 0), "0102");
  EXPECT_EQ(formatHex("", 4), "");
}

// --- specs -------------------------------------------------------------------

TEST(BufferSpec, Forms) {
  BufferSpec s;
  std::string error;
  ASSERT_TRUE(parseBufferSpec("2=@data/in.bin", &s, &error)) << error;
  EXPECT_EQ(s.index, 2u);
  EXPECT_EQ(s.kind, BufferSpec::kFile);
  EXPECT_EQ(s.file, "data/in.bin");
  ASSERT_TRUE(parseBufferSpec("0=zeros:1024", &s, &error)) << error;
  EXPECT_EQ(s.kind, BufferSpec::kZeros);
  EXPECT_EQ(s.zeros, 1024u);
  ASSERT_TRUE(parseBufferSpec("30=uint:1,2", &s, &error)) << error;
  EXPECT_EQ(s.index, 30u);
  EXPECT_EQ(s.kind, BufferSpec::kValues);
  EXPECT_EQ(s.type, ValueType::kUInt);
  EXPECT_EQ(s.bytes, le32(1) + le32(2));
}

TEST(BufferSpec, BadSpecsGiveClearErrors) {
  auto bad = [](const std::string& spec) {
    BufferSpec s;
    std::string error;
    EXPECT_FALSE(parseBufferSpec(spec, &s, &error)) << spec;
    return error;
  };
  EXPECT_CONTAINS(bad("float:1,2"), "N=");
  EXPECT_CONTAINS(bad("x=float:1"), "[[buffer(N)]]");
  EXPECT_CONTAINS(bad("1=@"), "file name");
  EXPECT_CONTAINS(bad("1=zeros:"), "byte count");
  EXPECT_CONTAINS(bad("1=zeros:0"), "byte count");
  EXPECT_CONTAINS(bad("1=zeros:12x"), "byte count");
  EXPECT_CONTAINS(bad("1=double:1"), "TYPE:V,V");
  EXPECT_CONTAINS(bad("1=1,2,3"), "@FILE, zeros:BYTES or TYPE:V,V");
  EXPECT_CONTAINS(bad("1=int:1,two"), "bad int value 'two'");
  EXPECT_CONTAINS(bad("1=int:1,two"), "--buffer 1=int:1,two");
}

TEST(Size3, Parses) {
  msl::v1::Size3 s;
  std::string error;
  ASSERT_TRUE(parseSize3("1000", &s, &error));
  EXPECT_EQ(s.x(), 1000u);
  EXPECT_EQ(s.y(), 1u);
  EXPECT_EQ(s.z(), 1u);
  ASSERT_TRUE(parseSize3("4,5,6", &s, &error));
  EXPECT_EQ(s.y(), 5u);
  EXPECT_EQ(s.z(), 6u);
  for (const char* bad : {"", "0", "1,0", "1,2,3,4", "a", "-1", "1,,2", "4294967296"})
    EXPECT_FALSE(parseSize3(bad, &s, &error)) << bad;
  EXPECT_CONTAINS(error, "X[,Y[,Z]]");
}

TEST(TextureSpec, Parses) {
  TextureSpec t;
  std::string error;
  ASSERT_TRUE(parseTextureSpec("0=2d:rgba8unorm:64,32:@img.rgba", &t, &error)) << error;
  EXPECT_EQ(t.binding.index(), 0u);
  EXPECT_EQ(t.binding.type(), msl::v1::TextureBinding::TEXTURE_2D);
  EXPECT_EQ(t.binding.format(), msl::v1::TextureBinding::RGBA8_UNORM);
  EXPECT_EQ(t.binding.width(), 64u);
  EXPECT_EQ(t.binding.height(), 32u);
  EXPECT_EQ(t.binding.depth(), 1u);
  EXPECT_EQ(t.file, "img.rgba");
  ASSERT_TRUE(parseTextureSpec("3=2d_array:r32float:8,8,4", &t, &error)) << error;
  EXPECT_EQ(t.binding.array_length(), 4u);
  EXPECT_EQ(t.binding.format(), msl::v1::TextureBinding::R32_FLOAT);
  EXPECT_EQ(t.file, "");
  EXPECT_FALSE(parseTextureSpec("0=4d:r32float:8", &t, &error));
  EXPECT_CONTAINS(error, "texture type '4d'");
  EXPECT_FALSE(parseTextureSpec("0=2d:bgra8:8,8", &t, &error));
  EXPECT_CONTAINS(error, "pixel format 'bgra8'");
  EXPECT_FALSE(parseTextureSpec("0=2d:r32float", &t, &error));
  EXPECT_FALSE(parseTextureSpec("0=2d:r32float:8,8:img", &t, &error));
  ASSERT_TRUE(parseTextureSpec("1=3d:rgba16float:4,4,2:zeros", &t, &error)) << error;
  EXPECT_EQ(t.binding.depth(), 2u);
  EXPECT_EQ(t.file, "");
}

TEST(SamplerSpec, Parses) {
  msl::v1::SamplerBinding s;
  std::string error;
  ASSERT_TRUE(parseSamplerSpec("1", &s, &error)) << error;
  EXPECT_EQ(s.index(), 1u);
  EXPECT_EQ(s.min_filter(), msl::v1::SamplerBinding::NEAREST);
  EXPECT_TRUE(s.normalized_coordinates());
  ASSERT_TRUE(parseSamplerSpec("0=filter=linear,address=repeat,t=mirrored_repeat,coord=pixel", &s, &error)) << error;
  EXPECT_EQ(s.min_filter(), msl::v1::SamplerBinding::LINEAR);
  EXPECT_EQ(s.mag_filter(), msl::v1::SamplerBinding::LINEAR);
  EXPECT_EQ(s.s_address(), msl::v1::SamplerBinding::REPEAT);
  EXPECT_EQ(s.t_address(), msl::v1::SamplerBinding::MIRRORED_REPEAT);
  EXPECT_EQ(s.r_address(), msl::v1::SamplerBinding::REPEAT);
  EXPECT_FALSE(s.normalized_coordinates());
  EXPECT_FALSE(parseSamplerSpec("0=filter=cubic", &s, &error));
  EXPECT_CONTAINS(error, "'filter=cubic'");
  ASSERT_TRUE(parseSamplerSpec("2=address=clamp_to_border,border=opaque_white,compare=less_equal", &s, &error))
      << error;
  EXPECT_EQ(s.border_color(), msl::v1::SamplerBinding::OPAQUE_WHITE);
  EXPECT_EQ(s.compare_function(), msl::v1::SamplerBinding::COMPARE_LESS_EQUAL);
  EXPECT_FALSE(parseSamplerSpec("0=border=grey", &s, &error));
  EXPECT_FALSE(parseSamplerSpec("0=compare=sometimes", &s, &error));
}

// --- the command line ------------------------------------------------------------

TEST(ParseRunCommandLine, EveryFlag) {
  auto inv = parseOk({"examples/saxpy.metal", "--kernel", "saxpy", "-D", "N=4", "-Iinc", "-std=metal3.1",
                      "-fno-fast-math", "-Werror", "--constant", "scale=0.5", "--device", "cuda:1",
                      "--threadgroups", "4,2", "--threadgroup=8,4,2", "--buffer", "0=float:2",
                      "--buffer=1=@x.bin", "--buffer", "2=zeros:64", "--threadgroup-memory", "0=1024",
                      "--texture", "0=2d:rgba8unorm:4,4", "--sampler", "0=filter=linear", "--out", "2=y.bin",
                      "--print", "2", "--print", "1:half", "--repeat", "3", "--timeout-ms", "500", "--stats",
                      "--server", "h:9"});
  EXPECT_EQ(inv.input, "examples/saxpy.metal");
  EXPECT_EQ(inv.kernel, "saxpy");
  EXPECT_EQ(inv.options, (Strings{"-D", "N=4", "-I", "inc", "-std=metal3.1", "-fno-fast-math", "-Werror"}));
  EXPECT_EQ(inv.include_dirs, (Strings{"inc"}));
  EXPECT_EQ(inv.function_constants.at("scale"), "0.5");
  EXPECT_EQ(inv.device, "cuda:1");
  EXPECT_FALSE(inv.grid_in_threads);
  EXPECT_EQ(inv.grid.x(), 4u);
  EXPECT_EQ(inv.grid.y(), 2u);
  EXPECT_EQ(inv.grid.z(), 1u);
  EXPECT_EQ(inv.threadgroup.x(), 8u);
  EXPECT_EQ(inv.threadgroup.z(), 2u);
  ASSERT_EQ(inv.buffers.size(), 3u);
  EXPECT_EQ(inv.buffers[1].kind, BufferSpec::kFile);
  EXPECT_EQ(inv.buffers[2].zeros, 64u);
  EXPECT_EQ(inv.threadgroup_memory.at(0), 1024u);
  ASSERT_EQ(inv.textures.size(), 1u);
  ASSERT_EQ(inv.samplers.size(), 1u);
  ASSERT_EQ(inv.outs.size(), 1u);
  EXPECT_EQ(inv.outs[0], (std::pair<std::uint32_t, std::string>(2, "y.bin")));
  ASSERT_EQ(inv.prints.size(), 2u);
  EXPECT_FALSE(inv.prints[0].type);
  EXPECT_EQ(inv.prints[1].type, ValueType::kHalf);
  EXPECT_EQ(inv.repeat, 3u);
  EXPECT_EQ(inv.timeout_ms, 500u);
  EXPECT_TRUE(inv.stats);
  EXPECT_EQ(inv.server, "h:9");
}

TEST(ParseRunCommandLine, Defaults) {
  auto inv = parseOk(kMinimal, "env:1");
  EXPECT_EQ(inv.server, "env:1");
  EXPECT_EQ(inv.device, "cpu");
  EXPECT_TRUE(inv.grid_in_threads);
  EXPECT_EQ(inv.grid.x(), 64u);
  EXPECT_EQ(inv.repeat, 0u);
  EXPECT_EQ(inv.timeout_ms, 0u);
  EXPECT_FALSE(inv.stats);
  EXPECT_EQ(parseOk(with({"--device", "cuda"})).device, "cuda:0");
  EXPECT_EQ(parseOk(kMinimal).server, "127.0.0.1:8980");
  EXPECT_TRUE(parseOk({"--help"}).help);
  EXPECT_CONTAINS(runUsage(), "--threadgroup-memory");
}

TEST(ParseRunCommandLine, Errors) {
  EXPECT_CONTAINS(parseError({"--kernel", "k", "--grid", "1", "--threadgroup", "1"}), "no input file");
  EXPECT_CONTAINS(parseError({"k.metal", "--grid", "1", "--threadgroup", "1"}), "--kernel");
  EXPECT_CONTAINS(parseError({"k.metal", "--kernel", "k", "--threadgroup", "1"}), "no grid");
  EXPECT_CONTAINS(parseError({"k.metal", "--kernel", "k", "--grid", "1"}), "--threadgroup x,y,z");
  EXPECT_CONTAINS(parseError(with({"--threadgroups", "2"})), "give the grid once");
  EXPECT_CONTAINS(parseError(with({"--device", "gpu"})), "unknown --device 'gpu'");
  EXPECT_CONTAINS(parseError(with({"--device", "cuda:x"})), "unknown --device");
  EXPECT_CONTAINS(parseError(with({"--buffer", "0=float:1", "--buffer", "0=zeros:4"})), "given twice");
  EXPECT_CONTAINS(parseError(with({"--buffer", "0=fp32:1"})), "TYPE:V,V");
  EXPECT_CONTAINS(parseError(with({"--out", "1=x.bin"})), "no --buffer 1");
  EXPECT_CONTAINS(parseError(with({"--buffer", "1=zeros:4", "--out", "1="})), "missing file name");
  EXPECT_CONTAINS(parseError(with({"--print", "3"})), "no --buffer 3");
  EXPECT_CONTAINS(parseError(with({"--buffer", "1=zeros:4", "--print", "1:double"})), "unknown TYPE 'double'");
  EXPECT_CONTAINS(parseError(with({"--print", "x"})), "N[:TYPE]");
  EXPECT_CONTAINS(parseError(with({"--repeat", "0"})), "--repeat");
  EXPECT_CONTAINS(parseError(with({"--timeout-ms", "soon"})), "--timeout-ms");
  EXPECT_CONTAINS(parseError(with({"--threadgroup-memory", "0=0"})), "at least 1");
  EXPECT_CONTAINS(parseError(with({"--threadgroup-memory", "0=8", "--threadgroup-memory", "0=16"})), "twice");
  EXPECT_CONTAINS(parseError({"k.metal", "--kernel", "k", "--grid", "0", "--threadgroup", "1"}), "--grid: bad size '0'");
  EXPECT_CONTAINS(parseError({"k.metal", "--kernel", "k", "--grid", "1", "--threadgroup", "1,2,3,4"}), "--threadgroup: bad size");
  EXPECT_CONTAINS(parseError(with({"-o", "x"})), "--out N=FILE");
  EXPECT_CONTAINS(parseError(with({"--frobnicate"})), "unknown argument");
  EXPECT_CONTAINS(parseError(with({"other.metal"})), "more than one input file");
  EXPECT_CONTAINS(parseError(with({"--kernel"})), "missing argument");
  EXPECT_CONTAINS(parseError(with({"-D=x"})), "macro name");
  EXPECT_CONTAINS(parseError(with({"--out", "texture:2=t.bin"})), "no --texture 2");
  EXPECT_CONTAINS(parseError(with({"--print", "texture:2"})), "no --texture 2");
  EXPECT_CONTAINS(parseError(with({"--texture", "0=2d:r8unorm:4,4", "--texture", "0=1d:r8unorm:4"})),
                  "[[texture(0)]] is given twice");
}

TEST(ParseRunCommandLine, TextureOutsAndPrints) {
  auto inv = parseOk(with({"--texture", "1=2d:rgba8unorm:4,4:zeros", "--buffer", "1=zeros:4", "--out",
                           "texture:1=t.bin", "--out", "1=b.bin", "--print", "texture:1", "--print",
                           "texture:1:float", "--print", "1"}));
  ASSERT_EQ(inv.texture_outs.size(), 1u);
  EXPECT_EQ(inv.texture_outs[0], (std::pair<std::uint32_t, std::string>(1, "t.bin")));
  ASSERT_EQ(inv.outs.size(), 1u);
  EXPECT_EQ(inv.outs[0].second, "b.bin");
  ASSERT_EQ(inv.prints.size(), 3u);
  EXPECT_TRUE(inv.prints[0].texture);
  EXPECT_FALSE(inv.prints[0].type);
  EXPECT_TRUE(inv.prints[1].texture);
  EXPECT_EQ(inv.prints[1].type, ValueType::kFloat);
  EXPECT_FALSE(inv.prints[2].texture);
  EXPECT_CONTAINS(runUsage(), "--out texture:N=FILE");
}

TEST(BuildExecuteRequest, OneBufferAndBindingPerFlag) {
  fs::path dir = fs::temp_directory_path() / ("mslc_run_test_" + std::to_string(std::random_device()()));
  fs::create_directories(dir);
  std::ofstream(dir / "x.bin", std::ios::binary) << "ABCDEFGH";
  auto inv = parseOk(with({"--buffer", "3=uint:7", "--buffer", "1=@x.bin", "--buffer", "0=zeros:12",
                           "--threadgroup-memory", "0=256", "--repeat", "2", "--timeout-ms", "900"}));
  msl::v1::CompileRequest compile;
  compile.set_main_path("k.metal");
  msl::v1::ExecuteRequest req;
  std::string error;
  ASSERT_TRUE(buildExecuteRequest(inv, compile, dir, &req, &error)) << error;
  EXPECT_EQ(req.compile().main_path(), "k.metal");
  EXPECT_EQ(req.kernel(), "k");
  EXPECT_EQ(req.device(), "cpu");
  ASSERT_EQ(req.buffers_size(), 3);
  EXPECT_EQ(req.buffers(0).inline_(), le32(7));
  EXPECT_EQ(req.buffers(1).inline_(), "ABCDEFGH");
  EXPECT_EQ(req.buffers(2).zeros(), 12u);
  ASSERT_EQ(req.buffer_bindings_size(), 3);
  const std::uint32_t wantIndex[] = {3, 1, 0};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(req.buffer_bindings(i).index(), wantIndex[i]);
    EXPECT_EQ(req.buffer_bindings(i).buffer(), std::uint32_t(i));
    EXPECT_EQ(req.buffer_bindings(i).offset(), 0u);
  }
  ASSERT_EQ(req.threadgroup_memory_size(), 1);
  EXPECT_EQ(req.threadgroup_memory(0).length(), 256u);
  EXPECT_EQ(req.dispatch().grid_case(), msl::v1::Dispatch::kThreads);
  EXPECT_EQ(req.dispatch().threads().x(), 64u);
  EXPECT_EQ(req.dispatch().threads_per_threadgroup().x(), 32u);
  EXPECT_EQ(req.repeat(), 2u);
  EXPECT_EQ(req.timeout_ms(), 900u);

  auto missing = parseOk(with({"--buffer", "0=@nope.bin"}));
  EXPECT_FALSE(buildExecuteRequest(missing, compile, dir, &req, &error));
  EXPECT_CONTAINS(error, "cannot read 'nope.bin'");
  fs::remove_all(dir);
}

TEST(DeviceTargets, MatchTheExecutorsCompile) {
  EXPECT_EQ(targetForDevice("cpu").arch(), msl::v1::Target::X86_64);
  EXPECT_EQ(targetForDevice("cuda:0").arch(), msl::v1::Target::NVPTX64);
  EXPECT_EQ(outputsForDevice("cpu"), (std::vector<msl::v1::ArtifactKind>{msl::v1::LLVM_BITCODE, msl::v1::REFLECTION}));
  EXPECT_EQ(outputsForDevice("cuda:0"), (std::vector<msl::v1::ArtifactKind>{msl::v1::PTX, msl::v1::REFLECTION}));
}

TEST(FindBufferArgument, FromReflection) {
  const std::string json = R"({"functions":[{"name":"saxpy","symbol":"saxpy","stage":"kernel","arguments":[
    {"name":"a","kind":"buffer","type":"float","index":0,"type_size":4},
    {"name":"p","kind":"buffer","type":"Params","index":5,"type_size":12},
    {"name":"gid","kind":"builtin","type":"uint"}]}]})";
  BufferArgument a;
  std::string error;
  ASSERT_TRUE(findBufferArgument(json, "saxpy", 0, &a, &error)) << error;
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.type, "float");
  ASSERT_TRUE(findBufferArgument(json, "saxpy", 5, &a, &error)) << error;
  EXPECT_EQ(a.type_size, 12u);
  EXPECT_FALSE(findBufferArgument(json, "saxpy", 1, &a, &error));
  EXPECT_CONTAINS(error, "[[buffer(1)]]");
  EXPECT_FALSE(findBufferArgument(json, "other", 0, &a, &error));
  EXPECT_CONTAINS(error, "'other'");
  EXPECT_FALSE(findBufferArgument("not json", "saxpy", 0, &a, &error));
}
