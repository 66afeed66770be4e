// A vector comparison held in a variable is a boolN in Metal: `auto m = a < c`
// declares a bool4 (its lanes convert to 1, `int(m.x)` is 1), a comparison
// assigned to a bool4 stores 0/1 lanes, and so does `&&` / `!` of boolNs.
// C++ for OpenCL gives -1/0 masks (and rejects the assignment, and `||`
// between a boolN and a comparison inside `int4(...)`).
#include <metal_stdlib>
using namespace metal;

kernel void k(device int4 *i [[buffer(0)]], device bool4 *b [[buffer(1)]], device int *s [[buffer(2)]]) {
  float4 a = float4(1, 5, 3, 0), c = float4(2, 4, 3, 1);
  auto m = c > a;            // 1 0 0 1
  i[0] = int4(m);
  s[0] = int(m.x) + int(m.w) * 2 + int(m.y) * 4;
  bool4 n = bool4(false);
  n = c != a;                // 1 1 0 1
  b[0] = n;
  bool4 both = m && n;       // 1 0 0 1
  b[1] = both;
  bool4 neither = !(m || n); // 0 0 1 0
  b[2] = neither;
  i[1] = int4(n) + int4(neither) * 2;
  // A boolN beside a comparison inside a constructor macro's argument.
  i[2] = int4(isnan(c) || c == a); // 0 0 1 0
}
// CHECK-IR: store <4 x i32> <i32 1, i32 0, i32 0, i32 1>
// 1 + 1 * 2 + 0 * 4
// CHECK-IR: store i32 3
// bool4 lanes 1 1 0 1 as bytes: 0x01000101; 1 0 0 1: 0x01000001; 0 0 1 0: 0x00010000.
// CHECK-IR: store i32 16777473
// CHECK-IR: store i32 16777217
// CHECK-IR: store i32 65536
// CHECK-IR: store <4 x i32> <i32 1, i32 1, i32 2, i32 1>
// CHECK-IR: store <4 x i32> <i32 0, i32 0, i32 1, i32 0>
// CHECK-IR-NOT: i32 -1
