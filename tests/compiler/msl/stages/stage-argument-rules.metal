// The argument rules of vertex and fragment functions.
#include <metal_stdlib>
using namespace metal;

struct VOut { float4 color [[user(c)]]; };   // no [[position]] member
struct In { float4 p [[attribute(0)]]; };

vertex VOut no_position(uint vid [[vertex_id]]) { // expected-error {{returns a struct without a [[position]] member}}
  return VOut{float4(vid)};
}

vertex float4 two_stage_in(In a [[stage_in]], In b [[stage_in]]) { // expected-error {{only one argument may be [[stage_in]]}}
  return a.p + b.p;
}

fragment float4 compute_builtin(uint gid [[thread_position_in_grid]]) { // expected-error {{is a kernel built-in}}
  return float4(gid);
}

kernel void graphics_builtin(device float *out [[buffer(0)]], uint vid [[vertex_id]]) { // expected-error {{is a vertex or fragment built-in}}
  out[0] = vid;
}

fragment float4 unbound(device float *data) { // buffer 0: the lowest free index
  return float4(data[0]);
}

fragment float4 shared_index(device float *a [[buffer(2)]], constant float *b [[buffer(2)]]) { // expected-error {{already taken by 'a'}}
  return float4(a[0] + b[0]);
}

fragment float4 tg(threadgroup float *t [[threadgroup(0)]]) { // expected-error {{allowed only in kernel, object and mesh functions}}
  return float4(t[0]);
}
