// Address spaces (MSL 2.0 4.2): program-scope variables are `constant` and
// initialized; device memory is reached through arguments; a kernel's plain
// value argument must be a built-in or bound.
#include <metal_stdlib>
using namespace metal;

constant float kScale = 2.0;
constexpr float kFolded = 3.0; // a compile-time value: allowed
constant float kMissing; // expected-error {{must be initialized}}
float gPlain = 1.0;     // expected-error {{program-scope variable 'gPlain' must be in the constant address space}}
device float gDevice;    // expected-error {{program-scope variable 'gDevice' must be in the constant address space, not device}}

kernel void k(device float *a [[buffer(0)]], float byValue, // expected-error {{must be a device or constant buffer}}
              uint i [[thread_position_in_grid]]) {
  threadgroup float shared[4];
  shared[i % 4] = a[i] * kScale;
  a[i] = shared[(i + 1) % 4] + byValue + kFolded;
}
