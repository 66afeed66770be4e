// Apple's private builtins (MFA copies its async-copy calls from Apple's
// headers) are rejected where they are named, saying what they are.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *a [[buffer(0)]], threadgroup float *t [[threadgroup(0)]]) {
  // expected-error@+2 {{'__metal_wait_simdgroup_events' is an Apple-private Metal builtin, which msld does not provide}}
  // expected-error@+1 {{use of undeclared identifier '__metal_wait_simdgroup_events'}}
  __metal_wait_simdgroup_events(0, nullptr);
}
