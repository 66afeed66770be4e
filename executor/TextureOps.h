//===- TextureOps.h - Texels, samplers and the texture hooks' work -------===//
//
// What the stdlib's texture hooks (compiler/stdlib/metal_texture) do, once
// for every device: the CPU worker compiles it with the host's compiler and
// calls it from the JIT's symbol table; the CUDA device's texture library is
// the same source compiled for nvptx64 (TextureHooks.cpp, linked by the
// driver beside a kernel whose PTX calls a hook). So this header is
// freestanding C++: <stdint.h> and compiler builtins, no library, no
// allocation, no exceptions, nothing a GPU lacks.
//
// The semantics follow Metal: integer-coordinate reads and writes outside the
// texture read 0 and write nothing (never a fault); sampling with nearest
// and linear filtering (linear, bilinear, trilinear by dimension), every
// address mode, normalized and pixel coordinates, texel offsets; gather in
// Metal's (and GLSL's) order; 32-bit texture atomics. Textures have one
// mip level: a read, write or size query of a level above 0 is a usage
// error the dispatch fails with (TextureView::usage). The filtering weights
// are exact floats (a GPU's texture unit quantizes them, Apple's to 8 bits),
// so results match a GPU's to about 1/256 of a texel step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdint.h>

namespace msl::executor {

/// msl.v1.TextureBinding.Type's numbers.
enum class TextureType : uint32_t { k1D = 1, k2D = 2, k2DArray = 3, k3D = 4 };

/// How a pixel format stores each component.
enum class TexelKind : uint8_t { Unorm8, Float16, Float32, Sint32, Uint32 };

struct PixelFormat {
  TexelKind kind = TexelKind::Float32;
  uint32_t components = 4; // 1, 2 or 4 (r, rg, rgba)
  unsigned componentBytes() const {
    return kind == TexelKind::Unorm8 ? 1 : kind == TexelKind::Float16 ? 2 : 4;
  }
  unsigned texelBytes() const { return components * componentBytes(); }
  bool isInteger() const { return kind == TexelKind::Sint32 || kind == TexelKind::Uint32; }
};

/// The format of msl.v1.TextureBinding.PixelFormat `number` (R8_UNORM = 1
/// ... RGBA32_UINT = 15: five kinds of r, rg, rgba); false for an unknown one.
inline bool pixelFormatOf(uint32_t number, PixelFormat &out) {
  if (number < 1 || number > 15)
    return false;
  const TexelKind kinds[] = {TexelKind::Unorm8, TexelKind::Float16, TexelKind::Float32, TexelKind::Sint32,
                             TexelKind::Uint32};
  const uint32_t components[] = {1, 2, 4};
  out.kind = kinds[(number - 1) / 3];
  out.components = components[(number - 1) % 3];
  return true;
}

/// A misuse the hooks report (a texture has one level; atomics need a
/// 32-bit integer texel): the first one of a dispatch is what it fails with.
enum class TextureUsage : uint32_t { None, ReadLevel, WriteLevel, SizeLevel, AtomicFormat, AtomicOp };

/// Packs a usage report into the 64-bit word TextureView::usage points at
/// (0: none): the misuse, the texture's [[texture(n)]] and a value (the
/// level, the operation).
inline uint64_t packUsage(TextureUsage what, uint32_t index, uint32_t value) {
  return uint64_t(what) << 56 | uint64_t(index & 0xffff) << 32 | value;
}

/// What a texture handle points at, on every device: one mip level, texels
/// x fastest, then y, then z (3D) or the slice (arrays), tightly packed.
/// Its layout is the same for the host and nvptx64 (both LP64): the CUDA
/// device copies it to the GPU as the host built it.
struct TextureView {
  TextureType type = TextureType::k2D;
  PixelFormat format;
  uint32_t width = 1, height = 1, depth = 1, layers = 1; // all >= 1
  uint32_t index = 0;                                    // [[texture(n)]], for messages
  char *texels = nullptr;
  uint64_t *usage = nullptr; // the dispatch's usage word (packUsage), or null

