// texture2d_array in each of its overload forms: read and write with uint2
// or ushort2 coordinates, a uint or ushort array index and an optional mip
// level; sample with an array index, offset, bias, level, gradient2d and
// min_lod_clamp; gather with an offset and a component; the queries
// get_width/get_height (of a level), get_array_size and get_num_mip_levels;
// and a kernel's texture2d_array arguments in the reflection. The hooks get
// the coordinate, array index and level unchanged.
#include <metal_stdlib>
using namespace metal;

float4 rd(texture2d_array<float> t) { return t.read(uint2(3, 4), 5u); }
// CHECK-IR: @__msl_texture_read_f(i64 noundef %t.coerce, <4 x i32> noundef <i32 3, i32 4, i32 0, i32 0>, i32 noundef 5, i32 noundef 0)
float4 rd_lod(texture2d_array<float, access::read> t) { return t.read(uint2(6, 7), 8u, 2u); }
// CHECK-IR: <4 x i32> noundef <i32 6, i32 7, i32 0, i32 0>, i32 noundef 8, i32 noundef 2)
half4 rd_short(texture2d_array<half, access::read> t) { return t.read(ushort2(9, 10), ushort(11), ushort(1)); }
// CHECK-IR: <4 x i32> noundef <i32 9, i32 10, i32 0, i32 0>, i32 noundef 11, i32 noundef 1)
uint4 rd_uint(texture2d_array<uint, access::read_write> t, uint layer) { return t.read(ushort2(1, 2), layer); }
// CHECK-IR: @__msl_texture_read_u(i64 noundef %t.coerce, <4 x i32> noundef <i32 1, i32 2, i32 0, i32 0>, i32 noundef %layer, i32 noundef 0)

void wr(texture2d_array<float, access::write> t) { t.write(float4(0.5f), uint2(12, 13), 14u); }
// CHECK-IR: <4 x i32> noundef <i32 12, i32 13, i32 0, i32 0>, i32 noundef 14, i32 noundef 0)
void wr_short_lod(texture2d_array<half, access::write> t) { t.write(half4(1), ushort2(15, 16), ushort(17), ushort(3)); }
// CHECK-IR: <4 x i32> noundef <i32 15, i32 16, i32 0, i32 0>, i32 noundef 17, i32 noundef 3)
void wr_int(texture2d_array<int, access::read_write> t) { t.write(int4(-2), uint2(18, 19), 20u, 0u); t.fence(); }
// CHECK-IR: @__msl_texture_write_u(i64 noundef %t.coerce, <4 x i32> noundef <i32 -2, i32 -2, i32 -2, i32 -2>, <4 x i32> noundef <i32 18, i32 19, i32 0, i32 0>, i32 noundef 20, i32 noundef 0)

constexpr sampler lin(filter::linear, mip_filter::linear);
float4 smp(texture2d_array<float> t) { return t.sample(lin, float2(0.25f, 0.75f), 21u); }
// CHECK-IR: <float 2.500000e-01, float 7.500000e-01, float 0.000000e+00, float 0.000000e+00>, i32 noundef 21, <4 x i32> noundef zeroinitializer, i32 noundef 0,
float4 smp_offset(texture2d_array<float> t) { return t.sample(lin, float2(0.5f), ushort(22), int2(1, -1)); }
// CHECK-IR: i32 noundef 22, <4 x i32> noundef <i32 1, i32 -1, i32 0, i32 0>, i32 noundef 0,
float4 smp_bias(texture2d_array<float> t) { return t.sample(lin, float2(0.5f), 23u, bias(1.5f)); }
// CHECK-IR: i32 noundef 23, <4 x i32> noundef zeroinitializer, i32 noundef 1, float noundef nofpclass(nan inf) 1.500000e+00
half4 smp_level(texture2d_array<half> t) { return t.sample(lin, float2(0.5f), 24u, level(2.0f), int2(2, 0)); }
// CHECK-IR: i32 noundef 24, <4 x i32> noundef <i32 2, i32 0, i32 0, i32 0>, i32 noundef 2, float noundef nofpclass(nan inf) 2.000000e+00
float4 smp_grad(texture2d_array<float> t) { return t.sample(lin, float2(0.5f), 25u, gradient2d(float2(1, 0), float2(0, 1))); }
// CHECK-IR: i32 noundef 25, <4 x i32> noundef zeroinitializer, i32 noundef 3, float noundef nofpclass(nan inf) 0.000000e+00, <4 x float> noundef nofpclass(nan inf) <float 1.000000e+00, float 0.000000e+00, float 0.000000e+00, float 0.000000e+00>, <4 x float> noundef nofpclass(nan inf) <float 0.000000e+00, float 1.000000e+00,
float4 smp_clamp(texture2d_array<float> t) { return t.sample(lin, float2(0.5f), 26u, bias(0.5f), min_lod_clamp(1.25f)); }
// CHECK-IR: i32 noundef 26, <4 x i32> noundef zeroinitializer, i32 noundef 1, float noundef nofpclass(nan inf) 5.000000e-01, <4 x float> noundef nofpclass(nan inf) zeroinitializer, <4 x float> noundef nofpclass(nan inf) zeroinitializer, float noundef nofpclass(nan inf) 1.250000e+00)

float4 gth(texture2d_array<float> t) { return t.gather(lin, float2(0.5f), 27u); }
// CHECK-IR: @__msl_texture_gather_f(i64 noundef %t.coerce,
// CHECK-IR: i32 noundef 27, <4 x i32> noundef zeroinitializer, i32 noundef 0)
uint4 gth_comp(texture2d_array<uint> t) { return t.gather(lin, float2(0.5f), ushort(28), int2(-1, 1), component::w); }
// CHECK-IR: i32 noundef 28, <4 x i32> noundef <i32 -1, i32 1, i32 0, i32 0>, i32 noundef 3)

uint dims(texture2d_array<float> t) { return t.get_width() + t.get_height(1) + t.get_array_size() + t.get_num_mip_levels(); }
// CHECK-IR: @__msl_texture_query(i64 noundef %t.coerce, i32 noundef 0, i32 noundef 0)
// CHECK-IR: @__msl_texture_query(i64 noundef %t.coerce, i32 noundef 1, i32 noundef 1)
// CHECK-IR: @__msl_texture_query(i64 noundef %t.coerce, i32 noundef 3, i32 noundef 0)
// CHECK-IR: @__msl_texture_query(i64 noundef %t.coerce, i32 noundef 4, i32 noundef 0)

kernel void k(texture2d_array<float, access::read> src [[texture(0)]],
              texture2d_array<half, access::write> dst [[texture(1)]],
              device uint *sizes [[buffer(0)]],
              uint3 gid [[thread_position_in_grid]]) {
  if (gid.x >= src.get_width() || gid.y >= src.get_height() || gid.z >= src.get_array_size())
    return;
  dst.write(half4(src.read(gid.xy, gid.z)), gid.xy, gid.z);
  sizes[0] = src.get_num_mip_levels();
}
// CHECK-REFLECTION: "name": "src"
// CHECK-REFLECTION: "texture2d_array"
