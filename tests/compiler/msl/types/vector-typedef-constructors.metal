// A typedef of a vector type constructs like the type itself, whichever of
// several #if-selected typedefs is active (tnn's ftype4).
// msl-options: -D FULL_PRECISION=0
#include <metal_stdlib>
using namespace metal;

#if FULL_PRECISION
typedef float4 ftype4;
#else
typedef half4 ftype4;
#endif
using idx2 = int2;

kernel void k(device ftype4 *out [[buffer(0)]], device idx2 *i [[buffer(1)]]) {
  out[0] = ftype4(1, 2, 3, 4);
  out[1] = ftype4(ftype4(0.5).xy, 0, 1);
  i[0] = idx2(7);
}
// LLVM stores the 8-byte constants as one 64-bit value: half 1, 2, 3, 4 are
// 0x3C00 0x4000 0x4200 0x4400; int2(7) is 7, 7.
// CHECK-IR: 0x4400420040003C00
// CHECK-IR: 0x700000007
