// On the GPU, `constant` memory is read-only device memory: a constant
// buffer argument and a program-scope constant that the same pointer may
// point to are both read with global loads (the 64 KB constant bank, which
// ld.const reads, is not where a runtime binds a buffer). Both are
// read-only for the dispatch, so they go through the read-only data cache
// (ld.global.nc): the entry marks a constant buffer noalias readonly
// (compiler/EntryPoints.cpp), and kTable is a constant global.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

constant float kTable[4] = {1, 2, 3, 4};

kernel void k(constant float *c [[buffer(0)]], device float *o [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  constant float *p = (i & 1) ? c : kTable;
  o[i] = p[i & 3] + c[i];
}
// CHECK-PTX: .global .align 4 .b8 kTable[16]
// CHECK-PTX: ld.global.nc.f32
// CHECK-PTX-NOT: ld.const
