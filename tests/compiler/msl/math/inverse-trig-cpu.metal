// On the CPU the inverse and hyperbolic functions are the LLVM intrinsics or
// libm; vector tan stays llvm.tan (LLVM 19 would turn sin/cos into a bogus
// vector call of libm "tanl").
#include <metal_stdlib>
using namespace metal;

kernel void k(device float *f [[buffer(0)]], device float4 *g [[buffer(1)]]) {
  f[0] = asin(f[1]) + atan2(f[2], f[3]) + asinh(f[4]);
  g[0] = tan(g[1]) + tanpi(g[2]);
}
// CHECK-IR: @llvm.asin.f32
// CHECK-IR: @atan2f
// CHECK-IR: @asinhf
// CHECK-IR: @llvm.tan.v4f32
// CHECK-IR-NOT: tanl
