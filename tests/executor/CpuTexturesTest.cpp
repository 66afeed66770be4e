// The CPU device's texture math (executor/TextureOps.h) against references
// written here a second way: address modes by tiling, filtering in double
// precision from the texel definition, gather against the bilinear weights,
// format conversions by exhaustive or neighbour checks. Inputs are random
// with fixed seeds.
#include "Textures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace msl::executor;

namespace {

uint64_t handleOf(const TextureView &t) { return uint64_t(reinterpret_cast<uintptr_t>(&t)); }

constexpr AddressMode kModes[] = {AddressMode::ClampToZero, AddressMode::ClampToEdge, AddressMode::Repeat,
                                  AddressMode::MirroredRepeat, AddressMode::ClampToBorder};

// msl.v1.TextureBinding.PixelFormat numbers.
constexpr uint32_t kR8Unorm = 1, kRGBA8Unorm = 3, kRG16Float = 5, kR32Float = 7, kRGBA32Float = 9,
                   kRG32Sint = 11, kR32Uint = 13;

// A texture with its own storage, filled with random bytes (float formats:
// random values in [0, 1)).
struct TestTexture {
  OwnedTexture owned;
  TextureView &t = owned.texture;

  TestTexture(TextureType type, uint32_t format, uint32_t w, uint32_t h, uint32_t d, uint32_t layers,
              unsigned seed) {
    msl::internal::ExecTexture in;
    in.set_type(uint32_t(type));
    in.set_format(format);
    in.set_width(w);
    in.set_height(h);
    in.set_depth(d);
    in.set_array_length(layers);
    auto f = pixelFormat(format);
    std::mt19937 rng(seed);
    std::string data(size_t(w) * h * d * layers * f->texelBytes(), '\0');
    if (f->kind == TexelKind::Float32) {
      std::uniform_real_distribution<float> dist(0, 1);
      for (size_t i = 0; i + 4 <= data.size(); i += 4) {
        float v = dist(rng);
        std::memcpy(&data[i], &v, 4);
      }
    } else {
      for (auto &c : data)
        c = char(rng());
    }
    in.set_data(data);
    std::string e = makeTexture(in, owned);
    EXPECT_EQ(e, "");
  }
};

// The reference address mode: where texel i of the infinite tiling lies.
int64_t referenceAddress(AddressMode mode, int64_t i, int64_t n) {
  int64_t tile = i >= 0 ? i / n : -((-i + n - 1) / n); // floor(i / n)
  int64_t within = i - tile * n;
  switch (mode) {
  case AddressMode::Repeat:
    return within;
  case AddressMode::MirroredRepeat:
    return tile % 2 == 0 ? within : n - 1 - within; // odd tiles run backwards
  case AddressMode::ClampToEdge:
    return i < 0 ? 0 : i >= n ? n - 1 : i;
  default:
    return i < 0 || i >= n ? -1 : i;
  }
}

// The reference value of texel (x, y, z) of `t` in double, components the
// format lacks as (0, 0, 0, 1), outside texels as sampler `s` says.
std::array<double, 4> referenceTexel(const TextureView &t, const SamplerState &s, int64_t x, int64_t y, int64_t z,
                                     uint32_t layer) {
  int64_t at[3] = {x, y, z};
  const unsigned dims = t.type == TextureType::k1D ? 1 : t.type == TextureType::k3D ? 3 : 2;
  const uint32_t sides[3] = {t.width, t.height, t.depth};
  for (unsigned d = 0; d < dims; ++d) {
    at[d] = referenceAddress(s.address[d], at[d], sides[d]);
    if (at[d] < 0) {
      double border = s.address[d] == AddressMode::ClampToBorder && s.border == BorderColor::OpaqueWhite ? 1 : 0;
      double alpha = s.address[d] == AddressMode::ClampToBorder && s.border != BorderColor::TransparentBlack ? 1 : 0;
      std::array<double, 4> v = {border, border, border, alpha};
      for (unsigned c = t.format.components; c < 4; ++c)
        v[c] = c == 3 ? 1 : 0;
      return v;
    }
  }
  uint64_t index = ((uint64_t(layer) * t.depth + at[2]) * t.height + at[1]) * t.width + at[0];
  const char *p = t.texels + index * t.format.texelBytes();
  std::array<double, 4> v = {0, 0, 0, 1};
  for (unsigned c = 0; c < t.format.components; ++c) {
    if (t.format.kind == TexelKind::Float32) {
      float f;
      std::memcpy(&f, p + 4 * c, 4);
      v[c] = f;
    } else if (t.format.kind == TexelKind::Unorm8) {
      v[c] = double(uint8_t(p[c])) / 255.0;
    }
  }
  return v;
}

// Linear filtering from its definition: the weighted texels around the
// texel-space point (u, v, w) - 0.5.
std::array<double, 4> referenceSample(const TextureView &t, const SamplerState &s, const float coord[3],
                                      bool linear, uint32_t layer) {
  const unsigned dims = t.type == TextureType::k1D ? 1 : t.type == TextureType::k3D ? 3 : 2;
  const uint32_t sides[3] = {t.width, t.height, t.depth};
  double u[3] = {0, 0, 0};
  int64_t base[3] = {0, 0, 0};
  double frac[3] = {0, 0, 0};
  for (unsigned d = 0; d < dims; ++d) {
    // (The texel-space coordinate is a float, as on a GPU.)
    u[d] = s.normalized ? double(coord[d] * float(sides[d])) : coord[d];
    double shifted = linear ? u[d] - 0.5 : u[d];
    base[d] = int64_t(std::floor(shifted));
    frac[d] = shifted - std::floor(shifted);
  }
  std::array<double, 4> sum = {0, 0, 0, 0};
  for (int dz = 0; dz <= (linear && dims > 2); ++dz)
    for (int dy = 0; dy <= (linear && dims > 1); ++dy)
      for (int dx = 0; dx <= linear; ++dx) {
        double w = 1;
        if (linear) {
          w *= dx ? frac[0] : 1 - frac[0];
          if (dims > 1)
            w *= dy ? frac[1] : 1 - frac[1];
          if (dims > 2)
            w *= dz ? frac[2] : 1 - frac[2];
        }
        auto v = referenceTexel(t, s, base[0] + dx, base[1] + dy, base[2] + dz, layer);
        for (int c = 0; c < 4; ++c)
          sum[c] += w * v[c];
      }
  return sum;
}

void expectNear(const Texel &got, const std::array<double, 4> &want, double tolerance, const std::string &what) {
  for (int c = 0; c < 4; ++c)
    ASSERT_NEAR(got.f[c], want[c], tolerance) << what << " component " << c;
}

} // namespace

