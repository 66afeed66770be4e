// __builtin_trap() in a kernel is llvm.trap, PTX `trap;` (followed by `exit;`):
// on the GPU the kernel aborts with a sticky error that msld reports as a fault
// (ExecuteCudaTest.ATrappingKernelIsAbortedAndTheGpuServesOn runs this kernel).
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

kernel void trapping(device uint *out [[buffer(0)]], constant uint &bad [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
  if (i == bad)
    __builtin_trap();
  out[i] = i;
}
// CHECK-IR: call void @llvm.trap()
// CHECK-PTX: .entry trapping
// CHECK-PTX: trap;
