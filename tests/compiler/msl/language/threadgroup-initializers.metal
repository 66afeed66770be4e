// Threadgroup variables declared with an initializer (Apple's compiler
// accepts `threadgroup T x = v;`): a scalar, a struct from a braced list and
// a vector from a constructor (uint2(3, 4): one 64-bit store) each get their value stored at the
// declaration, before the barrier; one without an initializer stays
// uninitialized. All are threadgroup globals (msl.threadgroup).
#include <metal_stdlib>
using namespace metal;

struct Acc { float sum; uint count; };

kernel void k(device float *out [[buffer(0)]], uint l [[thread_index_in_threadgroup]],
              uint i [[thread_position_in_grid]]) {
  threadgroup float bias = 0.75f;
  threadgroup int counts[4];
  threadgroup Acc acc = {1.5f, 7u};
  threadgroup uint2 corner = uint2(3, 4);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (l < 4)
    counts[l] = int(l);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  out[i] = bias + float(counts[l & 3]) + acc.sum + float(acc.count) + float(corner.x * corner.y);
}
// CHECK-IR: @_ZZ1kE4bias = internal global float undef, align 4, !msl.threadgroup
// CHECK-IR: @_ZZ1kE6counts = internal global [4 x i32] undef
// CHECK-IR: store float 7.500000e-01, ptr @_ZZ1kE4bias
// CHECK-IR: store float 1.500000e+00, ptr @_ZZ1kE3acc
// CHECK-IR: store i32 7, ptr getelementptr inbounds (i8, ptr @_ZZ1kE3acc, i64 4)
// CHECK-IR: store double 0x400000003, ptr @_ZZ1kE6corner
// CHECK-IR-NOT: ptr @_ZZ1kE6counts, align