TEST(TextureFormats, TheFifteenFormats) {
  const unsigned bytes[] = {1, 2, 4, 2, 4, 8, 4, 8, 16, 4, 8, 16, 4, 8, 16};
  for (uint32_t n = 1; n <= 15; ++n) {
    auto f = pixelFormat(n);
    ASSERT_TRUE(f) << n;
    EXPECT_EQ(f->texelBytes(), bytes[n - 1]) << n;
    EXPECT_EQ(f->isInteger(), n >= 10) << n;
  }
  EXPECT_FALSE(pixelFormat(0));
  EXPECT_FALSE(pixelFormat(16));
}

TEST(TextureFormats, HalfToFloatIsExactForAll65536) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = halfBitsToFloat(uint16_t(h));
    uint32_t exp = (h >> 10) & 31, mant = h & 1023;
    double sign = h & 0x8000 ? -1 : 1;
    if (exp == 31) {
      ASSERT_TRUE(mant ? std::isnan(f) : std::isinf(f)) << h;
      continue;
    }
    double want = exp == 0 ? sign * std::ldexp(double(mant), -24)
                           : sign * std::ldexp(double(mant + 1024), int(exp) - 25);
    ASSERT_EQ(double(f), want) << h;
    ASSERT_EQ(std::signbit(f), bool(h & 0x8000)) << h;
  }
}

