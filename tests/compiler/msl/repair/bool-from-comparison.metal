// A vector comparison initializes a boolN (Metal: the comparison is a
// boolN); C++ for OpenCL gives a -1/0 integer mask, which the compiler
// repairs into Metal's 0/1 lanes.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *v [[buffer(0)]], device bool4 *out [[buffer(1)]]) {
  bool4 b = float4(1, 5, 3, 0) < float4(2, 4, 3, 1);
  out[0] = b;
}
// Lanes 1, 0, 0, 1 as bytes: 0x01000001.
// CHECK-IR: store i32 16777217
