//===- Textures.h - Textures and samplers: formats, storage, hooks --------===//
//
// The host's side of textures (TextureOps.h has what the hooks do, for
// every device). A texture handle is the address of a TextureView the
// worker builds for the dispatch (0: no texture, as for an absent
// [[function_constant]] argument), in host memory on the CPU device and in
// device memory on the CUDA device; a sampler handle is the sampler state
// itself, packed as metal::sampler packs it, so argument samplers and
// constexpr samplers read alike.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "TextureOps.h"
#include "msl/internal/exec_worker.pb.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace msl::executor {

/// The format of msl.v1.TextureBinding.PixelFormat `number`; nullopt for an
/// unknown one.
std::optional<PixelFormat> pixelFormat(uint32_t number);

/// Largest side, and largest depth or array length, of a texture (Metal's:
/// 16384 for 1D and 2D, 2048 for 3D and arrays).
constexpr uint32_t kMaxTextureSide = 16384;
constexpr uint32_t kMaxTexture3dSide = 2048;
constexpr uint32_t kMaxTextureLayers = 2048;

/// A texture with its storage in host memory.
struct OwnedTexture {
  TextureView texture;
  std::unique_ptr<char[]> storage;
};

/// Checks a worker request's texture and sets `out`'s description from it
/// (sizes at least 1); "" on success, else what is wrong with it.
std::string describeTexture(const msl::internal::ExecTexture &in, TextureView &out);

/// Builds `out` from a worker request's texture (its data zero-extended);
/// "" on success, else what is wrong with it.
std::string makeTexture(const msl::internal::ExecTexture &in, OwnedTexture &out);

/// The packed state of an msl.v1.SamplerBinding's fields (its enums' numbers).
uint64_t samplerStateOf(bool normalized, uint32_t minFilter, uint32_t magFilter, const uint32_t address[3],
                        uint32_t borderColor, uint32_t compareFunction);

/// What a dispatch's usage word (packUsage; not 0) says, for its error:
/// "the texture at [[texture(n)]]: ..." on device `device` ("cpu", "cuda").
std::string describeTextureUsage(uint64_t usage, const std::string &device);

/// The hooks (TextureHooks.cpp) under the names the stdlib calls them by,
/// for the JIT's symbol table (the only texture functions a kernel can
/// reach).
std::vector<std::pair<const char *, void *>> textureHookSymbols();

} // namespace msl::executor
