// Integer functions fold to their MSL values: bit fields (signed extraction
// sign-extends), mulhi/madhi (high half of the full product), saturating and
// halving arithmetic, rotate, clz/ctz (width for 0), min3/max3/median3.
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]], device int *s [[buffer(1)]]) {
  u[0] = extract_bits(0xF0u, 4, 4);
  s[0] = extract_bits(0x70, 4, 4) * 100 + extract_bits(0xF0, 4, 4);
  u[1] = insert_bits(0x1u, 0xFFFFFFFFu, 4, 8);
  u[2] = mulhi(0x80000000u, 6u);
  s[1] = mulhi(-2, 0x40000000);
  u[3] = clz(1u) + ctz(8u) * 100 + clz(0u) * 10000;
  u[4] = rotate(0x80000001u, 1u);
  s[2] = madsat(0x40000000, 4, 1);
  u[5] = addsat(0xFFFFFFF0u, 0x20u) - subsat(3u, 5u) - 1000;
  u[6] = absdiff(-5, 7);
  u[7] = min3(3u, 1u, 2u) * 100 + max3(3u, 1u, 2u) * 10 + median3(3u, 1u, 2u);
  s[3] = hadd(-3, -4) * 100 + rhadd(3, 4);
  s[4] = madhi(0x40000000, 8, 5);
  u[8] = popcount(0xF0F0u) + reverse_bits(1u);
}
// CHECK-IR: store i32 15,
// CHECK-IR: store i32 699,
// CHECK-IR: store i32 4081,
// CHECK-IR: store i32 3,
// CHECK-IR: store i32 -1,
// CHECK-IR: store i32 320331,
// CHECK-IR: store i32 2147483647,
// CHECK-IR: store i32 -1001,
// CHECK-IR: store i32 12,
// CHECK-IR: store i32 132,
// CHECK-IR: store i32 -396,
// CHECK-IR: store i32 7,
// CHECK-IR: store i32 -2147483640,
