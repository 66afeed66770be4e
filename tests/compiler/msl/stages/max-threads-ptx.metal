// [[max_total_threads_per_threadgroup(n)]] reaches the PTX as .maxntid, so
// ptxas can budget registers for n threads.
// msl-target: nvptx64
#include <metal_stdlib>
using namespace metal;

[[max_total_threads_per_threadgroup(128)]]
kernel void k(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] *= 2; }

kernel void unbounded(device float *a [[buffer(0)]], uint i [[thread_position_in_grid]]) { a[i] += 1; }
// CHECK-PTX: .maxntid 128, 1, 1
// CHECK-REFLECTION: "max_total_threads_per_threadgroup:128"
