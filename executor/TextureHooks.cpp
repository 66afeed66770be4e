//===- TextureHooks.cpp - The stdlib's texture hooks, for every device ---===//
//
// compiler/stdlib/metal_texture declares these extern "C" functions; a
// kernel that uses a texture calls them with the texture's handle (the
// address of its TextureView, 0 for an absent argument) and the sampler's
// packed state. This file is compiled twice: into the CPU worker, whose JIT
// resolves the names to these definitions (Textures.h
// textureHookSymbols), and for nvptx64 into the CUDA device's texture
// library (PTX the driver links beside a kernel that calls a hook). Hence
// only TextureOps.h and TextureHooks.h: no library.
//
//===----------------------------------------------------------------------===//
#include "TextureHooks.h"
#include "TextureOps.h"

using namespace msl::executor;

namespace {

const TextureView *textureOf(uint64_t handle) { return reinterpret_cast<const TextureView *>(uintptr_t(handle)); }

F4 asF4(const Texel &v) { return F4{v.f[0], v.f[1], v.f[2], v.f[3]}; }
U4 asU4(const Texel &v) { return U4{v.u[0], v.u[1], v.u[2], v.u[3]}; }

SampleArgs argsOf(uint32_t array, I4 offset, float lod) {
  SampleArgs a;
  a.layer = array;
  for (int d = 0; d < 3; ++d)
    a.offset[d] = offset[d];
  a.lod = lod;
  return a;
}

struct Coord {
  float c[3];
  explicit Coord(F4 v) : c{v[0], v[1], v[2]} {}
};

Texel sampleHook(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t lodMode, float lod,
                 F4 ddx, F4 ddy, float minLod) {
  const TextureView *t = textureOf(tex);
  if (!t)
    return Texel{};
  SamplerState s = decodeSampler(smp);
  Coord dx(ddx), dy(ddy);
  float l = sampleLod(*t, s, lodMode, lod, dx.c, dy.c, minLod);
  return sample(*t, s, Coord(coord).c, argsOf(array, offset, l));
}

Texel gatherHook(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t component) {
  const TextureView *t = textureOf(tex);
  if (!t)
    return Texel{};
  return gather(*t, decodeSampler(smp), Coord(coord).c, argsOf(array, offset, 0), component);
}

Texel readHook(uint64_t tex, U4 coord, uint32_t array, uint32_t lod) {
  const TextureView *t = textureOf(tex);
  if (!t)
    return Texel{};
  if (lod != 0) {
    t->report(TextureUsage::ReadLevel, lod);
    return Texel{};
  }
  uint32_t c[3] = {coord[0], coord[1], coord[2]};
  return readTexel(*t, c, array);
}

void writeHook(uint64_t tex, const Texel &v, U4 coord, uint32_t array, uint32_t lod) {
  const TextureView *t = textureOf(tex);
  if (!t)
    return;
  if (lod != 0) {
    t->report(TextureUsage::WriteLevel, lod);
    return;
  }
  uint32_t c[3] = {coord[0], coord[1], coord[2]};
  writeTexel(*t, v, c, array);
}

} // namespace

extern "C" {

F4 __msl_texture_sample_f(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t lodMode,
                          float lod, F4 ddx, F4 ddy, float minLod) {
  return asF4(sampleHook(tex, smp, coord, array, offset, lodMode, lod, ddx, ddy, minLod));
}

U4 __msl_texture_sample_u(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t lodMode,
                          float lod, F4 ddx, F4 ddy, float minLod) {
  return asU4(sampleHook(tex, smp, coord, array, offset, lodMode, lod, ddx, ddy, minLod));
}

float __msl_texture_sample_compare(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset,
                                   float reference, uint32_t lodMode, float lod, F4 ddx, F4 ddy, float minLod) {
  const TextureView *t = textureOf(tex);
  if (!t)
    return 0;
  SamplerState s = decodeSampler(smp);
  Coord dx(ddx), dy(ddy);
  float l = sampleLod(*t, s, lodMode, lod, dx.c, dy.c, minLod);
  return sampleCompare(*t, s, Coord(coord).c, argsOf(array, offset, l), reference);
}

F4 __msl_texture_gather_f(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t component) {
  return asF4(gatherHook(tex, smp, coord, array, offset, component));
}

U4 __msl_texture_gather_u(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t component) {
  return asU4(gatherHook(tex, smp, coord, array, offset, component));
}

F4 __msl_texture_gather_compare(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, float reference) {
  const TextureView *t = textureOf(tex);
  if (!t)
    return F4{0, 0, 0, 0};
  return asF4(gatherCompare(*t, decodeSampler(smp), Coord(coord).c, argsOf(array, offset, 0), reference));
}

F4 __msl_texture_read_f(uint64_t tex, U4 coord, uint32_t array, uint32_t lod) {
  return asF4(readHook(tex, coord, array, lod));
}

U4 __msl_texture_read_u(uint64_t tex, U4 coord, uint32_t array, uint32_t lod) {
  return asU4(readHook(tex, coord, array, lod));
}

void __msl_texture_write_f(uint64_t tex, F4 color, U4 coord, uint32_t array, uint32_t lod) {
  Texel v;
  for (int c = 0; c < 4; ++c)
    v.f[c] = color[c];
  writeHook(tex, v, coord, array, lod);
}

void __msl_texture_write_u(uint64_t tex, U4 color, U4 coord, uint32_t array, uint32_t lod) {
  Texel v;
  for (int c = 0; c < 4; ++c)
    v.u[c] = color[c];
  writeHook(tex, v, coord, array, lod);
}

uint32_t __msl_texture_query(uint64_t tex, uint32_t what, uint32_t lod) {
  const TextureView *t = textureOf(tex);
  if (!t)
    return 0;
  switch (what) {
  case 0:
  case 1:
  case 2:
    if (lod != 0) {
      t->report(TextureUsage::SizeLevel, lod);
      return 0;
    }
    return what == 0 ? t->width : what == 1 ? t->height : t->depth;
  case 3:
    return t->layers;
  default: // mip levels, samples
    return 1;
  }
}

// No derivatives in a kernel and one level: the lod is 0.
float __msl_texture_calculate_lod(uint64_t, uint64_t, F4, uint32_t) { return 0; }

// A thread's texture writes are visible to its own later reads on both
// devices (plain memory, program order); as an opaque call the fence keeps
// the optimizer from moving texture accesses across it.
void __msl_texture_fence(uint64_t) {}

U4 __msl_texture_atomic(uint64_t tex, uint32_t op, U4 coord, uint32_t array, uint32_t operand, uint32_t operand2) {
  const TextureView *t = textureOf(tex);
  if (!t)
    return U4{0, 0, 0, 0};
  if (!t->format.isInteger() || t->format.components != 1) {
    t->report(TextureUsage::AtomicFormat, op);
    return U4{0, 0, 0, 0};
  }
  if (coord[0] >= t->width || coord[1] >= t->height || coord[2] >= t->depth || array >= t->layers)
    return U4{0, 0, 0, 1};
  auto *p = reinterpret_cast<uint32_t *>(t->texels) + texture_detail::indexOf(*t, coord[0], coord[1], coord[2], array);
  uint32_t old = 0;
  if (!textureAtomic(p, op, operand, operand2, old))
    t->report(TextureUsage::AtomicOp, op);
  return U4{old, 0, 0, 1};
}

} // extern "C"