TEST(TextureFormats, FloatToHalfRoundsToNearestEven) {
  std::mt19937 rng(11);
  for (int i = 0; i < 200000; ++i) {
    uint32_t bits = rng();
    float x;
    std::memcpy(&x, &bits, 4);
    if (i % 2) // half the values in half's range, where rounding matters
      x = std::ldexp(float(int32_t(rng() % 2000001) - 1000000), -int(rng() % 40));
    if (std::isnan(x))
      continue;
    uint16_t h = floatToHalfBits(x);
    double got = halfBitsToFloat(h);
    if (std::fabs(double(x)) >= 65520.0) { // rounds to infinity
      ASSERT_TRUE(std::isinf(got) && std::signbit(got) == std::signbit(x)) << x;
      continue;
    }
    // No neighbouring half is nearer; at a tie the even one wins.
    for (int step : {-1, 1}) {
      uint16_t n = uint16_t(h + step);
      if ((n & 0x7c00) == 0x7c00 || ((h ^ n) & 0x8000))
        continue;
      double other = halfBitsToFloat(n);
      double dGot = std::fabs(got - x), dOther = std::fabs(other - x);
      ASSERT_TRUE(dGot < dOther || (dGot == dOther && (h & 1) == 0)) << x << " -> " << got << " vs " << other;
    }
  }
}

TEST(TextureFormats, Unorm8ReadsAsCOver255AndWritesSaturatedRoundedToEven) {
  TestTexture tex(TextureType::k1D, kRGBA8Unorm, 64, 1, 1, 1, 3);
  for (uint32_t i = 0; i < 64; ++i) {
    Texel v = loadTexel(tex.t, i);
    for (int c = 0; c < 4; ++c)
      ASSERT_EQ(v.f[c], float(double(uint8_t(tex.t.texels[4 * i + c])) / 255.0)) << i;
  }
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> dist(-0.5f, 1.5f);
  for (int i = 0; i < 20000; ++i) {
    Texel v;
    for (auto &f : v.f)
      f = dist(rng);
    if (i == 0) {
      v.f[0] = 0.5f / 255; // ties: to even
      v.f[1] = 1.5f / 255;
      v.f[2] = std::nanf("");
      v.f[3] = 254.5f / 255;
    }
    storeTexel(tex.t, 0, v);
    for (int c = 0; c < 4; ++c) {
      double x = std::isnan(v.f[c]) ? 0.0 : std::min(1.0, std::max(0.0, double(v.f[c])));
      double scaled = double(float(x) * 255.0f);
      double want = std::floor(scaled);
      if (scaled - want > 0.5 || (scaled - want == 0.5 && std::fmod(want, 2) == 1))
        want += 1;
      ASSERT_EQ(double(uint8_t(tex.t.texels[c])), want) << v.f[c];
    }
  }
}

TEST(TextureFormats, MissingComponentsReadAsZeroZeroZeroOne) {
  TestTexture r8(TextureType::k2D, kR8Unorm, 4, 4, 1, 1, 1);
  Texel v = loadTexel(r8.t, 5);
  EXPECT_EQ(v.f[1], 0.0f);
  EXPECT_EQ(v.f[2], 0.0f);
  EXPECT_EQ(v.f[3], 1.0f);
  TestTexture rg16(TextureType::k2D, kRG16Float, 4, 4, 1, 1, 2);
  v = loadTexel(rg16.t, 7);
  uint16_t g;
  std::memcpy(&g, rg16.t.texels + 7 * 4 + 2, 2);
  EXPECT_TRUE(v.f[1] == halfBitsToFloat(g) || std::isnan(v.f[1]));
  EXPECT_EQ(v.f[2], 0.0f);
  EXPECT_EQ(v.f[3], 1.0f);
  TestTexture rg32i(TextureType::k2D, kRG32Sint, 4, 4, 1, 1, 3);
  v = loadTexel(rg32i.t, 3);
  uint32_t r;
  std::memcpy(&r, rg32i.t.texels + 3 * 8, 4);
  EXPECT_EQ(v.u[0], r);
  EXPECT_EQ(v.u[2], 0u);
  EXPECT_EQ(v.u[3], 1u);
}

TEST(TextureAddressing, EveryModeMatchesTheTiling) {
  for (AddressMode mode : kModes)
    for (uint32_t n : {1u, 2u, 3u, 5u, 8u})
      for (int64_t i = -40; i <= 40; ++i)
        ASSERT_EQ(addressTexel(mode, i, n), referenceAddress(mode, i, n))
            << "mode " << int(mode) << " size " << n << " texel " << i;
}

