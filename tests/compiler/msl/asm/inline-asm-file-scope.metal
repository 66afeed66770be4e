// A file-scope asm declaration is an error at the asm.
#include <metal_stdlib>
using namespace metal;

asm(".globl msl_evil\nmsl_evil: ret"); // expected-error {{inline assembly is not supported in Metal}}

namespace n {
extern "C" {
__asm__(".text"); // expected-error {{inline assembly is not supported in Metal}}
}
} // namespace n

kernel void k(device uint *u [[buffer(0)]]) { u[0] = 1; }
