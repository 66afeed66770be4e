// MSL 2.0 7.4, table 38: half x / y is correctly rounded also under
// -ffast-math (the default). NVPTX divides in float, correctly rounded
// (div.rn.f32, never div.approx / rcp.approx / div.full), then rounds to
// half, scalars and vector lanes alike (compiler/PreciseMath.cpp).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device half *h [[buffer(0)]], device half2 *h2 [[buffer(1)]], uint i [[thread_position_in_grid]]) {
  h[i] = h[i + 1] / h[i + 2] + fast::divide(h[i + 3], h[i + 4]);
  h2[i] = h2[i + 1] / h2[i + 2];
}
// CHECK-PTX: div.rn.f32
// CHECK-PTX-NOT: div.approx
// CHECK-PTX-NOT: rcp.approx
// CHECK-PTX-NOT: div.full
