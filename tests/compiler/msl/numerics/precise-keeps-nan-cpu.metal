// metal::precise:: keeps IEEE semantics under -ffast-math on the CPU too: its
// code carries no fast-math flags (so NaN and infinities are honoured:
// precise::fmin and precise::clamp treat NaN as IEEE minNum/maxNum do),
// while the same functions outside precise:: are fast.
#include <metal_stdlib>
using namespace metal;

kernel void precise_k(device float *f [[buffer(0)]]) {
  f[0] = precise::fmin(f[1], f[2]);
}
kernel void fast_k(device float *f [[buffer(0)]]) {
  f[0] = fast::fmin(f[1], f[2]);
}
// CHECK-IR: tail call noundef float @llvm.minnum.f32(
// CHECK-IR: tail call fast noundef float @llvm.minnum.f32(
