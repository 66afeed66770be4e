// The per-patch tessellation factor structs have Metal's half layout.
#include <metal_stdlib>
using namespace metal;

static_assert(sizeof(MTLQuadTessellationFactorsHalf) == 12, "4 edge + 2 inside halves");
static_assert(sizeof(MTLTriangleTessellationFactorsHalf) == 8, "3 edge + 1 inside half");
static_assert(__builtin_offsetof(MTLQuadTessellationFactorsHalf, insideTessellationFactor) == 8, "");
static_assert(__is_same(metal::MTLQuadTessellationFactorsHalf, MTLQuadTessellationFactorsHalf), "");

kernel void k(device MTLQuadTessellationFactorsHalf *q [[buffer(0)]],
              device MTLTriangleTessellationFactorsHalf *t [[buffer(1)]]) {
  q[0].edgeTessellationFactor[3] = 2.0h;
  q[0].insideTessellationFactor[1] = 3.0h;
  t[0].insideTessellationFactor = 4.0h;
}
// CHECK-IR: store half 0xH4000
// CHECK-IR: store half 0xH4200
// CHECK-IR: store half 0xH4400
