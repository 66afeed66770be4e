// Vertex and fragment functions compile and reflect their inputs ([[stage_in]]
// members with [[attribute(n)]] / [[user(name)]]), built-ins, bindings and
// outputs ([[position]], [[color(n)]], a plain return).
// msl-options: -std=macos-metal2.1
#include <metal_stdlib>
using namespace metal;

struct VertexIn {
  float4 position [[attribute(0)]];
  float2 uv [[attribute(1)]];
};
struct VertexOut {
  float4 position [[position, invariant]];
  float2 uv [[user(locn0)]];
  float size [[point_size]];
  uint layer [[render_target_array_index]];
};
struct Uniforms { float4 scale; };

vertex VertexOut vs_main(VertexIn in [[stage_in]], constant Uniforms &u [[buffer(1)]],
                         uint vid [[vertex_id]], uint iid [[instance_id]]) {
  VertexOut out;
  out.position = in.position * u.scale;
  out.uv = in.uv + float2(vid, iid);
  out.size = 1.0;
  out.layer = 0;
  return out;
}

struct FragmentOut {
  float4 color [[color(0)]];
  float4 normal [[color(1)]];
  float depth [[depth(any)]];
};

fragment FragmentOut fs_main(VertexOut in [[stage_in]], bool front [[front_facing]],
                             float2 pc [[point_coord]], uint sid [[sample_id]]) {
  FragmentOut out;
  out.color = float4(in.uv, pc);
  out.normal = front ? float4(1) : float4(0);
  out.depth = float(sid);
  return out;
}

[[early_fragment_tests]] fragment float4 fs_plain(float4 p [[position]]) { return p; }

// CHECK-REFLECTION: "stage": "vertex"
// CHECK-REFLECTION: "kind": "stage_in"
// CHECK-REFLECTION: "attribute:1"
// CHECK-REFLECTION: "builtin": "vertex_id"
// CHECK-REFLECTION: "builtin": "instance_id"
// CHECK-REFLECTION: "user:locn0"
// CHECK-REFLECTION: "render_target_array_index"
// CHECK-REFLECTION: "point_size"
// CHECK-REFLECTION: "stage": "fragment"
// CHECK-REFLECTION: "builtin": "front_facing"
// CHECK-REFLECTION: "color:1"
// CHECK-REFLECTION: "depth:any"
// CHECK-REFLECTION: "early_fragment_tests"
// CHECK-REFLECTION: "name": "return"
// Attribute annotations do not survive into the module.
// CHECK-IR-NOT: llvm.ptr.annotation
// CHECK-IR-NOT: msl:
