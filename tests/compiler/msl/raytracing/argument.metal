// An acceleration structure argument of a fragment function is a by-value
// [[buffer(n)]] argument (its 8-byte handle), and an argument buffer holds
// handles as spirv-cross lays them out (one 8-byte descriptor each).
// msl-options: -std=macos-metal2.4
#include <metal_stdlib>
#include <metal_raytracing>
using namespace metal;

template <typename T> struct Descriptor { T value; };

fragment float4 main0(raytracing::instance_acceleration_structure tlas [[buffer(0)]],
                      const device Descriptor<raytracing::instance_acceleration_structure> *more [[buffer(1)]],
                      float4 pos [[position]]) {
  raytracing::intersection_query<raytracing::instancing> q(raytracing::ray(pos.xyz, float3(0, 0, 1)), tlas);
  q.next();
  raytracing::intersection_query<raytracing::instancing> q2;
  q2.reset(raytracing::ray(pos.xyz, float3(0, 0, 1)), more[2].value, 1u);
  q2.next();
  return float4(float(q.get_committed_instance_id()), float(q2.get_committed_user_instance_id()), 0, 1);
}
// CHECK-REFLECTION: "name": "tlas"
// CHECK-REFLECTION: "kind": "buffer"
// CHECK-REFLECTION: "type": "raytracing::instance_acceleration_structure"
// The default mask is ~0u; the second query's handle comes from byte 16.
// CHECK-IR: i32 noundef 1, i32 noundef 83456, <3 x float>
// CHECK-IR: float noundef nofpclass(nan inf) 0x7FF0000000000000, i32 noundef -1)
// CHECK-IR: getelementptr inbounds i8, ptr %more, i64 16
// CHECK-IR: i32 noundef 1)
