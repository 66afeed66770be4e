// Structs are copied out of an object payload (object_data memory) and
// passed by value, as mesh functions do.
// msl-options: -std=metal3.0
#include <metal_stdlib>
using namespace metal;

struct Vertex { float4 position [[position]]; };
struct Payload { Vertex v[4]; };
using Mesh = mesh<Vertex, void, 4, 2, topology::triangle>;

[[mesh]] void m(Mesh out, const object_data Payload &p [[payload]],
                uint i [[thread_index_in_threadgroup]]) {
  Vertex copy = p.v[i];
  copy.position.x += 1.0;
  out.set_vertex(i, p.v[i]);
  out.set_vertex(i + 1, copy);
}
// CHECK-IR: call void @__msl_mesh_set_vertex
