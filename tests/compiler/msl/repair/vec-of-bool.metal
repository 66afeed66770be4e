// vec<bool, N> is Metal's boolN (OpenCL forbids bool lanes; boolN's lanes
// are plain char), including in templates deducing N, and a cast between it
// and other vectors converts lane by lane.
#include <metal_stdlib>
using namespace metal;

template <int N> vec<bool, N> flip(vec<bool, N> v) { return (vec<bool, N>)((vec<ushort, N>)v ^ 1); }

kernel void k(device bool4 *b [[buffer(0)]]) {
  vec<bool, 4> v = bool4(true, false, true, false);
  b[0] = flip(v);
}
// Lanes 0, 1, 0, 1 as bytes: 0x01000100.
// CHECK-IR: store i32 16777472
