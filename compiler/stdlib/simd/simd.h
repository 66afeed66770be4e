// <simd/simd.h> as a Metal shader sees it: Apple's header shared by host
// and shader code. In MSL it names the shader's own vector and matrix types,
// so generated sources that include it for `vector_float4`, `simd_float4`
// or `matrix_float4x4` compile.
#pragma once
#include <metal_stdlib>

// simd_T1 is the scalar; vector_TN and simd_TN the vectors.
#define __MSL_SIMD_VECTORS(T)                                                  \
  typedef T simd_##T##1;                                                       \
  typedef T##2 vector_##T##2; typedef T##2 simd_##T##2;                        \
  typedef T##3 vector_##T##3; typedef T##3 simd_##T##3;                        \
  typedef T##4 vector_##T##4; typedef T##4 simd_##T##4;
__MSL_SIMD_VECTORS(float) __MSL_SIMD_VECTORS(half)
__MSL_SIMD_VECTORS(int) __MSL_SIMD_VECTORS(uint)
__MSL_SIMD_VECTORS(short) __MSL_SIMD_VECTORS(ushort)
__MSL_SIMD_VECTORS(char) __MSL_SIMD_VECTORS(uchar)
__MSL_SIMD_VECTORS(long) __MSL_SIMD_VECTORS(ulong)
#undef __MSL_SIMD_VECTORS
typedef bool2 vector_bool2;
typedef bool2 simd_bool2;
typedef bool3 vector_bool3;
typedef bool3 simd_bool3;
typedef bool4 vector_bool4;
typedef bool4 simd_bool4;

// matrix_TCxR and simd_TCxR: C columns of R components (metal::TCxR).
#define __MSL_SIMD_MATRIX(T, C, R)                                             \
  typedef metal::T##C##x##R matrix_##T##C##x##R;                               \
  typedef metal::T##C##x##R simd_##T##C##x##R;
#define __MSL_SIMD_MATRICES(T)                                                 \
  __MSL_SIMD_MATRIX(T, 2, 2) __MSL_SIMD_MATRIX(T, 2, 3) __MSL_SIMD_MATRIX(T, 2, 4) \
  __MSL_SIMD_MATRIX(T, 3, 2) __MSL_SIMD_MATRIX(T, 3, 3) __MSL_SIMD_MATRIX(T, 3, 4) \
  __MSL_SIMD_MATRIX(T, 4, 2) __MSL_SIMD_MATRIX(T, 4, 3) __MSL_SIMD_MATRIX(T, 4, 4)
__MSL_SIMD_MATRICES(float)
__MSL_SIMD_MATRICES(half)
#undef __MSL_SIMD_MATRICES
#undef __MSL_SIMD_MATRIX
