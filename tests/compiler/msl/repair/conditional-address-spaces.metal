// `c ? temporary : local` with operands of the same struct type, one of them
// in the private address space (C++ for OpenCL calls them incompatible).
#include <metal_stdlib>
using namespace metal;

float2x2 scaled(float2x2 m, float det) { return (det != 0.0f) ? (m * (1.0f / det)) : m; }

kernel void k(device float2x2 *out [[buffer(0)]]) {
  out[0] = scaled(float2x2(2, 0, 0, 2), 2.0f);
}
// The identity, stored as two 64-bit words: columns (1, 0) = 0x000000003F800000
// and (0, 1) = 0x3F80000000000000 (which LLVM prints as the double 2^-7).
// CHECK-IR: store double 0x3F800000
// CHECK-IR: store double 7.812500e-03
