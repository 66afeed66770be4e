// Without -std the language is the newest msld supports, Metal 3.2 for
// macOS (as Apple's compiler takes its SDK's newest), so Metal 3.x features
// (bfloat: 3.1) need no option.
#include <metal_stdlib>
using namespace metal;

static_assert(__METAL_VERSION__ == 320, "default language version");
#if !defined(__METAL_MACOS__)
#error "the default platform is macOS"
#endif

struct Payload { float a; };
[[object]] void o(object_data Payload &p [[payload]]) { p.a = 1.0; }
kernel void k(device float *a [[buffer(0)]]) { bfloat b = bfloat(1.0f); a[0] = float(b); }
// CHECK-REFLECTION: "stage": "object"
