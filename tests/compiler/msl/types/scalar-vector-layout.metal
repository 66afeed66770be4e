// Sizes and alignments of the scalar and vector types (MSL 2.0 2.1-2.2
// tables): a 3-component vector has the size and alignment of 4.
#include <metal_stdlib>
using namespace metal;

static_assert(sizeof(bool) == 1 && sizeof(char) == 1 && sizeof(uchar) == 1, "8-bit");
static_assert(sizeof(short) == 2 && sizeof(ushort) == 2 && sizeof(half) == 2, "16-bit");
static_assert(sizeof(int) == 4 && sizeof(uint) == 4 && sizeof(float) == 4, "32-bit");
static_assert(sizeof(size_t) == 8 && sizeof(ptrdiff_t) == 8, "64-bit size_t, ptrdiff_t");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2");
static_assert(sizeof(float3) == 16 && alignof(float3) == 16, "float3 is padded to 4");
static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4");
static_assert(sizeof(half3) == 8 && alignof(half3) == 8, "half3");
static_assert(sizeof(char3) == 4 && sizeof(bool4) == 4, "char3, bool4");
static_assert(sizeof(ushort2) == 4 && sizeof(int3) == 16 && sizeof(uint4) == 16, "integer vectors");

kernel void k(device float3 *out [[buffer(0)]]) { out[1] = float3(1); }
// The second float3 starts 16 bytes in.
// CHECK-IR: %arrayidx.i = getelementptr inbounds i8, ptr %2, i64 16
