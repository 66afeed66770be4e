// Without -std the language is Metal 3.0 for macOS (Apple's default for a
// macOS 13 deployment target), so Metal 3 features need no option.
#include <metal_stdlib>
using namespace metal;

static_assert(__METAL_VERSION__ == 300, "default language version");
#if !defined(__METAL_MACOS__)
#error "the default platform is macOS"
#endif

struct Payload { float a; };
[[object]] void o(object_data Payload &p [[payload]]) { p.a = 1.0; }
kernel void k(device float *a [[buffer(0)]]) { a[0] = 1.0; }
// CHECK-REFLECTION: "stage": "object"