TEST(TextureSampling, NearestAndLinear2dInEveryAddressModeAndCoordinateSpace) {
  TestTexture tex(TextureType::k2D, kRGBA32Float, 7, 5, 1, 1, 21);
  TestTexture r8(TextureType::k2D, kR8Unorm, 6, 9, 1, 1, 22);
  std::mt19937 rng(23);
  std::uniform_real_distribution<float> normalized(-1.5f, 2.5f);
  for (const TextureView *t : {&tex.t, &r8.t})
    for (AddressMode s : kModes)
      for (AddressMode tm : {AddressMode::ClampToEdge, AddressMode::Repeat, AddressMode::ClampToBorder})
        for (bool linear : {false, true})
          for (bool pixel : {false, true})
            for (int k = 0; k < 200; ++k) {
              SamplerState st;
              st.address[0] = s;
              st.address[1] = tm;
              st.magLinear = st.minLinear = linear;
              st.normalized = !pixel;
              st.border = BorderColor(k % 3);
              float coord[3] = {normalized(rng), normalized(rng), 0};
              if (pixel) {
                coord[0] *= float(t->width);
                coord[1] *= float(t->height);
              }
              Texel got = sample(*t, st, coord, SampleArgs{});
              expectNear(got, referenceSample(*t, st, coord, linear, 0), 2e-6,
                         "mode " + std::to_string(int(s)) + "/" + std::to_string(int(tm)) +
                             (linear ? " linear" : " nearest") + (pixel ? " pixel" : " normalized") + " at (" +
                             std::to_string(coord[0]) + ", " + std::to_string(coord[1]) + ")");
            }
}

TEST(TextureSampling, Linear1dTrilinear3dAndArraySlices) {
  TestTexture t1(TextureType::k1D, kRGBA32Float, 13, 1, 1, 1, 31);
  TestTexture t3(TextureType::k3D, kRGBA32Float, 5, 4, 6, 1, 32);
  TestTexture ta(TextureType::k2DArray, kRGBA32Float, 4, 3, 1, 5, 33);
  std::mt19937 rng(34);
  std::uniform_real_distribution<float> dist(-0.7f, 1.7f);
  for (AddressMode mode : kModes)
    for (int k = 0; k < 300; ++k) {
      SamplerState s;
      s.address[0] = s.address[1] = s.address[2] = mode;
      s.magLinear = s.minLinear = true;
      float c[3] = {dist(rng), dist(rng), dist(rng)};
      expectNear(sample(t1.t, s, c, SampleArgs{}), referenceSample(t1.t, s, c, true, 0), 2e-6, "1d");
      expectNear(sample(t3.t, s, c, SampleArgs{}), referenceSample(t3.t, s, c, true, 0), 2e-6, "3d");
      SampleArgs a;
      a.layer = uint32_t(k % 7); // 5 and 6 clamp to the last slice
      expectNear(sample(ta.t, s, c, a), referenceSample(ta.t, s, c, true, std::min(a.layer, 4u)), 2e-6,
                 "2d array slice " + std::to_string(a.layer));
    }
}

TEST(TextureSampling, MinFilterAboveLodZeroMagFilterAtOrBelow) {
  TestTexture tex(TextureType::k2D, kRGBA32Float, 8, 8, 1, 1, 41);
  SamplerState s;
  s.magLinear = false;
  s.minLinear = true;
  float c[3] = {0.3f, 0.6f, 0};
  SampleArgs a;
  a.lod = 0;
  expectNear(sample(tex.t, s, c, a), referenceSample(tex.t, s, c, false, 0), 0, "lod 0: mag (nearest)");
  a.lod = 1.5f;
  expectNear(sample(tex.t, s, c, a), referenceSample(tex.t, s, c, true, 0), 2e-6, "lod 1.5: min (linear)");
}