  uint64_t texelCount() const { return uint64_t(width) * height * depth * layers; }
  uint64_t bytes() const { return texelCount() * format.texelBytes(); }
  /// The first report of a dispatch stays.
  void report(TextureUsage what, uint32_t value) const {
    if (!usage)
      return;
    uint64_t none = 0;
    __atomic_compare_exchange_n(usage, &none, packUsage(what, index, value), false, __ATOMIC_RELAXED,
                                __ATOMIC_RELAXED);
  }
};
static_assert(sizeof(TextureView) == 48, "the host and the GPU share this layout");

/// A texel as the hooks pass it: float components for unorm and float
/// formats, 32-bit integer bits for sint and uint formats.
union Texel {
  float f[4];
  uint32_t u[4];
};

namespace texture_detail {
template <class T> T minOf(T a, T b) { return b < a ? b : a; }
template <class T> T maxOf(T a, T b) { return a < b ? b : a; }
template <class T> T clampTo(T v, T lo, T hi) { return v < lo ? lo : hi < v ? hi : v; }
inline float log2Of(float x) {
#if defined(__NVPTX__)
  return __nvvm_lg2_approx_f(x); // (no log2 instruction; the lod only picks a filter)
#else
  return __builtin_log2f(x);
#endif
}
} // namespace texture_detail

//===-- Texels ---------------------------------------------------------------===//

/// IEEE binary16 conversions (round to nearest even).
inline uint16_t floatToHalfBits(float f) {
  uint32_t x;
  __builtin_memcpy(&x, &f, 4);
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

inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000 | (mant << 13);
  } else if (exp == 0) {
    float m = float(mant) * 0x1p-24f; // exact: mant < 2^10
    return sign ? -m : m;
  } else {
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  }
  float f;
  __builtin_memcpy(&f, &bits, 4);
  return f;
}

/// The texel at a texel index, converted as Metal reads it (unorm8: c/255;
/// half: exact), components the format lacks as (0, 0, 0, 1).
inline Texel loadTexel(const TextureView &t, uint64_t texelIndex) {
  const PixelFormat &f = t.format;
  const char *p = t.texels + texelIndex * f.texelBytes();
  Texel v;
  if (f.isInteger()) {
    v.u[0] = v.u[1] = v.u[2] = 0;
    v.u[3] = 1;
    for (unsigned c = 0; c < f.components; ++c)
      __builtin_memcpy(&v.u[c], p + 4 * c, 4);
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
      __builtin_memcpy(&h, p + 2 * c, 2);
      v.f[c] = halfBitsToFloat(h);
      break;
    }
    default:
      __builtin_memcpy(&v.f[c], p + 4 * c, 4);
    }
  return v;
}

/// Stores `v` at a texel index as Metal writes it (unorm8: saturated and
/// rounded to nearest even, NaN as 0; half: rounded to nearest even).
inline void storeTexel(const TextureView &t, uint64_t texelIndex, const Texel &v) {
  const PixelFormat &f = t.format;
  char *p = t.texels + texelIndex * f.texelBytes();
  for (unsigned c = 0; c < f.components; ++c) {
    if (f.isInteger()) {
      __builtin_memcpy(p + 4 * c, &v.u[c], 4);
      continue;
    }
    switch (f.kind) {
    case TexelKind::Unorm8: {
      float x = v.f[c] == v.f[c] ? texture_detail::clampTo(v.f[c], 0.0f, 1.0f) : 0.0f;
      p[c] = char(uint8_t(__builtin_rintf(x * 255.0f))); // the default rounding: to nearest even
      break;
    }
    case TexelKind::Float16: {
      uint16_t h = floatToHalfBits(v.f[c]);
      __builtin_memcpy(p + 2 * c, &h, 2);
      break;
    }
    default:
      __builtin_memcpy(p + 4 * c, &v.f[c], 4);
    }
  }
}

//===-- Sampler state ---------------------------------------------------------===//

/// The spec's declaration orders (as metal::sampler encodes them).
enum class AddressMode : uint8_t { ClampToZero, ClampToEdge, Repeat, MirroredRepeat, ClampToBorder };
enum class CompareFunction : uint8_t { None, Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual, Always, Never };
enum class BorderColor : uint8_t { TransparentBlack, OpaqueBlack, OpaqueWhite };

