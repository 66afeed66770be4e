#include "Textures.h"

#include "TextureHooks.h"

#include <algorithm>
#include <cstring>

namespace msl::executor {

std::optional<PixelFormat> pixelFormat(uint32_t number) {
  PixelFormat f;
  if (!pixelFormatOf(number, f))
    return std::nullopt;
  return f;
}

std::string describeTexture(const msl::internal::ExecTexture &in, TextureView &t) {
  if (in.type() < 1 || in.type() > 4)
    return "unknown texture type " + std::to_string(in.type());
  auto format = pixelFormat(in.format());
  if (!format)
    return "unknown pixel format " + std::to_string(in.format());
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
  if (in.data().size() > t.bytes())
    return "the texture's data is " + std::to_string(in.data().size()) + " bytes; it has " +
           std::to_string(t.bytes());
  return "";
}

std::string makeTexture(const msl::internal::ExecTexture &in, OwnedTexture &out) {
  TextureView &t = out.texture;
  if (std::string e = describeTexture(in, t); !e.empty())
    return e;
  const uint64_t bytes = t.bytes();
  // new char[] is aligned for any scalar: 32-bit atomics on texels are.
  out.storage.reset(new (std::nothrow) char[bytes]);
  if (!out.storage)
    return "cannot allocate " + std::to_string(bytes) + " bytes for the texture";
  std::memcpy(out.storage.get(), in.data().data(), in.data().size());
  std::memset(out.storage.get() + in.data().size(), 0, bytes - in.data().size());
  t.texels = out.storage.get();
  return "";
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

std::string describeTextureUsage(uint64_t usage, const std::string &device) {
  const auto what = TextureUsage(usage >> 56);
  const uint32_t index = uint32_t(usage >> 32) & 0xffff, value = uint32_t(usage);
  const std::string level = " mip level " + std::to_string(value) + ", but textures on the " + device +
                            " device have one level (0)";
  std::string text;
  switch (what) {
  case TextureUsage::ReadLevel:
    text = "read() of" + level;
    break;
  case TextureUsage::WriteLevel:
    text = "write() to" + level;
    break;
  case TextureUsage::SizeLevel:
    text = "the size of" + level;
    break;
  case TextureUsage::AtomicFormat:
    text = "texture atomics need an r32uint or r32sint texture";
    break;
  case TextureUsage::AtomicOp:
    text = "unknown texture atomic operation " + std::to_string(value);
    break;
  default:
    text = "misused (report " + std::to_string(usage) + ")";
  }
  return "the texture at [[texture(" + std::to_string(index) + ")]]: " + text;
}

std::vector<std::pair<const char *, void *>> textureHookSymbols() {
#define MSL_HOOK(name) {#name, reinterpret_cast<void *>(&name)}
  return {
      MSL_HOOK(__msl_texture_sample_f),  MSL_HOOK(__msl_texture_sample_u), MSL_HOOK(__msl_texture_sample_compare),
      MSL_HOOK(__msl_texture_gather_f),  MSL_HOOK(__msl_texture_gather_u), MSL_HOOK(__msl_texture_gather_compare),
      MSL_HOOK(__msl_texture_read_f),    MSL_HOOK(__msl_texture_read_u),   MSL_HOOK(__msl_texture_write_f),
      MSL_HOOK(__msl_texture_write_u),   MSL_HOOK(__msl_texture_query),    MSL_HOOK(__msl_texture_calculate_lod),
      MSL_HOOK(__msl_texture_fence),     MSL_HOOK(__msl_texture_atomic),
  };
#undef MSL_HOOK
}

} // namespace msl::executor
