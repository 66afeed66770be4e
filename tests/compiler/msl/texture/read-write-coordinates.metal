// read()/write(): the coordinate, cube face (z lane), array index and mip
// level or sample index reach the hooks unchanged.
#include <metal_stdlib>
using namespace metal;

float4 rd(texture2d<float> t) { return t.read(uint2(3, 4)); }
// CHECK-IR: @__msl_texture_read_f(i64 noundef %t.coerce, <4 x i32> noundef <i32 3, i32 4, i32 0, i32 0>, i32 noundef 0, i32 noundef 0)
float4 rd_lod(texture3d<float, access::read> t) { return t.read(ushort3(1, 2, 3), 5); }
// CHECK-IR: <4 x i32> noundef <i32 1, i32 2, i32 3, i32 0>, i32 noundef 0, i32 noundef 5)
uint4 rd_cube_array(texturecube_array<uint, access::read> t) { return t.read(uint2(1, 2), 3, 4, 5); }
// CHECK-IR: @__msl_texture_read_u(i64 noundef %t.coerce, <4 x i32> noundef <i32 1, i32 2, i32 3, i32 0>, i32 noundef 4, i32 noundef 5)
float rd_ms(depth2d_ms<float> t) { return t.read(uint2(6, 7), 2); }
// CHECK-IR: <4 x i32> noundef <i32 6, i32 7, i32 0, i32 0>, i32 noundef 0, i32 noundef 2)
short4 rd_short(texture1d<short, access::read_write> t) { return t.read(uint(9)); }
// CHECK-IR: trunc <4 x i32>
void wr(texture2d_array<half, access::write> t) { t.write(half4(1, 2, 3, 4), uint2(8, 9), 10, 1); }
// CHECK-IR: @__msl_texture_write_f(i64 noundef %t.coerce, <4 x float> noundef nofpclass(nan inf) <float 1.000000e+00, float 2.000000e+00, float 3.000000e+00, float 4.000000e+00>, <4 x i32> noundef <i32 8, i32 9, i32 0, i32 0>, i32 noundef 10, i32 noundef 1)
void wr_int(texture2d<int, access::read_write> t) { t.write(int4(-1), uint2(0, 1)); t.fence(); }
// CHECK-IR: @__msl_texture_write_u(i64 noundef %t.coerce, <4 x i32> noundef <i32 -1, i32 -1, i32 -1, i32 -1>
// CHECK-IR: @__msl_texture_fence(i64 noundef %t.coerce)
uint sizes(texture2d_ms_array<float> t) { return t.get_width() + t.get_height() * t.get_array_size() + t.get_num_samples(); }
// CHECK-IR: @__msl_texture_query(i64 noundef %t.coerce, i32 noundef 0, i32 noundef 0)
// CHECK-IR: @__msl_texture_query(i64 noundef %t.coerce, i32 noundef 3, i32 noundef 0)
// CHECK-IR: @__msl_texture_query(i64 noundef %t.coerce, i32 noundef 5, i32 noundef 0)
uint mips(texture3d<float> t) { return t.get_depth(2) + t.get_num_mip_levels(); }
// CHECK-IR: @__msl_texture_query(i64 noundef %t.coerce, i32 noundef 2, i32 noundef 2)