struct SamplerState {
  bool normalized = true;
  AddressMode address[3] = {AddressMode::ClampToEdge, AddressMode::ClampToEdge, AddressMode::ClampToEdge};
  bool magLinear = false, minLinear = false;
  unsigned mipFilter = 0; // none, nearest, linear (one level: no effect)
  CompareFunction compare = CompareFunction::Never;
  BorderColor border = BorderColor::TransparentBlack;
  float lodMin = 0, lodMax = __builtin_inff(); // FLT_MAX packs as half INF
};

// compiler/stdlib/metal_texture packs metal::sampler as:
//   bit 0 coord | bits 1-3/4-6/7-9 s/t/r address | bit 10 mag_filter
//   bit 11 min_filter | bits 12-13 mip_filter | bits 14-17 compare_func
//   bits 18-19 border_color | bits 20-24 max_anisotropy
//   bits 32-47 / 48-63 lod_clamp min / max as IEEE half bits
// with coord::normalized = 0 and each enum in its declaration order.
inline uint64_t samplerBits(uint64_t v, int at, int n) { return (v >> at) & ((uint64_t(1) << n) - 1); }

/// The packed 64-bit state and back.
inline SamplerState decodeSampler(uint64_t p) {
  SamplerState s;
  s.normalized = samplerBits(p, 0, 1) == 0;
  for (int d = 0; d < 3; ++d) {
    uint64_t mode = samplerBits(p, 1 + 3 * d, 3);
    // (Values above the enum's come only from hand-written bitcode.)
    s.address[d] = mode <= 4 ? AddressMode(mode) : AddressMode::ClampToEdge;
  }
  s.magLinear = samplerBits(p, 10, 1);
  s.minLinear = samplerBits(p, 11, 1);
  s.mipFilter = unsigned(samplerBits(p, 12, 2));
  uint64_t compare = samplerBits(p, 14, 4);
  s.compare = compare <= 8 ? CompareFunction(compare) : CompareFunction::Never;
  uint64_t border = samplerBits(p, 18, 2);
  s.border = border <= 2 ? BorderColor(border) : BorderColor::TransparentBlack;
  s.lodMin = halfBitsToFloat(uint16_t(samplerBits(p, 32, 16)));
  s.lodMax = halfBitsToFloat(uint16_t(samplerBits(p, 48, 16)));
  return s;
}

inline uint64_t encodeSampler(const SamplerState &s) {
  uint64_t p = s.normalized ? 0 : 1;
  for (int d = 0; d < 3; ++d)
    p |= uint64_t(s.address[d]) << (1 + 3 * d);
  p |= uint64_t(s.magLinear) << 10 | uint64_t(s.minLinear) << 11 | uint64_t(s.mipFilter & 3) << 12;
  p |= uint64_t(s.compare) << 14 | uint64_t(s.border) << 18 | uint64_t(1) << 20; // max_anisotropy 1
  p |= uint64_t(floatToHalfBits(s.lodMin)) << 32 | uint64_t(floatToHalfBits(s.lodMax)) << 48;
  return p;
}

//===-- Sampling --------------------------------------------------------------===//

/// What sample() adds to the coordinate.
struct SampleArgs {
  uint32_t layer = 0; // arrays: the slice (clamped, as Metal does)
  int offset[3] = {0, 0, 0};
  float lod = 0; // > 0 selects the min filter, else the mag filter
};

namespace texture_detail {

inline unsigned dimensions(TextureType type) {
  return type == TextureType::k1D ? 1 : type == TextureType::k3D ? 3 : 2;
}

inline uint32_t sideOf(const TextureView &t, unsigned d) { return d == 0 ? t.width : d == 1 ? t.height : t.depth; }

inline uint64_t indexOf(const TextureView &t, uint64_t x, uint64_t y, uint64_t z, uint64_t layer) {
  return ((layer * t.depth + z) * t.height + y) * t.width + x;
}

inline int64_t positiveMod(int64_t a, int64_t n) {
  int64_t r = a % n;
  return r < 0 ? r + n : r;
}

// A texel-space coordinate as a finite value well inside int64 (NaN as 0).
inline float texelSpace(float c, bool normalized, uint32_t size) {
  float u = normalized ? c * float(size) : c;
  if (!(u == u))
    return 0;
  return clampTo(u, -1.0e9f, 1.0e9f);
}

// The texel outside the texture: zero or the border colour, then the
// format's missing components as for any texel (so clamp_to_zero on a
// format without alpha is opaque black, as Metal documents).
inline Texel borderTexel(const TextureView &t, AddressMode mode, BorderColor color) {
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

} // namespace texture_detail

/// Texel index `i` of a side of `size` texels after the address mode; -1 when
/// it is outside and the border (or zero) texel is sampled instead.
inline int64_t addressTexel(AddressMode mode, int64_t i, uint32_t size) {
  using namespace texture_detail;
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
    return clampTo<int64_t>(i, 0, n - 1);
  }
}

