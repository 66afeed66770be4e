// An asm label on a declaration names its symbol; it is not inline assembly
// and compiles (the stdlib's SIMD-group functions use such labels on NVPTX:
// see simd/simd-shuffles-ptx.metal).
#include <metal_stdlib>
using namespace metal;

static uint helper(uint x) __asm("msl_user_helper");
__attribute__((noinline)) static uint helper(uint x) { return x + 1; }

kernel void k(device uint *u [[buffer(0)]]) { u[0] = helper(u[1]); }
// CHECK-IR: @msl_user_helper