TEST(TextureSampling, OffsetsMoveTheFootprintInTexels) {
  TestTexture tex(TextureType::k2D, kRGBA32Float, 9, 7, 1, 1, 43);
  std::mt19937 rng(44);
  std::uniform_real_distribution<float> dist(0, 1);
  for (int k = 0; k < 200; ++k) {
    SamplerState s;
    s.address[0] = AddressMode::Repeat;
    s.address[1] = AddressMode::MirroredRepeat;
    s.magLinear = k % 2;
    SampleArgs a;
    a.offset[0] = int(rng() % 17) - 8;
    a.offset[1] = int(rng() % 17) - 8;
    float c[3] = {dist(rng), dist(rng), 0};
    float moved[3] = {c[0] + float(a.offset[0]) / 9, c[1] + float(a.offset[1]) / 7, 0};
    expectNear(sample(tex.t, s, c, a), referenceSample(tex.t, s, moved, s.magLinear, 0), 1e-5, "offset");
  }
}

TEST(TextureSampling, IntegerTexturesAreNotFiltered) {
  TestTexture tex(TextureType::k2D, kR32Uint, 5, 5, 1, 1, 45);
  SamplerState s;
  s.magLinear = s.minLinear = true;
  float c[3] = {0.5f, 0.5f, 0}; // texel (2.5, 2.5): the center of (2, 2)
  Texel v = sample(tex.t, s, c, SampleArgs{});
  uint32_t want;
  std::memcpy(&want, tex.t.texels + (2 * 5 + 2) * 4, 4);
  EXPECT_EQ(v.u[0], want);
  EXPECT_EQ(v.u[3], 1u);
}

TEST(TextureSampling, BorderAndZeroTexelsFollowTheFormat) {
  TestTexture r32(TextureType::k2D, kR32Float, 4, 4, 1, 1, 51);
  TestTexture rgba(TextureType::k2D, kRGBA8Unorm, 4, 4, 1, 1, 52);
  SamplerState s;
  s.address[0] = s.address[1] = AddressMode::ClampToZero;
  float outside[3] = {-0.5f, 0.5f, 0};
  expectNear(sample(r32.t, s, outside, SampleArgs{}), {0, 0, 0, 1}, 0, "clamp_to_zero, no alpha: opaque black");
  expectNear(sample(rgba.t, s, outside, SampleArgs{}), {0, 0, 0, 0}, 0, "clamp_to_zero, alpha: transparent");
  s.address[0] = AddressMode::ClampToBorder;
  s.border = BorderColor::OpaqueWhite;
  expectNear(sample(r32.t, s, outside, SampleArgs{}), {1, 0, 0, 1}, 0, "opaque white on r32float");
  expectNear(sample(rgba.t, s, outside, SampleArgs{}), {1, 1, 1, 1}, 0, "opaque white on rgba8unorm");
  s.border = BorderColor::OpaqueBlack;
  expectNear(sample(rgba.t, s, outside, SampleArgs{}), {0, 0, 0, 1}, 0, "opaque black");
}

TEST(TextureGather, FourTexelsInMetalsOrderWeightedAsBilinear) {
  TestTexture tex(TextureType::k2D, kRGBA32Float, 6, 5, 1, 1, 61);
  std::mt19937 rng(62);
  std::uniform_real_distribution<float> dist(-0.4f, 1.4f);
  for (AddressMode mode : kModes)
    for (int k = 0; k < 200; ++k) {
      SamplerState s;
      s.address[0] = s.address[1] = mode;
      s.magLinear = true;
      float c[3] = {dist(rng), dist(rng), 0};
      unsigned component = unsigned(k % 4);
      Texel g = gather(tex.t, s, c, SampleArgs{}, component);
      // (i0, j1), (i1, j1), (i1, j0), (i0, j0) of the footprint at (u, v) - 0.5.
      double u = double(c[0] * 6.0f) - 0.5, v = double(c[1] * 5.0f) - 0.5;
      int64_t i0 = int64_t(std::floor(u)), j0 = int64_t(std::floor(v));
      const int64_t corner[4][2] = {{i0, j0 + 1}, {i0 + 1, j0 + 1}, {i0 + 1, j0}, {i0, j0}};
      for (int q = 0; q < 4; ++q)
        ASSERT_EQ(g.f[q], float(referenceTexel(tex.t, s, corner[q][0], corner[q][1], 0, 0)[component]))
            << "gather component " << q;
      // The same texels with the bilinear weights are the filtered sample.
      double a = u - std::floor(u), b = v - std::floor(v);
      double weighted = (1 - a) * b * g.f[0] + a * b * g.f[1] + a * (1 - b) * g.f[2] + (1 - a) * (1 - b) * g.f[3];
      ASSERT_NEAR(sample(tex.t, s, c, SampleArgs{}).f[component], weighted, 2e-6);
    }
}

