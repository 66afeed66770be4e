// Packed vectors: no padding, alignment of one component, implicit
// conversion to and from the vector types, p[i] and p.x access (also in
// constant memory), arithmetic through the vector type, and the vector
// constructor forms as constant initializers.
#include <metal_stdlib>
using namespace metal;

static_assert(sizeof(packed_float3) == 12 && alignof(packed_float3) == 4, "");
static_assert(sizeof(packed_half3) == 6 && alignof(packed_half3) == 2, "");
static_assert(sizeof(packed_uchar4) == 4 && sizeof(packed_int2) == 8, "");
static_assert(__is_trivially_copyable(packed_uint3), "");

struct Foo { uint bar; packed_float3 baz; uchar quux; packed_uchar4 blah; packed_half2 wibble; };
static_assert(sizeof(Foo) == 28 && __builtin_offsetof(Foo, baz) == 4 &&
              __builtin_offsetof(Foo, blah) == 17 && __builtin_offsetof(Foo, wibble) == 22, "");

constant packed_float3 kP = packed_float3(1, 2, 3);
constant packed_float4 kQ = packed_float4(float3(4, 5, 6), 7);

struct S { packed_half3 v; };

kernel void k(const constant S *U [[buffer(0)]], device Foo &foo [[buffer(1)]],
              device float4 *o [[buffer(2)]], device half *h [[buffer(3)]]) {
  h[0] = U->v.x + U->v.y + U->v[2];
  foo.baz = float3(1, 2, 3);
  foo.baz[1] = 9;
  foo.blah = packed_uchar4(uchar4(250, 251, 252, 253));
  packed_float3 copy = foo.baz;
  foo.baz = copy * 2.0f;
  packed_float3 p = float3(1, 2, 3);
  p[1] = 9;
  float3 f = p * 2.0f + 1.0f;
  o[0] = float4(f, p.z);
  o[1] = float4(kP, kQ.w) + float4(kQ);
  o[2] = float4(half3(U->v), 1);
}
// CHECK-IR: [3 x float] [float 1.000000e+00, float 2.000000e+00, float 3.000000e+00]
// CHECK-IR: [4 x float] [float 4.000000e+00, float 5.000000e+00, float 6.000000e+00, float 7.000000e+00]
// CHECK-IR: store <4 x float> <float 3.000000e+00, float 1.900000e+01, float 7.000000e+00, float 3.000000e+00>
// CHECK-IR: store <4 x float> <float 5.000000e+00, float 7.000000e+00, float 9.000000e+00, float 1.400000e+01>
// CHECK-IR: store i32 -33752070
// CHECK-IR-NOT: global_ctors
