// Misuse of matrices is rejected: wrong column type or count, implicit
// half<->float conversion, mismatched products, non-square determinant,
// non-floating-point elements.
#include <metal_stdlib>
using namespace metal;

kernel void k(device float4 *o [[buffer(0)]], device half4x4 *h [[buffer(1)]]) {
  float2x2 a = float2x2(float3(1), float3(2));  // expected-error {{no matching}}
  float3x3 b = float3x3(float3(1), float3(2));  // expected-error {{no matching}}
  float4x4 c = *h;                              // expected-error {{no viable conversion}}
  float2x3 d = float2x3(float3(1), float3(2));
  float3 e = d * float3(1);                     // expected-error {{cannot convert between vector and non-scalar}}
  float x = determinant(d);                     // expected-error {{no matching function}}
  matrix<int, 2, 2> i;                          // expected-error {{matrix elements must be float or half}}
  float2x2 f = float2x2(1, 2, 3);               // expected-error {{no matching}}
}
