// Integer functions work lane by lane on vectors and narrow types
// (ushort/char lanes keep their width: clz(ushort 1) is 15).
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint4 *u [[buffer(0)]], device ushort2 *h [[buffer(1)]], device char2 *c [[buffer(2)]]) {
  u[0] = extract_bits(uint4(0xF0u, 0x0Fu, 0xFFu, 0x10u), 4, 4) + popcount(uint4(1u, 3u, 7u, 15u));
  h[0] = clz(ushort2(1, 0x100)) + ctz(ushort2(0, 4));
  c[0] = mulhi(char2(-128, 100), char2(2, 3));
}
// CHECK-IR: store <4 x i32> <i32 16, i32 2, i32 18, i32 5>
// CHECK-IR: store <2 x i16> <i16 31, i16 9>
// CHECK-IR: store <2 x i8> <i8 -1, i8 1>
