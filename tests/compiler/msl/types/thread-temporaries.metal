// Temporaries live in thread memory, as in Metal: a class whose constructor
// is qualified `thread` builds one (`Pair(x)`), and it binds to a
// `const thread Pair&` parameter, here of an assignment into threadgroup
// memory (spirv-cross's storage matrices are written so).
#include <metal_stdlib>
using namespace metal;

struct Pair {
  float2 v;
  Pair() thread = default;
  Pair(float x) thread { v = float2(x, x + 1.0); }
  threadgroup Pair &operator=(const thread Pair &other) threadgroup {
    v = other.v * 2.0;
    return *this;
  }
  thread Pair &operator=(const thread Pair &other) thread = default;
};

kernel void k(device float2 *out [[buffer(0)]], uint i [[thread_index_in_threadgroup]]) {
  threadgroup Pair shared;
  if (i == 0)
    shared = Pair(3.0);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  Pair local_pair;
  local_pair = Pair(5.0);
  out[i] = shared.v + local_pair.v;
}
// The threadgroup assignment doubles (3, 4), the thread one copies (5, 6):
// (6, 8) + (5, 6). The threadgroup variable is not folded through the
// barrier (other threads read it there; see MslAction::EndSourceFileAction).
// CHECK-IR: store <2 x float> <float 6.000000e+00, float 8.000000e+00>
// CHECK-IR: <float 5.000000e+00, float 6.000000e+00>