TEST(TextureCompare, SampleCompareIsTheFractionThatPasses) {
  TestTexture depth(TextureType::k2D, kR32Float, 8, 8, 1, 1, 71);
  std::mt19937 rng(72);
  std::uniform_real_distribution<float> dist(0, 1);
  for (CompareFunction fn : {CompareFunction::Less, CompareFunction::GreaterEqual, CompareFunction::Always,
                             CompareFunction::Never})
    for (int k = 0; k < 100; ++k) {
      SamplerState s;
      s.magLinear = true;
      s.compare = fn;
      float c[3] = {dist(rng), dist(rng), 0};
      float ref = dist(rng);
      Texel g = gatherCompare(depth.t, s, c, SampleArgs{}, ref);
      Texel texels = gather(depth.t, s, c, SampleArgs{}, 0);
      for (int q = 0; q < 4; ++q) {
        bool pass = fn == CompareFunction::Less ? ref < texels.f[q]
                    : fn == CompareFunction::GreaterEqual ? ref >= texels.f[q]
                                                          : fn == CompareFunction::Always;
        ASSERT_EQ(g.f[q], pass ? 1.0f : 0.0f);
      }
      double u = double(c[0] * 8.0f) - 0.5, v = double(c[1] * 8.0f) - 0.5;
      double a = u - std::floor(u), b = v - std::floor(v);
      double want = (1 - a) * b * g.f[0] + a * b * g.f[1] + a * (1 - b) * g.f[2] + (1 - a) * (1 - b) * g.f[3];
      ASSERT_NEAR(sampleCompare(depth.t, s, c, SampleArgs{}, ref), want, 2e-6);
    }
}

TEST(TextureAccess, ReadsOutsideAreZeroAndWritesOutsideAreDropped) {
  TestTexture tex(TextureType::k2DArray, kRGBA8Unorm, 4, 3, 1, 2, 81);
  std::string before(tex.t.texels, tex.t.bytes());
  Texel one;
  for (auto &f : one.f)
    f = 1;
  for (auto c : {std::array<uint32_t, 4>{4, 0, 0, 0}, {0, 3, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 2}, {~0u, 0, 0, 0}}) {
    uint32_t coord[3] = {c[0], c[1], c[2]};
    Texel v = readTexel(tex.t, coord, c[3]);
    for (int k = 0; k < 4; ++k)
      EXPECT_EQ(v.u[k], 0u);
    writeTexel(tex.t, one, coord, c[3]);
  }
  EXPECT_EQ(std::string(tex.t.texels, tex.t.bytes()), before);
  uint32_t inside[3] = {3, 2, 0};
  writeTexel(tex.t, one, inside, 1);
  EXPECT_EQ(readTexel(tex.t, inside, 1).f[2], 1.0f);
  EXPECT_EQ(uint8_t(tex.t.texels[((1 * 3 + 2) * 4 + 3) * 4]), 255);
}

TEST(TextureShapes, MakeTextureRefusesWhatDoesNotFit) {
  auto make = [](uint32_t type, uint32_t format, uint32_t w, uint32_t h, uint32_t d, uint32_t layers,
                 size_t data) {
    msl::internal::ExecTexture in;
    in.set_type(type);
    in.set_format(format);
    in.set_width(w);
    in.set_height(h);
    in.set_depth(d);
    in.set_array_length(layers);
    in.set_data(std::string(data, '\1'));
    OwnedTexture out;
    return makeTexture(in, out);
  };
  EXPECT_EQ(make(2, kR32Float, 4, 4, 0, 0, 64), "");
  EXPECT_NE(make(2, kR32Float, 4, 4, 0, 0, 65), "");  // more data than texels
  EXPECT_NE(make(5, kR32Float, 4, 4, 1, 1, 0), "");   // no such type
  EXPECT_NE(make(2, 16, 4, 4, 1, 1, 0), "");          // no such format
  EXPECT_NE(make(1, kR32Float, 4, 2, 1, 1, 0), "");   // a 1D texture of height 2
  EXPECT_NE(make(2, kR32Float, 0, 4, 1, 1, 0), "");   // width 0
  EXPECT_NE(make(4, kR32Float, 4096, 1, 1, 1, 0), ""); // a 3D side above 2048
  EXPECT_NE(make(2, kR32Float, 4, 4, 1, 3, 0), "");   // slices of a 2D texture
}

