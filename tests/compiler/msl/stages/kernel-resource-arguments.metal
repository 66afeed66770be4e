// Textures and samplers are kernel arguments ([[texture(n)]],
// [[sampler(n)]]), alone or as metal::array<T, N> taking N consecutive
// indices; the CPU entry reads each as a 64-bit handle (an array: a pointer
// to its handles).
#include <metal_stdlib>
using namespace metal;

kernel void k(texture2d<float, access::read> src [[texture(0)]],
              array<texture2d<float>, 4> layers [[texture(1)]],
              sampler s [[sampler(0)]],
              texture2d<float, access::write> dst [[texture(5)]],
              texture3d<uint, access::read> volume [[texture(6)]],
              uint2 gid [[thread_position_in_grid]]) {
  float4 v = src.read(gid) + layers[gid.x % 4].sample(s, float2(0.5)) + float4(volume.read(uint3(gid, 0)));
  dst.write(v, gid);
}
// CHECK-REFLECTION: "kind": "texture"
// CHECK-REFLECTION: "access": "read"
// CHECK-REFLECTION: "array_length": 4
// CHECK-REFLECTION: "access": "write"
// CHECK-REFLECTION: "texture:1"
// CHECK-REFLECTION: "sampler:0"
// What a runtime checks a bound texture against, by Metal's names (the
// template argument is canonical: uint, not "unsigned int").
// CHECK-REFLECTION: "element_type": "float"
// CHECK-REFLECTION: "texture_type": "texture2d"
// CHECK-REFLECTION: "element_type": "uint"
// CHECK-REFLECTION: "texture_type": "texture3d"
// CHECK-IR: define dso_local void @k(ptr
// CHECK-IR: @llvm.memcpy
