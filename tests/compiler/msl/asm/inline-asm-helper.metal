// Inline assembly in helper functions, member functions, lambdas and
// templates (reported once, at the definition, however often instantiated),
// also from a macro, is an error at the asm.
// msl-options: -std=metal3.0
#include <metal_stdlib>
using namespace metal;

static uint helper(uint x) {
  __asm__("" : "+r"(x)); // expected-error {{inline assembly is not supported in Metal}}
  return x;
}

struct S {
  uint get(uint x) const {
    asm volatile("" ::: "memory"); // expected-error {{inline assembly is not supported in Metal}}
    return x;
  }
};

template <typename T> T twice(T x) {
  asm(""); // expected-error {{inline assembly is not supported in Metal}}
  return x + x;
}

namespace n {
inline uint unused(uint x) {
  asm("nop"); // expected-error {{inline assembly is not supported in Metal}}
  return x;
}
} // namespace n

#define BARRIER() __asm__ __volatile__("" ::: "memory")

kernel void k(device uint *u [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  auto f = [](uint x) {
    asm(""); // expected-error {{inline assembly is not supported in Metal}}
    return x;
  };
  BARRIER(); // expected-error {{inline assembly is not supported in Metal}}
  u[i] = helper(u[i]) + S().get(1) + twice(2u) + twice(3) + f(4);
}
