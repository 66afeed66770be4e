// A post-tessellation vertex function reads its patch's control points
// through patch_control_point<T> in its [[stage_in]] struct.
#include <metal_stdlib>
using namespace metal;

struct ControlPoint { float4 position [[attribute(0)]]; };
struct PatchIn { patch_control_point<ControlPoint> points; };

[[patch(quad, 4)]] vertex float4 tese(PatchIn in [[stage_in]], float2 uv [[position_in_patch]]) {
  float4 top = mix(in.points[0].position, in.points[1].position, uv.x);
  float4 bottom = mix(in.points[3].position, in.points[2].position, uv.x);
  return mix(top, bottom, uv.y) + float(in.points.size());
}
// CHECK-IR: __msl_patch_control_point
