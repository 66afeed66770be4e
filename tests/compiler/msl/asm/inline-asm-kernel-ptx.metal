// Metal has no inline assembly: an asm statement in a kernel is an error on
// NVPTX too.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  uint v;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(v)); // expected-error {{inline assembly is not supported in Metal}}
  u[i] = v;
}