TEST(SamplerState, PackedAsTheStdlibPacksIt) {
  // metal::sampler(): clamp_to_edge (1) in bits 1-3, 4-6 and 7-9,
  // compare_func::never (8) at bit 14, max_anisotropy 1 at bit 20,
  // lod_clamp(0, FLT_MAX) as half bits 0 and INF (0x7c00) at bits 32, 48.
  SamplerState d = decodeSampler(0x7c00000000120092ull);
  EXPECT_TRUE(d.normalized);
  EXPECT_EQ(d.address[0], AddressMode::ClampToEdge);
  EXPECT_EQ(d.address[2], AddressMode::ClampToEdge);
  EXPECT_FALSE(d.magLinear || d.minLinear);
  EXPECT_EQ(d.compare, CompareFunction::Never);
  EXPECT_EQ(d.lodMin, 0.0f);
  EXPECT_TRUE(std::isinf(d.lodMax));
  EXPECT_EQ(encodeSampler(d), 0x7c00000000120092ull);
  std::mt19937 rng(91);
  for (int k = 0; k < 1000; ++k) {
    SamplerState s;
    s.normalized = rng() % 2;
    for (auto &a : s.address)
      a = AddressMode(rng() % 5);
    s.magLinear = rng() % 2;
    s.minLinear = rng() % 2;
    s.compare = CompareFunction(rng() % 9);
    s.border = BorderColor(rng() % 3);
    SamplerState back = decodeSampler(encodeSampler(s));
    EXPECT_EQ(back.normalized, s.normalized);
    for (int i = 0; i < 3; ++i)
      EXPECT_EQ(back.address[i], s.address[i]);
    EXPECT_EQ(back.magLinear, s.magLinear);
    EXPECT_EQ(back.minLinear, s.minLinear);
    EXPECT_EQ(back.compare, s.compare);
    EXPECT_EQ(back.border, s.border);
  }
  // msl.v1.SamplerBinding's numbers: CLAMP_TO_EDGE 0, REPEAT 1,
  // MIRRORED_REPEAT 2, CLAMP_TO_ZERO 3, CLAMP_TO_BORDER 4; COMPARE_NEVER 0.
  const uint32_t address[3] = {3, 1, 4};
  SamplerState p = decodeSampler(samplerStateOf(false, 1, 0, address, 2, 0));
  EXPECT_FALSE(p.normalized);
  EXPECT_TRUE(p.minLinear);
  EXPECT_FALSE(p.magLinear);
  EXPECT_EQ(p.address[0], AddressMode::ClampToZero);
  EXPECT_EQ(p.address[1], AddressMode::Repeat);
  EXPECT_EQ(p.address[2], AddressMode::ClampToBorder);
  EXPECT_EQ(p.border, BorderColor::OpaqueWhite);
  EXPECT_EQ(p.compare, CompareFunction::Never);
  EXPECT_EQ(decodeSampler(samplerStateOf(true, 0, 0, address, 0, 3)).compare, CompareFunction::Greater);
}

// The hooks as compiled kernels call them (16-byte vectors in XMM registers).
namespace {
typedef float F4 __attribute__((vector_size(16)));
typedef uint32_t U4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));

template <class Fn> Fn hook(const char *name) {
  for (const auto &[n, address] : textureHookSymbols())
    if (std::string(n) == name)
      return reinterpret_cast<Fn>(address);
  ADD_FAILURE() << "no hook " << name;
  return nullptr;
}
} // namespace

