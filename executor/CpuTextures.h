//===- CpuTextures.h - Textures and samplers of the CPU device ------------===//
//
// The stdlib's texture functions (compiler/stdlib/metal_texture) call
// extern "C" hooks with a 64-bit handle for the texture and one for the
// sampler. On the CPU device a texture handle is the address of a
// CpuTexture the worker builds for the dispatch (0: no texture, as for an
// absent [[function_constant]] argument), and a sampler handle is the
// sampler state itself, packed as metal::sampler packs it, so argument
// samplers and constexpr samplers read alike.
//
// The hooks follow Metal: integer-coordinate reads and writes outside the
// texture read 0 and write nothing (never a fault); sampling with nearest
// and linear filtering (linear, bilinear, trilinear by dimension), every
// address mode, normalized and pixel coordinates, texel offsets; gather in
// Metal's (and GLSL's) order; 32-bit texture atomics. Textures have one
// mip level: a read, write or size query of a level above 0 is recorded as
// a usage error the dispatch then fails with (takeTextureUsageError). The
// filtering weights are exact floats (a GPU quantizes them, Apple's to 8
// bits), so results match a GPU's to about 1/256 of a texel step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/internal/exec_worker.pb.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace msl::executor {

/// msl.v1.TextureBinding.Type's numbers.
enum class TextureType : uint32_t { k1D = 1, k2D = 2, k2DArray = 3, k3D = 4 };

/// How a pixel format stores each component.
enum class TexelKind : uint8_t { Unorm8, Float16, Float32, Sint32, Uint32 };

struct PixelFormat {
  TexelKind kind = TexelKind::Float32;
  unsigned components = 4; // 1, 2 or 4 (r, rg, rgba)
  unsigned componentBytes() const {
    return kind == TexelKind::Unorm8 ? 1 : kind == TexelKind::Float16 ? 2 : 4;
  }
  unsigned texelBytes() const { return components * componentBytes(); }
  bool isInteger() const { return kind == TexelKind::Sint32 || kind == TexelKind::Uint32; }
};

/// The format of msl.v1.TextureBinding.PixelFormat `number`; nullopt for an
/// unknown one.
std::optional<PixelFormat> pixelFormat(uint32_t number);

/// Largest side, and largest depth or array length, of a CPU texture
/// (Metal's: 16384 for 1D and 2D, 2048 for 3D and arrays).
constexpr uint32_t kMaxTextureSide = 16384;
constexpr uint32_t kMaxTexture3dSide = 2048;
constexpr uint32_t kMaxTextureLayers = 2048;

/// What a texture handle points at: one mip level, texels x fastest, then
/// y, then z (3D) or the slice (arrays), tightly packed.
struct CpuTexture {
  TextureType type = TextureType::k2D;
  PixelFormat format;
  uint32_t width = 1, height = 1, depth = 1, layers = 1; // all >= 1
  uint32_t index = 0;                                    // [[texture(n)]], for messages
  char *texels = nullptr;

  uint64_t texelCount() const { return uint64_t(width) * height * depth * layers; }
  uint64_t bytes() const { return texelCount() * format.texelBytes(); }
  uint64_t handle() const { return uint64_t(reinterpret_cast<uintptr_t>(this)); }
};

/// A texture with its storage.
struct OwnedTexture {
  CpuTexture texture;
  std::unique_ptr<char[]> storage;
};

/// Builds `out` from a worker request's texture (its data zero-extended);
/// "" on success, else what is wrong with it.
std::string makeTexture(const msl::internal::ExecTexture &in, OwnedTexture &out);

/// A texel as the hooks pass it: float components for unorm and float
/// formats, 32-bit integer bits for sint and uint formats.
union Texel {
  float f[4];
  uint32_t u[4];
};

/// The texel at a texel index, converted as Metal reads it (unorm8: c/255;
/// half: exact), components the format lacks as (0, 0, 0, 1).
Texel loadTexel(const CpuTexture &t, uint64_t texelIndex);
/// Stores `v` at a texel index as Metal writes it (unorm8: saturated and
/// rounded to nearest even, NaN as 0; half: rounded to nearest even).
void storeTexel(const CpuTexture &t, uint64_t texelIndex, const Texel &v);

/// IEEE binary16 conversions (round to nearest even).
uint16_t floatToHalfBits(float f);
float halfBitsToFloat(uint16_t h);

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
  float lodMin = 0, lodMax = std::numeric_limits<float>::infinity(); // FLT_MAX packs as half INF
};

/// The packed 64-bit state (compiler/stdlib/metal_texture's layout) and back.
SamplerState decodeSampler(uint64_t packed);
uint64_t encodeSampler(const SamplerState &s);

/// The packed state of an msl.v1.SamplerBinding's fields (its enums' numbers).
uint64_t samplerStateOf(bool normalized, uint32_t minFilter, uint32_t magFilter, const uint32_t address[3],
                        uint32_t borderColor, uint32_t compareFunction);

//===-- The operations (what the hooks do) --------------------------------------===//

/// Texel index `i` of a side of `size` texels after the address mode; -1 when
/// it is outside and the border (or zero) texel is sampled instead.
int64_t addressTexel(AddressMode mode, int64_t i, uint32_t size);

/// What sample() adds to the coordinate.
struct SampleArgs {
  uint32_t layer = 0;     // arrays: the slice (clamped, as Metal does)
  int offset[3] = {0, 0, 0};
  float lod = 0;          // > 0 selects the min filter, else the mag filter
};

/// The texture's value at a float coordinate (x, y, z: as many as the type
/// has dimensions), filtered as `s` says.
Texel sample(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a);
/// The fraction of the filter footprint's texels whose comparison with
/// `reference` holds (depth textures).
float sampleCompare(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                    float reference);
/// Component `component` of the four texels bilinear filtering at `coord`
/// would use, as (i0, j1), (i1, j1), (i1, j0), (i0, j0) (2D and 2D arrays).
Texel gather(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
             unsigned component);
/// The comparison (1 or 0) of `reference` with each gathered texel.
Texel gatherCompare(const CpuTexture &t, const SamplerState &s, const float coord[3], const SampleArgs &a,
                    float reference);
/// Integer-coordinate access; outside the texture a read is 0 and a write
/// does nothing.
Texel readTexel(const CpuTexture &t, const uint32_t coord[3], uint32_t layer);
void writeTexel(const CpuTexture &t, const Texel &v, const uint32_t coord[3], uint32_t layer);

/// The hooks under the names the stdlib calls them by, for the JIT's symbol
/// table (the only texture functions a kernel can reach).
std::vector<std::pair<const char *, void *>> textureHookSymbols();

/// The first misuse the hooks saw since the last call (a mip level above
/// 0, an atomic on a format that has none), "" if none; clears it.
std::string takeTextureUsageError();

} // namespace msl::executor
