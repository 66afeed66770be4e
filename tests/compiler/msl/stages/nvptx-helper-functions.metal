// On nvptx64 only stage functions stay visible: helpers are internal (and
// inlined), so a helper that indexes a by-value vector dynamically cannot
// produce the invalid PTX LLVM 19 emits for it as a device function
// (`add.s64 %rd, <param symbol>, ...`, rejected by ptxas).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

float pick(float4 v, int i) { return v[min(i, 3)]; }

kernel void k(device float4 *in [[buffer(0)]], device float *out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  out[i] = pick(in[i], int(i));
}
// CHECK-PTX: .entry k(
// CHECK-PTX-NOT: pick
