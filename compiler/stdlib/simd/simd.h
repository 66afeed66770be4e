// <simd/simd.h> as a Metal shader sees it: Apple's header shared by host
// and shader code. In MSL it names the shader's own vector types, so
// generated sources that include it for `vector_float4` / `simd_float4`
// compile. Matrix types (simd_float4x4) come with the matrix support.
#pragma once
#include <metal_stdlib>
typedef float simd_float1;
typedef float2 vector_float2;
typedef float2 simd_float2;
typedef float3 vector_float3;
typedef float3 simd_float3;
typedef float4 vector_float4;
typedef float4 simd_float4;
typedef half simd_half1;
typedef half2 vector_half2;
typedef half2 simd_half2;
typedef half3 vector_half3;
typedef half3 simd_half3;
typedef half4 vector_half4;
typedef half4 simd_half4;
typedef int simd_int1;
typedef int2 vector_int2;
typedef int2 simd_int2;
typedef int3 vector_int3;
typedef int3 simd_int3;
typedef int4 vector_int4;
typedef int4 simd_int4;
typedef uint simd_uint1;
typedef uint2 vector_uint2;
typedef uint2 simd_uint2;
typedef uint3 vector_uint3;
typedef uint3 simd_uint3;
typedef uint4 vector_uint4;
typedef uint4 simd_uint4;
typedef short simd_short1;
typedef short2 vector_short2;
typedef short2 simd_short2;
typedef short3 vector_short3;
typedef short3 simd_short3;
typedef short4 vector_short4;
typedef short4 simd_short4;
typedef ushort simd_ushort1;
typedef ushort2 vector_ushort2;
typedef ushort2 simd_ushort2;
typedef ushort3 vector_ushort3;
typedef ushort3 simd_ushort3;
typedef ushort4 vector_ushort4;
typedef ushort4 simd_ushort4;
typedef char simd_char1;
typedef char2 vector_char2;
typedef char2 simd_char2;
typedef char3 vector_char3;
typedef char3 simd_char3;
typedef char4 vector_char4;
typedef char4 simd_char4;
typedef uchar simd_uchar1;
typedef uchar2 vector_uchar2;
typedef uchar2 simd_uchar2;
typedef uchar3 vector_uchar3;
typedef uchar3 simd_uchar3;
typedef uchar4 vector_uchar4;
typedef uchar4 simd_uchar4;
typedef bool2 vector_bool2;
typedef bool2 simd_bool2;
typedef bool3 vector_bool3;
typedef bool3 simd_bool3;
typedef bool4 vector_bool4;
typedef bool4 simd_bool4;
