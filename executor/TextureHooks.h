//===- TextureHooks.h - The stdlib's texture hooks' declarations ----------===//
//
// The extern "C" functions compiler/stdlib/metal_texture calls, with the
// stdlib's signatures (TextureHooks.cpp defines them; freestanding, as
// TextureOps.h, since it is compiled for nvptx64 too).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdint.h>

namespace msl::executor::hook_types {
// The stdlib's float4, uint4 and int4: 16-byte vectors, as Clang passes
// them to the extern "C" declarations (XMM registers on x86-64, .b8[16]
// params on nvptx64).
typedef float F4 __attribute__((vector_size(16)));
typedef uint32_t U4 __attribute__((vector_size(16)));
typedef int32_t I4 __attribute__((vector_size(16)));
} // namespace msl::executor::hook_types

extern "C" {
using msl::executor::hook_types::F4;
using msl::executor::hook_types::I4;
using msl::executor::hook_types::U4;

// lod_mode: 0 implicit, 1 bias, 2 level, 3 gradient.
F4 __msl_texture_sample_f(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t lodMode,
                          float lod, F4 ddx, F4 ddy, float minLod);
U4 __msl_texture_sample_u(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t lodMode,
                          float lod, F4 ddx, F4 ddy, float minLod);
float __msl_texture_sample_compare(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset,
                                   float reference, uint32_t lodMode, float lod, F4 ddx, F4 ddy, float minLod);
F4 __msl_texture_gather_f(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t component);
U4 __msl_texture_gather_u(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, uint32_t component);
F4 __msl_texture_gather_compare(uint64_t tex, uint64_t smp, F4 coord, uint32_t array, I4 offset, float reference);
F4 __msl_texture_read_f(uint64_t tex, U4 coord, uint32_t array, uint32_t lod);
U4 __msl_texture_read_u(uint64_t tex, U4 coord, uint32_t array, uint32_t lod);
void __msl_texture_write_f(uint64_t tex, F4 color, U4 coord, uint32_t array, uint32_t lod);
void __msl_texture_write_u(uint64_t tex, U4 color, U4 coord, uint32_t array, uint32_t lod);
// what: 0 width, 1 height, 2 depth, 3 array size, 4 mip levels, 5 samples.
uint32_t __msl_texture_query(uint64_t tex, uint32_t what, uint32_t lod);
float __msl_texture_calculate_lod(uint64_t tex, uint64_t smp, F4 coord, uint32_t clamped);
void __msl_texture_fence(uint64_t tex);
// op as TextureOps.h textureAtomic numbers them; the previous texel.
U4 __msl_texture_atomic(uint64_t tex, uint32_t op, U4 coord, uint32_t array, uint32_t operand, uint32_t operand2);
}
