// atomic_float (Metal 3.0): fetch_add/fetch_sub are float atomicrmw in
// device and threadgroup memory; atomic<float> names the same type.
// msl-options: -std=metal3.0
#include <metal_stdlib>
using namespace metal;

kernel void k(device atomic_float *f [[buffer(0)]], device float *o [[buffer(1)]],
              threadgroup atomic<float> *t [[threadgroup(0)]]) {
  o[0] = atomic_fetch_add_explicit(f, 1.0, memory_order_relaxed);
  o[1] = atomic_fetch_sub_explicit(t, 2.0f, memory_order_relaxed);
  atomic_store_explicit(f, 3.0f, memory_order_relaxed);
  o[2] = atomic_exchange_explicit(f, 4.0f, memory_order_relaxed);
}
// CHECK-IR: atomicrmw fadd ptr
// CHECK-IR: atomicrmw fsub
// CHECK-IR: store atomic i32 1077936128
// CHECK-IR: atomicrmw xchg
