// MSL 2.0 7.1: with fast math disabled NaN and INF are supported, so
// isnan/isinf are real tests and arithmetic keeps no fast-math flags.
// msl-options: -fno-fast-math
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *v [[buffer(0)]], device bool *out [[buffer(1)]]) {
  out[0] = isnan(v[0]);
  out[1] = isinf(v[1]);
  v[2] = v[0] / v[1];
}
// CHECK-IR: fcmp uno float
// CHECK-IR: fdiv float
// CHECK-IR-NOT: fdiv fast
// CHECK-IR-NOT: nnan
