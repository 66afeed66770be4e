// <TargetConditionals.h> says which platform -std= names.
// msl-options: -std=ios-metal2.0
#include <metal_stdlib>
#include <TargetConditionals.h>

#if !TARGET_OS_IPHONE || TARGET_OS_OSX
#error "ios-metal2.0 is an iOS target"
#endif

kernel void k(device int *out [[buffer(0)]]) { out[0] = TARGET_OS_IOS; }
// CHECK-IR: store i32 1
