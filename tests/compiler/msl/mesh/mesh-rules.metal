// Mesh shading rules: the stage attributes need Metal 3.0; a mesh argument
// belongs to mesh functions and mesh_grid_properties to object functions;
// [[payload]] only to those two stages; they return void.
// msl-options: -std=metal3.0
#include <metal_stdlib>
using namespace metal;

struct Payload { float a; };
struct V { float4 p [[position]]; };
using M = mesh<V, void, 3, 1, topology::triangle>;

[[object]] void wrong_output(M m) {} // expected-error {{argument 'm' of object function 'wrong_output': a mesh belongs to mesh functions}}
[[mesh]] void wrong_grid(mesh_grid_properties g) {} // expected-error {{mesh_grid_properties belongs to object functions}}
kernel void k(object_data Payload &p [[payload]]) {} // expected-error {{[[payload]] is for object and mesh functions; argument 'p' of kernel function 'k' cannot use it}}
[[mesh]] int returns_value(M m) { return 0; } // expected-error {{mesh function 'returns_value' must return void}}
