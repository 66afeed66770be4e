// On sm_80+ (msld's default is sm_90) the SIMD-group sum, min, max, and, or,
// xor of 8..32-bit integers are one redux.sync each over the active mask
// (signed min/max as .s32, unsigned as .u32; narrower ints widened).
// Floats, 64-bit ints and products: simd-no-redux-ptx.metal; older SMs:
// simd-redux-sm75-ptx.metal.
// msl-target: nvptx64
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

kernel void ints(device int *i [[buffer(0)]], device uint *u [[buffer(1)]], uint t [[thread_position_in_grid]]) {
  int x = i[t];
  uint y = u[t];
  i[t] = simd_sum(x) + 3 * simd_min(x) + 5 * simd_max(x);
  u[t] = simd_sum(y) ^ simd_min(y) ^ simd_max(y) ^ simd_and(y) ^ simd_or(y) ^ simd_xor(y);
}
// CHECK-PTX: activemask.b32
// CHECK-PTX: redux.sync.add.s32
// CHECK-PTX: redux.sync.min.s32
// CHECK-PTX: redux.sync.max.s32
// CHECK-PTX: redux.sync.min.u32
// CHECK-PTX: redux.sync.max.u32
// CHECK-PTX: redux.sync.and.b32
// CHECK-PTX: redux.sync.or.b32
// CHECK-PTX: redux.sync.xor.b32

// Narrow and vector integers: one redux per element (a short sign-extended,
// so that its max compares as signed).
kernel void narrow(device short *s [[buffer(2)]], device uchar *c [[buffer(3)]], device int2 *v [[buffer(4)]],
                   uint t [[thread_position_in_grid]]) {
  s[t] = simd_max(s[t]);
  c[t] = simd_min(c[t]);
  v[t] = simd_sum(v[t]);
}

// CHECK-PTX: .entry narrow
// CHECK-PTX: ld.global.s16
