// Attributes in one [[...]] separated only by a space (naga writes
// `[[color(0) index(1)]]` for dual-source blending) are accepted, as
// Apple's compiler does.
#include <metal_stdlib>
using namespace metal;

struct Out {
  float4 color [[color(0)]];
  float4 mask [[color(0) index(1)]];
};

fragment Out f(float4 p [[position]]) { return Out{p, p * 0.5}; }
// CHECK-REFLECTION: "index:1"
