#include "CpuTextures.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <mutex>

namespace msl::executor {

//===-- Formats -------------------------------------------------------------===//

std::optional<PixelFormat> pixelFormat(uint32_t number) {
  // R8_UNORM = 1 ... RGBA32_UINT = 15: five kinds of r, rg, rgba.
  if (number < 1 || number > 15)
    return std::nullopt;
  static const TexelKind kKinds[] = {TexelKind::Unorm8, TexelKind::Float16, TexelKind::Float32, TexelKind::Sint32,
                                     TexelKind::Uint32};
  static const unsigned kComponents[] = {1, 2, 4};
  PixelFormat f;
  f.kind = kKinds[(number - 1) / 3];
  f.components = kComponents[(number - 1) % 3];
  return f;
}

uint16_t floatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint16_t sign = uint16_t((x >> 16) & 0x8000);
  uint32_t a = x & 0x7fffffff;
  if (a > 0x7f800000) // NaN: quiet
    return uint16_t(sign | 0x7e00 | ((a >> 13) & 0x3ff));
  int exp = int(a >> 23) - 127;
  uint32_t mant = a & 0x7fffff;
  if (exp > 15)
    return uint16_t(sign | 0x7c00);
  if (exp >= -14) { // normal; a carry out of the mantissa rounds up to the next binade (or INF)
    uint32_t h = (uint32_t(exp + 15) << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
      ++h;
    return uint16_t(sign | h);
  }
  if (exp < -25)
    return sign;
  uint32_t m = mant | 0x800000;
  int shift = -exp - 1; // subnormal: units of 2^-24
  uint32_t h = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (h & 1)))
    ++h;
  return uint16_t(sign | h);
}