TEST(TextureHooks, ReadWriteQueryAtomicsAndMipLevelErrors) {
  TestTexture tex(TextureType::k2D, kRGBA32Float, 5, 3, 1, 1, 101);
  auto read = hook<F4 (*)(uint64_t, U4, uint32_t, uint32_t)>("__msl_texture_read_f");
  auto write = hook<void (*)(uint64_t, F4, U4, uint32_t, uint32_t)>("__msl_texture_write_f");
  auto query = hook<uint32_t (*)(uint64_t, uint32_t, uint32_t)>("__msl_texture_query");
  auto sampleF = hook<F4 (*)(uint64_t, uint64_t, F4, uint32_t, I4, uint32_t, float, F4, F4, float)>(
      "__msl_texture_sample_f");
  ASSERT_TRUE(read && write && query && sampleF);
  uint64_t usage = 0;
  tex.t.usage = &usage;
  const uint64_t h = handleOf(tex.t);
  write(h, F4{0.25f, 0.5f, 0.75f, 1}, U4{4, 2, 0, 0}, 0, 0);
  F4 v = read(h, U4{4, 2, 0, 0}, 0, 0);
  EXPECT_EQ(v[0], 0.25f);
  EXPECT_EQ(v[2], 0.75f);
  EXPECT_EQ(read(h, U4{5, 0, 0, 0}, 0, 0)[3], 0.0f) << "outside";
  EXPECT_EQ(query(h, 0, 0), 5u);
  EXPECT_EQ(query(h, 1, 0), 3u);
  EXPECT_EQ(query(h, 4, 0), 1u) << "one mip level";
  EXPECT_EQ(read(0, U4{0, 0, 0, 0}, 0, 0)[0], 0.0f) << "a null handle reads 0";
  EXPECT_EQ(usage, 0u);
  // The texel (4, 2) through nearest sampling at its center, in pixels.
  SamplerState s;
  s.normalized = false;
  F4 sampled = sampleF(h, encodeSampler(s), F4{4.5f, 2.5f, 0, 0}, 0, I4{0, 0, 0, 0}, 0, 0, F4{}, F4{}, 0);
  EXPECT_EQ(sampled[1], 0.5f);
  read(h, U4{0, 0, 0, 0}, 0, 2);
  read(h, U4{0, 0, 0, 0}, 0, 3);
  std::string error = describeTextureUsage(usage, "cpu");
  EXPECT_NE(error.find("[[texture(0)]]: read() of mip level 2, but textures on the cpu device have one level"),
            std::string::npos)
      << error << " (the first report stays)";

  TestTexture counters(TextureType::k2D, kR32Uint, 2, 2, 1, 1, 102);
  auto atomic = hook<U4 (*)(uint64_t, uint32_t, U4, uint32_t, uint32_t, uint32_t)>("__msl_texture_atomic");
  ASSERT_TRUE(atomic);
  uint64_t counterUsage = 0;
  counters.t.usage = &counterUsage;
  counters.t.index = 3;
  const uint64_t c = handleOf(counters.t);
  atomic(c, 1, U4{1, 1, 0, 0}, 0, 10, 0);                      // store 10
  EXPECT_EQ(atomic(c, 4, U4{1, 1, 0, 0}, 0, 5, 0)[0], 10u);    // fetch_add 5
  EXPECT_EQ(atomic(c, 3, U4{1, 1, 0, 0}, 0, 99, 15)[0], 15u);  // compare-exchange 15 -> 99
  EXPECT_EQ(atomic(c, 10, U4{1, 1, 0, 0}, 0, 7, 0)[0], 99u);   // fetch_max: stays 99
  EXPECT_EQ(atomic(c, 0, U4{1, 1, 0, 0}, 0, 0, 0)[0], 99u);
  EXPECT_EQ(atomic(c, 4, U4{2, 0, 0, 0}, 0, 1, 0)[0], 0u) << "outside: no effect";
  EXPECT_EQ(counterUsage, 0u);
  atomic(c, 13, U4{0, 0, 0, 0}, 0, 1, 0);
  EXPECT_EQ(describeTextureUsage(counterUsage, "cuda"),
            "the texture at [[texture(3)]]: unknown texture atomic operation 13");
  usage = 0;
  atomic(h, 4, U4{0, 0, 0, 0}, 0, 1, 0);
  EXPECT_NE(describeTextureUsage(usage, "cpu").find("r32uint or r32sint"), std::string::npos);
}
