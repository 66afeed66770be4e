// A kernel takes an acceleration structure by value at a [[buffer(n)]]
// index (naga's ray queries): reflected as a buffer binding passed as a
// 64-bit handle, which is what the PTX entry takes and the hook receives.
// msl-options: -std=macos-metal2.4
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;
using namespace metal::raytracing;

kernel void k(instance_acceleration_structure scene [[buffer(0)]], device uint *out [[buffer(1)]],
              uint tid [[thread_position_in_grid]]) {
  intersector<instancing, triangle_data> i;
  out[tid] = i.intersect(ray(float3(0), float3(0, 1, 0)), scene).instance_id;
}
// Without an index it takes the lowest free buffer index (as Apple's compiler assigns them).
kernel void unbound(instance_acceleration_structure scene) {}
