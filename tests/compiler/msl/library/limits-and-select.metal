// <metal_limits>: numeric_limits (bfloat too) and the C integer limit macros
// as constant expressions; metal::select for scalars, vectors, a whole-vector
// bool and Apple's mixed scalar/vector forms, reachable from <metal_math>.
#include <metal_math>
#include <metal_limits>

static_assert(INT_MAX == 2147483647 && INT_MIN == -INT_MAX - 1, "int limits");
static_assert(UINT_MAX == 0xFFFFFFFFu && UCHAR_MAX == 255 && SHRT_MIN == -32768, "other limits");
static_assert(LONG_MAX == 0x7FFFFFFFFFFFFFFFL && CHAR_BIT == 8, "long limits");
static_assert(metal::numeric_limits<int>::max() == INT_MAX, "numeric_limits<int>");
static_assert(metal::numeric_limits<ushort>::max() == USHRT_MAX, "numeric_limits<ushort>");
static_assert(float(metal::numeric_limits<bfloat>::max()) == 0x1.fep127f, "numeric_limits<bfloat>");

kernel void k(device float4 *f [[buffer(0)]], device uint4 *u [[buffer(1)]], device int *s [[buffer(2)]]) {
  float4 v = f[0];
  bool4 mask = v > 1.0f;
  f[1] = metal::select(v, -INFINITY, mask);  // vector, scalar
  f[2] = metal::select(0, v, mask);          // scalar (int), vector
  u[0] = metal::select(u[1], 0xFFFFFFFFu, mask);
  f[3] = metal::select(v, f[4], true);       // whole-vector bool
  s[0] = metal::select(1, 2, s[1] > 0);      // scalars
}
// CHECK-IR: define
