// metal::fast:: and the unqualified functions under -ffast-math (the
// default) use the GPU's approximate instructions.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void fast_k(device float *f [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  f[i] = fast::sin(f[i]) + fast::divide(f[i + 1], f[i + 2]) + fast::sqrt(f[i + 3]) + cos(f[i + 4]);
}
// CHECK-PTX: sin.approx.f32
// CHECK-PTX: div.approx.f32
// CHECK-PTX: sqrt.approx.f32
// CHECK-PTX: cos.approx.f32