float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else if (exp == 0) {
    float m = std::ldexp(float(mant), -24);
    return sign ? -m : m;
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

Texel loadTexel(const CpuTexture &t, uint64_t texelIndex) {
  const PixelFormat &f = t.format;
  const char *p = t.texels + texelIndex * f.texelBytes();
  Texel v;
  if (f.isInteger()) {
    v.u[0] = v.u[1] = v.u[2] = 0;
    v.u[3] = 1;
    std::memcpy(v.u, p, f.components * 4);
    return v;
  }
  v.f[0] = v.f[1] = v.f[2] = 0;
  v.f[3] = 1;
  for (unsigned c = 0; c < f.components; ++c)
    switch (f.kind) {
    case TexelKind::Unorm8:
      v.f[c] = float(uint8_t(p[c])) / 255.0f;
      break;
    case TexelKind::Float16: {
      uint16_t h;
      std::memcpy(&h, p + 2 * c, 2);
      v.f[c] = halfBitsToFloat(h);
      break;
    }
    default:
      std::memcpy(&v.f[c], p + 4 * c, 4);
    }
  return v;
}

void storeTexel(const CpuTexture &t, uint64_t texelIndex, const Texel &v) {
  const PixelFormat &f = t.format;
  char *p = t.texels + texelIndex * f.texelBytes();
  if (f.isInteger()) {
    std::memcpy(p, v.u, f.components * 4);
    return;
  }
  for (unsigned c = 0; c < f.components; ++c)
    switch (f.kind) {
    case TexelKind::Unorm8: {
      float x = v.f[c] == v.f[c] ? std::clamp(v.f[c], 0.0f, 1.0f) : 0.0f;
      p[c] = char(uint8_t(std::nearbyint(x * 255.0f))); // the default rounding: to nearest even
      break;
    }
    case TexelKind::Float16: {
      uint16_t h = floatToHalfBits(v.f[c]);
      std::memcpy(p + 2 * c, &h, 2);
      break;
    }
    default:
      std::memcpy(p + 4 * c, &v.f[c], 4);
    }
}

std::string makeTexture(const msl::internal::ExecTexture &in, OwnedTexture &out) {
  if (in.type() < 1 || in.type() > 4)
    return "unknown texture type " + std::to_string(in.type());
  auto format = pixelFormat(in.format());
  if (!format)
    return "unknown pixel format " + std::to_string(in.format());
  CpuTexture &t = out.texture;
  t.type = TextureType(in.type());
  t.format = *format;
  t.index = in.index();
  t.width = in.width();
  t.height = std::max(1u, in.height());
  t.depth = std::max(1u, in.depth());
  t.layers = std::max(1u, in.array_length());
  const bool is3d = t.type == TextureType::k3D;
  const uint32_t side = is3d ? kMaxTexture3dSide : kMaxTextureSide;
  if (t.width < 1 || t.width > side || t.height > side || t.depth > kMaxTexture3dSide ||
      t.layers > kMaxTextureLayers)
    return "a texture of " + std::to_string(in.width()) + "x" + std::to_string(in.height()) + "x" +
           std::to_string(in.depth()) + " texels and " + std::to_string(in.array_length()) +
           " slices is outside the device's limits";
  if ((t.type == TextureType::k1D && t.height > 1) || (!is3d && t.depth > 1) ||
      (t.type != TextureType::k2DArray && t.layers > 1))
    return "the texture's sizes do not fit its type";
  const uint64_t bytes = t.bytes();
  if (in.data().size() > bytes)
    return "the texture's data is " + std::to_string(in.data().size()) + " bytes; it has " +
           std::to_string(bytes);
  // new char[] is aligned for any scalar: 32-bit atomics on texels are.
  out.storage.reset(new (std::nothrow) char[bytes]);
  if (!out.storage)
    return "cannot allocate " + std::to_string(bytes) + " bytes for the texture";
  std::memcpy(out.storage.get(), in.data().data(), in.data().size());
  std::memset(out.storage.get() + in.data().size(), 0, bytes - in.data().size());
  t.texels = out.storage.get();
  return "";
}

//===-- Sampler state ---------------------------------------------------------===//

// compiler/stdlib/metal_texture packs metal::sampler as:
//   bit 0 coord | bits 1-3/4-6/7-9 s/t/r address | bit 10 mag_filter
//   bit 11 min_filter | bits 12-13 mip_filter | bits 14-17 compare_func
//   bits 18-19 border_color | bits 20-24 max_anisotropy
//   bits 32-47 / 48-63 lod_clamp min / max as IEEE half bits
// with coord::normalized = 0 and each enum in its declaration order.
namespace {
uint64_t bitsAt(uint64_t v, int at, int n) { return (v >> at) & ((uint64_t(1) << n) - 1); }
} // namespace

SamplerState decodeSampler(uint64_t p) {
  SamplerState s;
  s.normalized = bitsAt(p, 0, 1) == 0;
  for (int d = 0; d < 3; ++d) {
    uint64_t mode = bitsAt(p, 1 + 3 * d, 3);
    // (Values above the enum's come only from hand-written bitcode.)
    s.address[d] = mode <= 4 ? AddressMode(mode) : AddressMode::ClampToEdge;
  }
  s.magLinear = bitsAt(p, 10, 1);
  s.minLinear = bitsAt(p, 11, 1);
  s.mipFilter = unsigned(bitsAt(p, 12, 2));
  uint64_t compare = bitsAt(p, 14, 4);
  s.compare = compare <= 8 ? CompareFunction(compare) : CompareFunction::Never;
  uint64_t border = bitsAt(p, 18, 2);
  s.border = border <= 2 ? BorderColor(border) : BorderColor::TransparentBlack;
  s.lodMin = halfBitsToFloat(uint16_t(bitsAt(p, 32, 16)));
  s.lodMax = halfBitsToFloat(uint16_t(bitsAt(p, 48, 16)));
  return s;
}

uint64_t encodeSampler(const SamplerState &s) {
  uint64_t p = s.normalized ? 0 : 1;
  for (int d = 0; d < 3; ++d)
    p |= uint64_t(s.address[d]) << (1 + 3 * d);
  p |= uint64_t(s.magLinear) << 10 | uint64_t(s.minLinear) << 11 | uint64_t(s.mipFilter & 3) << 12;
  p |= uint64_t(s.compare) << 14 | uint64_t(s.border) << 18 | uint64_t(1) << 20; // max_anisotropy 1
  p |= uint64_t(floatToHalfBits(s.lodMin)) << 32 | uint64_t(floatToHalfBits(s.lodMax)) << 48;
  return p;
}

uint64_t samplerStateOf(bool normalized, uint32_t minFilter, uint32_t magFilter, const uint32_t address[3],
                        uint32_t borderColor, uint32_t compareFunction) {
  // msl.v1.SamplerBinding.AddressMode: CLAMP_TO_EDGE, REPEAT,
  // MIRRORED_REPEAT, CLAMP_TO_ZERO, CLAMP_TO_BORDER.
  static const AddressMode kModes[] = {AddressMode::ClampToEdge, AddressMode::Repeat, AddressMode::MirroredRepeat,
                                       AddressMode::ClampToZero, AddressMode::ClampToBorder};
  SamplerState s;
  s.normalized = normalized;
  s.minLinear = minFilter == 1;
  s.magLinear = magFilter == 1;
  for (int d = 0; d < 3; ++d)
    s.address[d] = address[d] < 5 ? kModes[address[d]] : AddressMode::ClampToEdge;
  s.border = borderColor <= 2 ? BorderColor(borderColor) : BorderColor::TransparentBlack;
  // COMPARE_NEVER = 0, then LESS ... ALWAYS as the spec orders them (1-7).
  s.compare = compareFunction >= 1 && compareFunction <= 7 ? CompareFunction(compareFunction)
                                                           : CompareFunction::Never;
  return encodeSampler(s);
}

//===-- Sampling --------------------------------------------------------------===//

namespace {

unsigned dimensions(TextureType type) {
  return type == TextureType::k1D ? 1 : type == TextureType::k3D ? 3 : 2;
}

uint32_t sideOf(const CpuTexture &t, unsigned d) { return d == 0 ? t.width : d == 1 ? t.height : t.depth; }

uint64_t indexOf(const CpuTexture &t, uint64_t x, uint64_t y, uint64_t z, uint64_t layer) {
  return ((layer * t.depth + z) * t.height + y) * t.width + x;
}

int64_t positiveMod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

// A texel-space coordinate as a finite value well inside int64 (NaN as 0).
float texelSpace(float c, bool normalized, uint32_t size) {
  float u = normalized ? c * float(size) : c;
  if (!(u == u))
    return 0;
  return std::clamp(u, -1.0e9f, 1.0e9f);
}

// The texel outside the texture: zero or the border colour, then the
// format's missing components as for any texel (so clamp_to_zero on a
// format without alpha is opaque black, as Metal documents).
Texel borderTexel(const CpuTexture &t, AddressMode mode, BorderColor color) {
  float rgba[4] = {0, 0, 0, 0};
  if (mode == AddressMode::ClampToBorder && color != BorderColor::TransparentBlack) {
    float c = color == BorderColor::OpaqueWhite ? 1.0f : 0.0f;
    rgba[0] = rgba[1] = rgba[2] = c;
    rgba[3] = 1;
  }
  Texel v;
  for (unsigned c = 0; c < 4; ++c) {
    float x = c < t.format.components ? rgba[c] : c == 3 ? 1.0f : 0.0f;
    if (t.format.isInteger())
      v.u[c] = uint32_t(x);
    else
      v.f[c] = x;
  }
  return v;
}

// The texel at integer texel coordinates after the address modes.
Texel fetch(const CpuTexture &t, const SamplerState &s, const int64_t at[3], uint32_t layer) {
  int64_t where[3] = {0, 0, 0};
  for (unsigned d = 0; d < dimensions(t.type); ++d) {
    where[d] = addressTexel(s.address[d], at[d], sideOf(t, d));
    if (where[d] < 0)
      return borderTexel(t, s.address[d], s.border);
  }
  return loadTexel(t, indexOf(t, uint64_t(where[0]), uint64_t(where[1]), uint64_t(where[2]), layer));
}

// The filter footprint along each dimension: the first texel and the
// weight of the second (linear), or the one texel (nearest).
struct Footprint {
  unsigned dims = 1;
  bool linear = false;
  int64_t first[3] = {0, 0, 0};
  float frac[3] = {0, 0, 0};
  uint32_t layer = 0;
};

Footprint footprintOf(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                      bool linear) {
  Footprint fp;
  fp.dims = dimensions(t.type);
  fp.linear = linear;
  fp.layer = std::min(a.layer, t.layers - 1);
  for (unsigned d = 0; d < fp.dims; ++d) {
    float u = texelSpace(coord[d], s.normalized, sideOf(t, d));
    if (linear) {
      float shifted = u - 0.5f;
      float base = std::floor(shifted);
      fp.first[d] = int64_t(base) + a.offset[d];
      fp.frac[d] = shifted - base;
    } else {
      fp.first[d] = int64_t(std::floor(u)) + a.offset[d];
    }
  }
  return fp;
}

// Calls f(texel, weight) for each texel of the footprint.
template <class F> void forEachTexel(const CpuTexture &t, const SamplerState &s, const Footprint &fp, F f) {
  const unsigned corners = fp.linear ? 1u << fp.dims : 1u;
  for (unsigned corner = 0; corner < corners; ++corner) {
    int64_t at[3] = {fp.first[0], fp.first[1], fp.first[2]};
    float weight = 1;
    for (unsigned d = 0; fp.linear && d < fp.dims; ++d) {
      bool second = corner >> d & 1;
      at[d] += second;
      weight *= second ? fp.frac[d] : 1 - fp.frac[d];
    }
    f(fetch(t, s, at, fp.layer), weight);
  }
}

bool compares(CompareFunction fn, float reference, float texel) {
  switch (fn) {
  case CompareFunction::Less:
    return reference < texel;
  case CompareFunction::LessEqual:
    return reference <= texel;
  case CompareFunction::Greater:
    return reference > texel;
  case CompareFunction::GreaterEqual:
    return reference >= texel;
  case CompareFunction::Equal:
    return reference == texel;
  case CompareFunction::NotEqual:
    return reference != texel;
  case CompareFunction::Always:
    return true;
  default: // never (none compares nothing)
    return false;
  }
}

// Integer texels are not filtered (Metal has no linear filtering for them).
bool linearFor(const CpuTexture &t, const SamplerState &s, float lod) {
  return !t.format.isInteger() && (lod > 0 ? s.minLinear : s.magLinear);
}

} // namespace

int64_t addressTexel(AddressMode mode, int64_t i, uint32_t size) {
  const int64_t n = size;
  switch (mode) {
  case AddressMode::Repeat:
    return positiveMod(i, n);
  case AddressMode::MirroredRepeat: {
    int64_t m = positiveMod(i, 2 * n);
    return m < n ? m : 2 * n - 1 - m;
  }
  case AddressMode::ClampToZero:
  case AddressMode::ClampToBorder:
    return i >= 0 && i < n ? i : -1;
  default:
    return std::clamp<int64_t>(i, 0, n - 1);
  }
}

Texel sample(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a) {
  Footprint fp = footprintOf(t, s, coord, a, linearFor(t, s, a.lod));
  if (!fp.linear) {
    Texel out{};
    forEachTexel(t, s, fp, [&](const Texel &v, float) { out = v; });
    return out;
  }
  float sum[4] = {0, 0, 0, 0};
  forEachTexel(t, s, fp, [&](const Texel &v, float w) {
    for (int c = 0; c < 4; ++c)
      sum[c] += w * v.f[c];
  });
  Texel out;
  std::memcpy(out.f, sum, sizeof sum);
  return out;
}

float sampleCompare(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                    float reference) {
  Footprint fp = footprintOf(t, s, coord, a, linearFor(t, s, a.lod));
  float sum = 0;
  forEachTexel(t, s, fp, [&](const Texel &v, float w) { sum += compares(s.compare, reference, v.f[0]) ? w : 0; });
  return sum;
}

Texel gather(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
             unsigned component) {
  Footprint fp = footprintOf(t, s, coord, a, /*linear=*/true);
  component &= 3;
  // (i0, j1), (i1, j1), (i1, j0), (i0, j0).
  static const int kCorner[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
  Texel out;
  for (int k = 0; k < 4; ++k) {
    int64_t at[3] = {fp.first[0] + kCorner[k][0], fp.first[1] + kCorner[k][1], 0};
    out.u[k] = fetch(t, s, at, fp.layer).u[component];
  }
  return out;
}

Texel gatherCompare(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                    float reference) {
  Texel g = gather(t, s, coord, a, 0);
  for (int k = 0; k < 4; ++k)
    g.f[k] = compares(s.compare, reference, g.f[k]) ? 1.0f : 0.0f;
  return g;
}

Texel readTexel(const CpuTexture &t, const uint32_t coord[3], uint32_t layer) {
  if (coord[0] >= t.width || coord[1] >= t.height || coord[2] >= t.depth || layer >= t.layers)
    return Texel{};
  return loadTexel(t, indexOf(t, coord[0], coord[1], coord[2], layer));
}

void writeTexel(const CpuTexture &t, const Texel &v, const uint32_t coord[3], uint32_t layer) {
  if (coord[0] >= t.width || coord[1] >= t.height || coord[2] >= t.depth || layer >= t.layers)
    return;
  storeTexel(t, indexOf(t, coord[0], coord[1], coord[2], layer), v);
}

//===-- Usage errors ----------------------------------------------------------===//

namespace {
std::atomic<bool> gUsageErrorSeen{false};
std::mutex gUsageErrorMutex;
std::string gUsageError;

void recordUsageError(const CpuTexture &t, const std::string &what) {
  if (gUsageErrorSeen.exchange(true))
    return; // the first one tells
  std::lock_guard lock(gUsageErrorMutex);
  gUsageError = "the texture at [[texture(" + std::to_string(t.index) + ")]]: " + what;
}

void checkLevel(const CpuTexture &t, const char *what, uint32_t lod) {
  if (lod != 0)
    recordUsageError(t, std::string(what) + " mip level " + std::to_string(lod) +
                            ", but textures on the cpu device have one level (0)");
}
} // namespace

std::string takeTextureUsageError() {
  std::lock_guard lock(gUsageErrorMutex);
  std::string e = std::move(gUsageError);
  gUsageError.clear();
  gUsageErrorSeen = false;
  return e;
}

//===-- The hooks -------------------------------------------------------------===//

namespace {

// The stdlib's float4, uint4 and int4: 16-byte vectors, passed and returned
// in XMM registers, as Clang passes them to the extern "C" declarations.
typedef float F4 __attribute__((vector_size(16)));
typedef uint32_t U4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));

const CpuTexture *textureOf(uint64_t handle) { return reinterpret_cast<const CpuTexture *>(uintptr_t(handle)); }

F4 asF4(const Texel &v) { return F4{v.f[0], v.f[1], v.f[2], v.f[3]}; }
U4 asU4(const Texel &v) { return U4{v.u[0], v.u[1], v.u[2], v.u[3]}; }

// The level a sample's lod options select, before the one level clamps it:
// it decides between the min and mag filters. A kernel has no derivatives,
// so an implicit lod is 0 (plus any bias).
float lodOf(const CpuTexture &t, const SamplerState &s, uint32_t mode, float lod, F4 ddx, F4 ddy, float minLod) {
  float l = 0;
  if (mode == 1 || mode == 2) {
    l = lod;
  } else if (mode == 3) {
    float rho = 0;
    for (F4 g : {ddx, ddy}) {
      float sq = 0;
      for (unsigned d = 0; d < dimensions(t.type); ++d) {
        float x = g[d] * (s.normalized ? float(sideOf(t, d)) : 1.0f);
        sq += x * x;
      }
      rho = std::max(rho, std::sqrt(sq));
    }
    l = std::log2(rho);
  }
  if (!(l == l))
    l = 0;
  return std::clamp(std::max(l, minLod), s.lodMin, std::max(s.lodMin, s.lodMax));
}

void coordOf(F4 c, float out[3]) {
  out[0] = c[0];
  out[1] = c[1];
  out[2] = c[2];
}

SampleArgs argsOf(uint32_t array, I4 offset, float lod) {
  SampleArgs a;
  a.layer = array;
  for (int d = 0; d < 3; ++d)
    a.offset[d] = offset[d];
  a.lod = lod;
  return a;
}

Texel sampleHook(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t lodMode, float lod,
                 F4 ddx, F4 ddy, float minLod) {
  const CpuTexture *t = textureOf(tex);
  if (!t)
    return Texel{};
  SamplerState s = decodeSampler(smp);
  float c[3];
  coordOf(coord, c);
  return sample(*t, s, c, argsOf(array, offset, lodOf(*t, s, lodMode, lod, ddx, ddy, minLod)));
}

F4 sampleF(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t lodMode, float lod, F4 ddx,
           F4 ddy, float minLod) {
  return asF4(sampleHook(tex, smp, coord, array, offset, lodMode, lod, ddx, ddy, minLod));
}

U4 sampleU(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t lodMode, float lod, F4 ddx,
           F4 ddy, float minLod) {
  return asU4(sampleHook(tex, smp, coord, array, offset, lodMode, lod, ddx, ddy, minLod));
}

float sampleCompareHook(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, float reference,
                        uint32_t lodMode, float lod, F4 ddx, F4 ddy, float minLod) {
  const CpuTexture *t = textureOf(tex);
  if (!t)
    return 0;
  SamplerState s = decodeSampler(smp);
  float c[3];
  coordOf(coord, c);
  return sampleCompare(*t, s, c, argsOf(array, offset, lodOf(*t, s, lodMode, lod, ddx, ddy, minLod)), reference);
}

Texel gatherHook(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t component) {
  const CpuTexture *t = textureOf(tex);
  if (!t)
    return Texel{};
  float c[3];
  coordOf(coord, c);
  return gather(*t, decodeSampler(smp), c, argsOf(array, offset, 0), component);
}

F4 gatherF(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t component) {
  return asF4(gatherHook(tex, smp, coord, array, offset, component));
}

U4 gatherU(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t component) {
  return asU4(gatherHook(tex, smp, coord, array, offset, component));
}

F4 gatherCompareHook(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, float reference) {
  const CpuTexture *t = textureOf(tex);
  if (!t)
    return F4{0, 0, 0, 0};
  float c[3];
  coordOf(coord, c);
  return asF4(gatherCompare(*t, decodeSampler(smp), c, argsOf(array, offset, 0), reference));
}

Texel readHook(uint64_t tex, U4 coord, uint32_t array, uint32_t lod) {
  const CpuTexture *t = textureOf(tex);
  if (!t)
    return Texel{};
  checkLevel(*t, "read() of", lod);
  if (lod != 0)
    return Texel{};
  uint32_t c[3] = {coord[0], coord[1], coord[2]};
  return readTexel(*t, c, array);
}

F4 readF(uint64_t tex, U4 coord, uint32_t array, uint32_t lod) { return asF4(readHook(tex, coord, array, lod)); }

U4 readU(uint64_t tex, U4 coord, uint32_t array, uint32_t lod) { return asU4(readHook(tex, coord, array, lod)); }

void writeHook(uint64_t tex, const Texel &v, U4 coord, uint32_t array, uint32_t lod) {
  const CpuTexture *t = textureOf(tex);
  if (!t)
    return;
  checkLevel(*t, "write() to", lod);
  if (lod != 0)
    return;
  uint32_t c[3] = {coord[0], coord[1], coord[2]};
  writeTexel(*t, v, c, array);
}

void writeF(uint64_t tex, F4 color, U4 coord, uint32_t array, uint32_t lod) {
  Texel v;
  for (int c = 0; c < 4; ++c)
    v.f[c] = color[c];
  writeHook(tex, v, coord, array, lod);
}

void writeU(uint64_t tex, U4 color, U4 coord, uint32_t array, uint32_t lod) {
  Texel v;
  for (int c = 0; c < 4; ++c)
    v.u[c] = color[c];
  writeHook(tex, v, coord, array, lod);
}

uint32_t query(uint64_t tex, uint32_t what, uint32_t lod) {
  const CpuTexture *t = textureOf(tex);
  if (!t)
    return 0;
  switch (what) {
  case 0:
  case 1:
  case 2:
    checkLevel(*t, "the size of", lod);
    return lod ? 0 : what == 0 ? t->width : what == 1 ? t->height : t->depth;
  case 3:
    return t->layers;
  default: // mip levels, samples
    return 1;
  }
}

// No derivatives in a kernel and one level: the lod is 0.
float calculateLod(uint64_t, uint64_t, F4, uint32_t) { return 0; }

// Writes are visible to the writing thread's later reads on a CPU anyway;
// as an opaque call the fence already keeps the optimizer from moving
// texture accesses across it.
void fence(uint64_t) {}

// op: 0 load, 1 store, 2 exchange, 3 compare-exchange (operand2 expected),
// 4 add, 5 sub, 6 and, 7 or, 8 xor, 9/10 unsigned min/max, 11/12 signed.
U4 atomic(uint64_t tex, uint32_t op, U4 coord, uint32_t array, uint32_t operand, uint32_t operand2) {
  const CpuTexture *t = textureOf(tex);
  if (!t)
    return U4{0, 0, 0, 0};
  if (!t->format.isInteger() || t->format.components != 1) {
    recordUsageError(*t, "texture atomics need an r32uint or r32sint texture");
    return U4{0, 0, 0, 0};
  }
  if (coord[0] >= t->width || coord[1] >= t->height || coord[2] >= t->depth || array >= t->layers)
    return U4{0, 0, 0, 1};
  auto *p = reinterpret_cast<uint32_t *>(t->texels) + indexOf(*t, coord[0], coord[1], coord[2], array);
  std::atomic_ref<uint32_t> a(*p);
  uint32_t old = a.load(std::memory_order_relaxed);
  auto update = [&](auto f) {
    while (!a.compare_exchange_weak(old, f(old), std::memory_order_relaxed)) {
    }
  };
  switch (op) {
  case 0:
    break;
  case 1:
    a.store(operand, std::memory_order_relaxed);
    break;
  case 2:
    old = a.exchange(operand, std::memory_order_relaxed);
    break;
  case 3:
    old = operand2;
    a.compare_exchange_strong(old, operand, std::memory_order_relaxed);
    break;
  case 4:
    old = a.fetch_add(operand, std::memory_order_relaxed);
    break;
  case 5:
    old = a.fetch_sub(operand, std::memory_order_relaxed);
    break;
  case 6:
    old = a.fetch_and(operand, std::memory_order_relaxed);
    break;
  case 7:
    old = a.fetch_or(operand, std::memory_order_relaxed);
    break;
  case 8:
    old = a.fetch_xor(operand, std::memory_order_relaxed);
    break;
  case 9:
    update([&](uint32_t v) { return std::min(v, operand); });
    break;
  case 10:
    update([&](uint32_t v) { return std::max(v, operand); });
    break;
  case 11:
    update([&](uint32_t v) { return uint32_t(std::min(int32_t(v), int32_t(operand))); });
    break;
  case 12:
    update([&](uint32_t v) { return uint32_t(std::max(int32_t(v), int32_t(operand))); });
    break;
  default:
    recordUsageError(*t, "unknown texture atomic operation " + std::to_string(op));
  }
  return U4{old, 0, 0, 1};
}

} // namespace

