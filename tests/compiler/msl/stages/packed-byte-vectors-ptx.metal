// On NVPTX a char vector claims only the alignment its address proves
// (compiler/NvptxTuning.h): a uchar3 read through a reinterpret_cast at a
// 3-byte stride (packed 3-bit weights, as in torchao's int3 matmul) is read
// byte by byte, where the claim of its type (4) made 16- and 32-bit loads
// that fault at an address they do not divide (CUDA_ERROR_MISALIGNED_ADDRESS).
// A uchar4 at a 4-byte stride from a buffer whose binding offset Metal
// requires to be a multiple of 4 (here `device uint *`) stays one 32-bit
// load. (unpack3's buffer is `constant`, read with ld.global.nc; unpack4's
// `device`, with ld.global.)
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void unpack3(constant uchar *packed [[buffer(0)]], device uint *out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
  uchar3 b = reinterpret_cast<constant uchar3 *>(packed + 3 * gid)[0];
  out[gid] = uint(b.x) | uint(b.y) << 8 | uint(b.z) << 16;
}
// CHECK-PTX: .entry unpack3(
// CHECK-PTX: ld.global.nc.u8
// CHECK-PTX-NOT: ld.global.nc.u16
// CHECK-PTX-NOT: ld.global.nc.u32
// CHECK-PTX-NOT: ld.global.nc.v

kernel void unpack4(device const uint *words [[buffer(0)]], device uint *out [[buffer(1)]],
                    uint gid [[thread_position_in_grid]]) {
  uchar4 b = reinterpret_cast<device const uchar4 *>(words + gid)[0];
  out[gid] = uint(b.x) * 3 + uint(b.y) * 5 + uint(b.z) * 7 + uint(b.w);
}
// CHECK-PTX: .entry unpack4(
// CHECK-PTX: ld.global.u32
// CHECK-PTX-NOT: ld.global.u8
