// [[host_name("...")]] names the function for the API: a kernel's entry
// point takes that name, and reflection reports it.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

[[host_name("scale_by_two")]] kernel void scale(device float *p [[buffer(0)]],
                                                uint i [[thread_position_in_grid]]) {
  p[i] *= 2.0f;
}
// CHECK-REFLECTION: "name": "scale_by_two"
// CHECK-REFLECTION: "symbol": "scale_by_two"
// CHECK-PTX: .visible .entry scale_by_two(
// CHECK-PTX-NOT: .entry scale(
