// Structs copy out of constant memory like any value (S s = uniforms.s):
// initialization, assignment, by-value arguments, returns, nested structs,
// arrays, templates and program-scope constants, on both targets.
#include <metal_stdlib>
using namespace metal;

struct Inner { float4 v; int k[3]; };
struct S { float4 a; int b; Inner in; float m[2]; };
struct U { S s; S arr[4]; float4x4 mvp; };
template <typename T> struct Box { T t; };
struct WithCtor { float x; WithCtor(float v) : x(v) {} };

float4 by_value(S s) { return s.a; }
S returned(constant U &u) { return u.s; }
constant S gS = {float4(1), 2, {float4(0), {1, 2, 3}}, {1, 2}};

kernel void k(constant U &buf [[buffer(0)]], constant Box<Inner> *bx [[buffer(2)]],
              constant WithCtor &wc [[buffer(3)]], device float4 *out [[buffer(1)]],
              uint id [[thread_position_in_grid]]) {
  S s = buf.s;
  S t = buf.arr[id & 3];
  t = buf.arr[1];
  S u = s; // private copies as before
  u = t;
  Inner in = gS.in;
  Box<Inner> b = bx[id];
  WithCtor w = wc;
  float4x4 m = buf.mvp;
  out[id] = s.a + t.a + u.a + by_value(buf.s) + returned(buf).a + in.v + b.t.v + w.x + m[0];
}
// CHECK-IR: @llvm.memcpy
