// On NVPTX a derivative is the difference with the neighbouring lane of the
// 2x2 quad: butterfly shuffle by 1 (x) or 2 (y).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *v [[buffer(0)]]) {
  v[0] = dfdx(v[1]);
  v[2] = dfdy(v[3]);
}
// CHECK-PTX: shfl.sync.bfly.b32
// CHECK-PTX: %laneid
// CHECK-IR-NOT: __msl_dfdx
