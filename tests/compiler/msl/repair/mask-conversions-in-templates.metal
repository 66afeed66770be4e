// Inside templates, a vector comparison (or `!`, `&&`, `||` of vectors) is a
// boolN in Metal, whose true lanes convert to 1 and 1.0; C++ for OpenCL gives
// a -1/0 mask. Each template is instantiated with vector types (the
// operands are dependent: their types are known only per instantiation)
// and, for two, with scalars too. Every form gives Metal's 1, never -1:
// a functional cast V(...) of a comparison or of a boolN, static_cast<V>,
// a C-style cast, a negated comparison, `||` beside a boolN (isnan), and a
// mask held in an `auto` variable.
#include <metal_stdlib>
using namespace metal;

template <typename V, typename T> V functional(T x, T y) { return V(x > y); }
template <typename V> V from_bool(bool4 b) { return V(b); }
template <typename V, typename T> V with_static_cast(T x, T y) { return static_cast<V>(x < y); }
template <typename V, typename T> V negated(T x, T y) { return V(!(x > y)); }
template <typename V, typename T> V either(T x, T y) { return V(isnan(x) || x == y); }
template <typename V, typename T> V through_auto(T x, T y) {
  auto m = x != y;
  return V(m);
}
template <typename V, typename T> V c_style(T x, T y) { return (V)(x >= y && y > 0); }

kernel void k(device int4 *i [[buffer(0)]], device float4 *f [[buffer(1)]], device int *s [[buffer(2)]],
              device const float4 *in [[buffer(3)]]) {
  float4 a = float4(1, 5, 3, 0), c = float4(2, 4, 3, 1);
  i[0] = functional<int4>(c, a);       // c > a:  1 0 0 1
  f[0] = functional<float4>(c, a);
  i[1] = from_bool<int4>(bool4(true, true, false, false));
  f[1] = from_bool<float4>(bool4(true, true, false, false));
  i[2] = with_static_cast<int4>(c, a); // c < a:  0 1 0 0
  f[2] = with_static_cast<float4>(c, a);
  i[3] = negated<int4>(c, a);          // !(c > a): 0 1 1 0
  f[3] = negated<float4>(c, a);
  i[4] = either<int4>(c, a);           // c == a: 0 0 1 0
  f[4] = either<float4>(c, a);
  i[5] = through_auto<int4>(c, a);     // c != a: 1 1 0 1
  f[5] = through_auto<float4>(c, a);
  i[6] = c_style<int4>(c, a);          // c >= a && a > 0: 1 0 1 0
  f[6] = c_style<float4>(c, a);
  // Scalars through the same templates: a bool, converted to 1.
  s[0] = functional<int>(c.x, a.x) + through_auto<int>(c.x, a.x) * 2;
  // Lanes known only at run time: the comparison's i1 lanes are
  // zero-extended (1), not sign-extended (-1).
  i[7] = functional<int4>(in[0], in[1]);
  f[7] = negated<float4>(in[0], in[1]);
}
// CHECK-IR: store <4 x i32> <i32 1, i32 0, i32 0, i32 1>
// CHECK-IR: store <4 x float> <float 1.000000e+00, float 0.000000e+00, float 0.000000e+00, float 1.000000e+00>
// CHECK-IR: store <4 x i32> <i32 1, i32 1, i32 0, i32 0>
// CHECK-IR: store <4 x float> <float 1.000000e+00, float 1.000000e+00, float 0.000000e+00, float 0.000000e+00>
// CHECK-IR: store <4 x i32> <i32 0, i32 1, i32 0, i32 0>
// CHECK-IR: store <4 x float> <float 0.000000e+00, float 1.000000e+00, float 0.000000e+00, float 0.000000e+00>
// CHECK-IR: store <4 x i32> <i32 0, i32 1, i32 1, i32 0>
// CHECK-IR: store <4 x float> <float 0.000000e+00, float 1.000000e+00, float 1.000000e+00, float 0.000000e+00>
// CHECK-IR: store <4 x i32> <i32 0, i32 0, i32 1, i32 0>
// CHECK-IR: store <4 x float> <float 0.000000e+00, float 0.000000e+00, float 1.000000e+00, float 0.000000e+00>
// CHECK-IR: store <4 x i32> <i32 1, i32 1, i32 0, i32 1>
// CHECK-IR: store <4 x float> <float 1.000000e+00, float 1.000000e+00, float 0.000000e+00, float 1.000000e+00>
// CHECK-IR: store <4 x i32> <i32 1, i32 0, i32 1, i32 0>
// CHECK-IR: store <4 x float> <float 1.000000e+00, float 0.000000e+00, float 1.000000e+00, float 0.000000e+00>
// 1 + 1 * 2
// CHECK-IR: store i32 3
// CHECK-IR: zext <4 x i1>
// CHECK-IR: uitofp <4 x i1>
// CHECK-IR-NOT: sext <4 x i1>
// CHECK-IR-NOT: sitofp <4 x i1>
// CHECK-IR-NOT: i32 -1
// CHECK-IR-NOT: float -1.000000e+00