namespace texture_detail {

// The texel at integer texel coordinates after the address modes.
inline Texel fetch(const TextureView &t, const SamplerState &s, const int64_t at[3], uint32_t layer) {
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

inline Footprint footprintOf(const TextureView &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                             bool linear) {
  Footprint fp;
  fp.dims = dimensions(t.type);
  fp.linear = linear;
  fp.layer = minOf(a.layer, t.layers - 1);
  for (unsigned d = 0; d < fp.dims; ++d) {
    float u = texelSpace(coord[d], s.normalized, sideOf(t, d));
    if (linear) {
      float shifted = u - 0.5f;
      float base = __builtin_floorf(shifted);
      fp.first[d] = int64_t(base) + a.offset[d];
      fp.frac[d] = shifted - base;
    } else {
      fp.first[d] = int64_t(__builtin_floorf(u)) + a.offset[d];
    }
  }
  return fp;
}

// Calls f(texel, weight) for each texel of the footprint.
template <class F> void forEachTexel(const TextureView &t, const SamplerState &s, const Footprint &fp, F f) {
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

inline bool compares(CompareFunction fn, float reference, float texel) {
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
inline bool linearFor(const TextureView &t, const SamplerState &s, float lod) {
  return !t.format.isInteger() && (lod > 0 ? s.minLinear : s.magLinear);
}

} // namespace texture_detail

/// The texture's value at a float coordinate (x, y, z: as many as the type
/// has dimensions), filtered as `s` says.
inline Texel sample(const TextureView &t, const SamplerState &s, const float coord[3], const SampleArgs &a) {
  using namespace texture_detail;
  Footprint fp = footprintOf(t, s, coord, a, linearFor(t, s, a.lod));
  if (!fp.linear) {
    Texel out{};
    forEachTexel(t, s, fp, [&](const Texel &v, float) { out = v; });
    return out;
  }
  Texel out;
  for (int c = 0; c < 4; ++c)
    out.f[c] = 0;
  forEachTexel(t, s, fp, [&](const Texel &v, float w) {
    for (int c = 0; c < 4; ++c)
      out.f[c] += w * v.f[c];
  });
  return out;
}

/// The fraction of the filter footprint's texels whose comparison with
/// `reference` holds (depth textures).
inline float sampleCompare(const TextureView &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                           float reference) {
  using namespace texture_detail;
  Footprint fp = footprintOf(t, s, coord, a, linearFor(t, s, a.lod));
  float sum = 0;
  forEachTexel(t, s, fp, [&](const Texel &v, float w) { sum += compares(s.compare, reference, v.f[0]) ? w : 0; });
  return sum;
}

/// Component `component` of the four texels bilinear filtering at `coord`
/// would use, as (i0, j1), (i1, j1), (i1, j0), (i0, j0) (2D and 2D arrays).
inline Texel gather(const TextureView &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                    unsigned component) {
  using namespace texture_detail;
  Footprint fp = footprintOf(t, s, coord, a, /*linear=*/true);
  component &= 3;
  const int corner[4][2] = {{0, 1}, {1, 1}, {1, 0}, {0, 0}};
  Texel out;
  for (int k = 0; k < 4; ++k) {
    int64_t at[3] = {fp.first[0] + corner[k][0], fp.first[1] + corner[k][1], 0};
    out.u[k] = fetch(t, s, at, fp.layer).u[component];
  }
  return out;
}

/// The comparison (1 or 0) of `reference` with each gathered texel.
inline Texel gatherCompare(const TextureView &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                           float reference) {
  Texel g = gather(t, s, coord, a, 0);
  for (int k = 0; k < 4; ++k)
    g.f[k] = texture_detail::compares(s.compare, reference, g.f[k]) ? 1.0f : 0.0f;
  return g;
}

/// Integer-coordinate access; outside the texture a read is 0 and a write
/// does nothing.
inline Texel readTexel(const TextureView &t, const uint32_t coord[3], uint32_t layer) {
  if (coord[0] >= t.width || coord[1] >= t.height || coord[2] >= t.depth || layer >= t.layers)
    return Texel{};
  return loadTexel(t, texture_detail::indexOf(t, coord[0], coord[1], coord[2], layer));
}

inline void writeTexel(const TextureView &t, const Texel &v, const uint32_t coord[3], uint32_t layer) {
  if (coord[0] >= t.width || coord[1] >= t.height || coord[2] >= t.depth || layer >= t.layers)
    return;
  storeTexel(t, texture_detail::indexOf(t, coord[0], coord[1], coord[2], layer), v);
}

/// The level a sample's lod options select (lod_mode: 0 implicit, 1 bias,
/// 2 level, 3 gradient), before the one level clamps it: it decides between
/// the min and mag filters. A kernel has no derivatives, so an implicit lod
/// is 0 (plus any bias).
inline float sampleLod(const TextureView &t, const SamplerState &s, uint32_t mode, float lod, const float ddx[3],
                       const float ddy[3], float minLod) {
  using namespace texture_detail;
  float l = 0;
  if (mode == 1 || mode == 2) {
    l = lod;
  } else if (mode == 3) {
    float rho = 0;
    const float *gradients[2] = {ddx, ddy};
    for (const float *g : gradients) {
      float sq = 0;
      for (unsigned d = 0; d < dimensions(t.type); ++d) {
        float x = g[d] * (s.normalized ? float(sideOf(t, d)) : 1.0f);
        sq += x * x;
      }
      rho = maxOf(rho, __builtin_sqrtf(sq));
    }
    l = log2Of(rho);
  }
  if (!(l == l))
    l = 0;
  return clampTo(maxOf(l, minLod), s.lodMin, maxOf(s.lodMin, s.lodMax));
}

/// A 32-bit texture atomic on texel `p` (op as the stdlib numbers them: 0
/// load, 1 store, 2 exchange, 3 compare-exchange with `expected`, 4 add, 5
/// sub, 6 and, 7 or, 8 xor, 9/10 unsigned min/max, 11/12 signed); the
/// texel's previous value, or false for an unknown op.
inline bool textureAtomic(uint32_t *p, uint32_t op, uint32_t operand, uint32_t expected, uint32_t &old) {
  constexpr int relaxed = __ATOMIC_RELAXED;
  auto update = [&](auto f) {
    old = __atomic_load_n(p, relaxed);
    while (!__atomic_compare_exchange_n(p, &old, f(old), true, relaxed, relaxed)) {
    }
  };
  switch (op) {
  case 0:
    old = __atomic_load_n(p, relaxed);
    return true;
  case 1:
    old = __atomic_load_n(p, relaxed);
    __atomic_store_n(p, operand, relaxed);
    return true;
  case 2:
    old = __atomic_exchange_n(p, operand, relaxed);
    return true;
  case 3:
    old = expected;
    __atomic_compare_exchange_n(p, &old, operand, false, relaxed, relaxed);
    return true;
  case 4:
    old = __atomic_fetch_add(p, operand, relaxed);
    return true;
  case 5:
    old = __atomic_fetch_sub(p, operand, relaxed);
    return true;
  case 6:
    old = __atomic_fetch_and(p, operand, relaxed);
    return true;
  case 7:
    old = __atomic_fetch_or(p, operand, relaxed);
    return true;
  case 8:
    old = __atomic_fetch_xor(p, operand, relaxed);
    return true;
  case 9:
    update([&](uint32_t v) { return texture_detail::minOf(v, operand); });
    return true;
  case 10:
    update([&](uint32_t v) { return texture_detail::maxOf(v, operand); });
    return true;
  case 11:
    update([&](uint32_t v) { return uint32_t(texture_detail::minOf(int32_t(v), int32_t(operand))); });
    return true;
  case 12:
    update([&](uint32_t v) { return uint32_t(texture_detail::maxOf(int32_t(v), int32_t(operand))); });
    return true;
  default:
    old = 0;
    return false;
  }
}

} // namespace msl::executor
