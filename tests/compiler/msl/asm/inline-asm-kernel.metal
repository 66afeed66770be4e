// Metal has no inline assembly: an asm statement in a kernel is an error at
// the asm (GNU asm, __asm__, asm volatile, asm goto), on the CPU.
#include <metal_stdlib>
using namespace metal;

kernel void k(device uint *u [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  asm("nop"); // expected-error {{inline assembly is not supported in Metal}}
  __asm__ __volatile__("" ::: "memory"); // expected-error {{inline assembly is not supported in Metal}}
  uint v = u[i];
  asm volatile("addl $1, %0" : "+r"(v)); // expected-error {{inline assembly is not supported in Metal}}
  u[i] = v;
}
