// An address space on a returned value (`inline thread ushort f()`), which
// Apple's compiler ignores.
#include <metal_stdlib>
using namespace metal;

static inline thread unsigned short low_bits(thread const int v) { return ushort(v & 3); }
inline device float half_of(float x) { return x * 0.5f; }

kernel void k(device ushort *out [[buffer(0)]], device float *f [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  out[i] = low_bits(int(i));
  f[i] = half_of(f[i]);
}
// CHECK-IR: define
