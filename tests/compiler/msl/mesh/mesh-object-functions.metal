// Mesh shading (Metal 3.0): an [[object]] function writes a payload and sets
// the grid of mesh threadgroups; a [[mesh]] function reads the payload,
// declares threadgroup variables (as kernels may) and builds a
// metal::mesh<...>. Both are reflected with their stage, built-ins, the mesh
// output and the payload.
// msl-options: -std=metal3.0
#include <metal_stdlib>
using namespace metal;

struct Payload { float scale; uint count; };
struct Vertex { float4 position [[position]]; float2 uv [[user(locn0)]]; };
struct Primitive { float4 color [[user(locn1)]]; bool culled [[primitive_culled]]; };
using Mesh = mesh<Vertex, Primitive, 64, 32, topology::triangle>;

[[object]] void object_main(object_data Payload &payload [[payload]], mesh_grid_properties grid,
                            constant float &scale [[buffer(0)]],
                            uint tid [[thread_index_in_threadgroup]]) {
  if (tid == 0) {
    payload.scale = scale;
    payload.count = 3;
    grid.set_threadgroups_per_grid(uint3(4, 1, 1));
  }
}

[[mesh]] void mesh_main(Mesh out, const object_data Payload &payload [[payload]],
                        uint tid [[thread_index_in_threadgroup]]) {
  threadgroup float shared[64];
  shared[tid] = payload.scale * float(tid);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (tid < 3) {
    Vertex v;
    v.position = float4(shared[tid], 0.0, 0.0, 1.0);
    v.uv = float2(0.0);
    out.set_vertex(tid, v);
    out.set_index(tid, tid);
  }
  if (tid == 0) {
    Primitive p;
    p.color = float4(1.0);
    p.culled = false;
    out.set_primitive(0, p);
    out.set_primitive_count(payload.count / 3);
  }
}

// CHECK-REFLECTION: "name": "object_main"
// CHECK-REFLECTION: "builtin": "payload"
// CHECK-REFLECTION: "builtin": "mesh_grid_properties"
// CHECK-REFLECTION: "stage": "object"
// CHECK-REFLECTION: "builtin": "mesh"
// CHECK-REFLECTION: "stage": "mesh"
// The mesh operations reach the runtime's hooks; neither function is a
// kernel entry.
// CHECK-IR: call void @__msl_mesh_set_threadgroups_per_grid
// CHECK-IR: call void @__msl_mesh_set_vertex
// CHECK-IR: call void @__msl_mesh_set_primitive_count
// CHECK-IR-NOT: spir_kernel
