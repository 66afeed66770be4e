// Threadgroup memory is 16-byte aligned in the PTX, whatever the element
// type: msld-cuda-worker links PTX as relocatable code (cuLink), where ptxas
// widens shared loads to LDS.128 only as far as the declared alignment
// allows (compiler/NvptxTuning.h; SGEMM's tiles 348 -> 278 us on the H200).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void tiles(device const float *in [[buffer(0)]], device float *out [[buffer(1)]],
                  uint lid [[thread_position_in_threadgroup]]) {
  threadgroup float row[16][16];
  threadgroup char bytes[64];
  row[lid / 16][lid % 16] = in[lid];
  bytes[lid % 64] = char(lid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  float acc = 0;
  for (uint k = 0; k < 16; ++k)
    acc += row[lid % 16][k];
  out[lid] = acc + float(bytes[(lid + 1) % 64]);
}
// CHECK-PTX: .shared .align 16 .b8 _ZZ5tiles
// CHECK-PTX-NOT: .align 4 .b8 _ZZ5tiles
// CHECK-PTX-NOT: .align 1 .b8 _ZZ5tiles