std::vector<std::pair<const char *, void *>> textureHookSymbols() {
  return {
      {"__msl_texture_sample_f", reinterpret_cast<void *>(&sampleF)},
      {"__msl_texture_sample_u", reinterpret_cast<void *>(&sampleU)},
      {"__msl_texture_sample_compare", reinterpret_cast<void *>(&sampleCompareHook)},
      {"__msl_texture_gather_f", reinterpret_cast<void *>(&gatherF)},
      {"__msl_texture_gather_u", reinterpret_cast<void *>(&gatherU)},
      {"__msl_texture_gather_compare", reinterpret_cast<void *>(&gatherCompareHook)},
      {"__msl_texture_read_f", reinterpret_cast<void *>(&readF)},
      {"__msl_texture_read_u", reinterpret_cast<void *>(&readU)},
      {"__msl_texture_write_f", reinterpret_cast<void *>(&writeF)},
      {"__msl_texture_write_u", reinterpret_cast<void *>(&writeU)},
      {"__msl_texture_query", reinterpret_cast<void *>(&query)},
      {"__msl_texture_calculate_lod", reinterpret_cast<void *>(&calculateLod)},
      {"__msl_texture_fence", reinterpret_cast<void *>(&fence)},
      {"__msl_texture_atomic", reinterpret_cast<void *>(&atomic)},
  };
}

} // namespace msl::executor
