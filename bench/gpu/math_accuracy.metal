// The math functions evaluated over arrays on the GPU, for
// bench/gpu/math_accuracy_main.cpp: one function (fn) per launch, in
// precise:: (eval_precise) and fast:: (eval_fast). The function numbers are
// the order of kFunctions there.
#include <metal_stdlib>
using namespace metal;

#define MSL_MATH_SWITCH(NS)                                                     \
  switch (fn) {                                                                 \
  case 0: return NS::sin(x);    case 1: return NS::cos(x);                      \
  case 2: return NS::tan(x);    case 3: return NS::asin(x);                     \
  case 4: return NS::acos(x);   case 5: return NS::atan(x);                     \
  case 6: return NS::sinh(x);   case 7: return NS::cosh(x);                     \
  case 8: return NS::tanh(x);   case 9: return NS::asinh(x);                    \
  case 10: return NS::acosh(x); case 11: return NS::atanh(x);                   \
  case 12: return NS::exp(x);   case 13: return NS::exp2(x);                    \
  case 14: return NS::exp10(x); case 15: return NS::log(x);                     \
  case 16: return NS::log2(x);  case 17: return NS::log10(x);                   \
  case 18: return NS::sqrt(x);  case 19: return NS::rsqrt(x);                   \
  case 20: return NS::sinpi(x); case 21: return NS::cospi(x);                   \
  case 22: return NS::tanpi(x); case 23: return NS::pow(x, y);                  \
  case 24: return NS::powr(x, y); case 25: return NS::atan2(x, y);              \
  case 26: return NS::divide(x, y);                                             \
  }                                                                             \
  return 0.0f;

static float precise_math(uint fn, float x, float y) { MSL_MATH_SWITCH(precise) }
static float fast_math(uint fn, float x, float y) { MSL_MATH_SWITCH(fast) }

kernel void eval_precise(device const float *x [[buffer(0)]], device const float *y [[buffer(1)]],
                         device float *out [[buffer(2)]], constant uint &fn [[buffer(3)]],
                         constant uint &n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i < n)
    out[i] = precise_math(fn, x[i], y[i]);
}

kernel void eval_fast(device const float *x [[buffer(0)]], device const float *y [[buffer(1)]],
                      device float *out [[buffer(2)]], constant uint &fn [[buffer(3)]],
                      constant uint &n [[buffer(4)]], uint i [[thread_position_in_grid]]) {
  if (i < n)
    out[i] = fast_math(fn, x[i], y[i]);
}
