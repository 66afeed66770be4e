// On nvptx64 the copy out of constant memory reads the constant space.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

struct Params { float4 scale; float4 bias; };

kernel void k(constant Params *p [[buffer(0)]], device float4 *out [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  Params local = p[0];
  out[id] = out[id] * local.scale + local.bias;
}
// CHECK-PTX: .entry k(
