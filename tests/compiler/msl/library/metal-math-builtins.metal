// Apple's math builtins as public kernels call them: the last argument
// picks fast or precise; __METAL_MAYBE_FAST_MATH__ follows the compile's math
// mode (-fmetal-math-fp32-functions=precise here: the precise ones).
// msl-options: -fmetal-math-fp32-functions=precise
#include <metal_stdlib>
using namespace metal;

static_assert(__METAL_MAYBE_FAST_MATH__ == __METAL_PRECISE_MATH__, "precise fp32 functions");

kernel void k(device float *x [[buffer(0)]]) {
  x[0] = __metal_exp(x[1], __METAL_MAYBE_FAST_MATH__) + __metal_pow(x[2], x[3], __METAL_FAST_MATH__) +
         __metal_fmax(x[4], 0.0f, __METAL_MAYBE_FAST_MATH__);
}
// The precise exp is __msl_libm's kernel, not LLVM's intrinsic.
// CHECK-IR: __msl_libm
