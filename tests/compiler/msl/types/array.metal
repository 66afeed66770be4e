// metal::array<T, N>: a value type with size(), indexable in thread and
// constant memory, holding textures and samplers in argument buffers.
#include <metal_stdlib>
using namespace metal;

struct Resources {
  array<texture2d<float>, 4> textures [[id(0)]];
  array<float, 3> weights [[id(4)]];
};

kernel void k(constant Resources &r [[buffer(0)]], device float *out [[buffer(1)]]) {
  array<int, 3> local = {{4, 5, 6}};
  out[0] = r.weights[1] + float(r.weights.size());
  out[1] = float(local[2] + int(local.size()));
  out[2] = float(r.textures.size());
}
// CHECK-IR: store float 9.000000e+00
// CHECK-IR: store float 4.000000e+00
