// A kernel's [[stage_in]] argument: the entry takes a pointer to one input
// struct per thread of the grid and hands each thread its own.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

struct In {
  float4 position [[attribute(0)]];
  float2 uv [[attribute(1)]];
};

kernel void k(In in [[stage_in]], device float4 *out [[buffer(0)]],
              uint i [[thread_position_in_grid]]) {
  out[i] = in.position + in.uv.x;
}
// CHECK-REFLECTION: "stage_in_array:in"
// CHECK-PTX: .entry k(
// CHECK-PTX: ld.global.v4.f32
