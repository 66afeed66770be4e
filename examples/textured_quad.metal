// A textured quad: a vertex function reading per-vertex attributes through
// [[stage_in]] and a fragment function sampling a texture. Compiled (and
// reflected) by msld; running graphics stages is not part of msld yet.
#include <metal_stdlib>
using namespace metal;

struct VertexIn {
  float2 position [[attribute(0)]];
  float2 uv [[attribute(1)]];
};

struct VertexOut {
  float4 position [[position]];
  float2 uv [[user(uv)]];
};

struct Transform {
  float4x4 mvp;
};

vertex VertexOut quad_vertex(VertexIn in [[stage_in]], constant Transform &t [[buffer(1)]]) {
  VertexOut out;
  out.position = t.mvp * float4(in.position, 0, 1);
  out.uv = in.uv;
  return out;
}

fragment float4 quad_fragment(VertexOut in [[stage_in]], texture2d<float> image [[texture(0)]],
                              sampler linear [[sampler(0)]]) {
  return image.sample(linear, in.uv);
}
