// On the CPU, dfdx/dfdy call the executor's hooks lane by lane; fwidth is
// |dfdx| + |dfdy|; discard_fragment calls its hook.
#include <metal_stdlib>
using namespace metal;

float2 d(float2 p) { return dfdx(p) + dfdy(p); }
// CHECK-IR: @__msl_dfdx(
// CHECK-IR: @__msl_dfdy(
half w(half p) { return fwidth(p); }
// CHECK-IR: @llvm.fabs
void kill(float a) { if (a < 0) discard_fragment(); }
// CHECK-IR: call void @__msl_discard_fragment()
