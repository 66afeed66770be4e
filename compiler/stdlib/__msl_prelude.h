// __msl_prelude.h - implicitly included (-include) before every MSL source.
//
// Maps the Metal language onto Clang's C++ for OpenCL 1.0 mode: address-space
// keywords, scalar and vector type names, and vector constructors. It is
// parsed on every compile, so it holds only what plain MSL code (without
// #include <metal_stdlib>) can use; everything else lives in the headers.
#ifndef __MSL_PRELUDE_H
#define __MSL_PRELUDE_H

// Apple's compiler defines __METAL__ in every compile (headers shared with
// host C++ test it, as PyTorch's c10/metal do); __METAL_VERSION__ and
// __METAL_MACOS__/__METAL_IOS__ come from the command line.
#define __METAL__ 1

// ---- half ------------------------------------------------------------------
// `half` is an OpenCL keyword that is usable for arithmetic only with
// cl_khr_fp16. x86-64 reports the extension as supported; NVPTX needs
// `-Xclang -cl-ext=+cl_khr_fp16` (see FLAGS.txt). Without it we fall back to
// _Float16 (same IR type), which loses only the `1.0h` literal suffix.
#ifdef cl_khr_fp16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#else
#define half _Float16
#endif

// ---- address spaces and function qualifiers --------------------------------
#define kernel __kernel
#define device __global
#define constant __constant
#define threadgroup __local
#define thread __private
// Metal's further address spaces. Clang's OpenCL mode has five (private,
// global, local, constant, generic); Metal has eight, and member functions
// may be overloaded on each (spirv-cross's spvUnsafeArray and
// spvStorageMatrix are). Each extra one is its nearest OpenCL space made
// volatile: that keeps the overloads apart, and accesses stay correct (never
// cached in registers), at some cost in speed for these rarely used spaces.
#define threadgroup_imageblock __local volatile
#define ray_data __private volatile
#define object_data __global volatile
// `global` and `local` are OpenCL keywords but ordinary identifiers in Metal
// (`float3 local = ...`); rename them so such code parses.
#define global __msl_id_global
#define local __msl_id_local
// Likewise the OpenCL image access qualifiers (Metal: access::read_write).
#define read_only __msl_id_read_only
#define write_only __msl_id_write_only
#define read_write __msl_id_read_write

// ---- diagnostics ---------------------------------------------------------------
// x86-64 warns that passing 256-bit vectors (long4, ulong4) by value without
// AVX changes the host ABI. Metal has no such ABI concern and Apple's compiler
// never warns, so with -Werror it would reject valid shaders.
#pragma clang diagnostic ignored "-Wpsabi"
// Metal has the .rgba component names; OpenCL before 3.0 warns about them.
#pragma clang diagnostic ignored "-Wopencl-unsupported-rgba"

// ---- scalar types -------------------------------------------------------------
// -cl-no-stdinc drops opencl-c-base.h, which is where OpenCL declares these.
typedef unsigned char uchar;
typedef unsigned short ushort;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;

// ---- vector types -------------------------------------------------------------
// Metal's vector types are Clang ext_vector types (swizzles, element-wise
// operators, same size and alignment as Metal: a 3-vector occupies 4 slots).
// OpenCL forbids `bool` vector elements, so boolN uses plain `char` (0/1),
// which is a type distinct from charN (`signed char`) and ucharN, keeping
// overloads on boolN apart. A comparison of two vectors yields OpenCL's
// -1/0 integer vector, not boolN; the library functions that take masks
// (select, all, any) accept both.
#define __MSL_VEC_TYPES(E, NAME)                                               \
  typedef E NAME##2 __attribute__((ext_vector_type(2)));                       \
  typedef E NAME##3 __attribute__((ext_vector_type(3)));                       \
  typedef E NAME##4 __attribute__((ext_vector_type(4)));
__MSL_VEC_TYPES(char, bool)
__MSL_VEC_TYPES(signed char, char)
__MSL_VEC_TYPES(unsigned char, uchar)
__MSL_VEC_TYPES(short, short)
__MSL_VEC_TYPES(unsigned short, ushort)
__MSL_VEC_TYPES(int, int)
__MSL_VEC_TYPES(unsigned int, uint)
__MSL_VEC_TYPES(long, long)
__MSL_VEC_TYPES(unsigned long, ulong)
__MSL_VEC_TYPES(half, half)
__MSL_VEC_TYPES(float, float)
// bfloat (Metal 3.1): Clang's __bf16, which both targets compute with.
#if __METAL_VERSION__ >= 310
#define __HAVE_BFLOAT__ 1
typedef __bf16 bfloat;
__MSL_VEC_TYPES(__bf16, bfloat)
#else
typedef __bf16 bfloat __attribute__((unavailable("needs Metal 3.1 (-std=metal3.1 or later)")));
#endif
#undef __MSL_VEC_TYPES

namespace metal {
#define __MSL_USING_VEC(NAME) using ::NAME##2; using ::NAME##3; using ::NAME##4;
__MSL_USING_VEC(bool) __MSL_USING_VEC(char) __MSL_USING_VEC(uchar)
__MSL_USING_VEC(short) __MSL_USING_VEC(ushort) __MSL_USING_VEC(int)
__MSL_USING_VEC(uint) __MSL_USING_VEC(long) __MSL_USING_VEC(ulong)
__MSL_USING_VEC(half) __MSL_USING_VEC(float)
using ::bfloat;
#if __METAL_VERSION__ >= 310
__MSL_USING_VEC(bfloat)
#endif
#undef __MSL_USING_VEC
using ::uchar; using ::ushort; using ::uint; using ::ulong; using ::size_t; using ::ptrdiff_t;

namespace detail {
// ---- type traits used by the constructors and the library ------------------
// enable_if_t<C> is `int`, used as `enable_if_t<C> = 0` so that overloads
// differing only in their constraint are distinct templates.
template <bool B, class T = int> struct enable_if {};
template <class T> struct enable_if<true, T> { using type = T; };
template <bool B, class T = int> using enable_if_t = typename enable_if<B, T>::type;
template <class A, class B> constexpr bool is_same_v = __is_same(A, B);

// vec<T>: element type and component count of a scalar (n == 1) or vector.
// By-value template parameters drop the address space (`float4 __private`
// deduces as float4), so these match the types users pass.
template <class T> struct vec {
  using elem = T;
  static constexpr int n = 1;
  static constexpr bool is_vector = false;
};
template <class E, int N> struct vec<E __attribute__((ext_vector_type(N)))> {
  using elem = E;
  static constexpr int n = N;
  static constexpr bool is_vector = true;
};
// vec_of<E, N>: the scalar (N == 1) or vector type with N components of E.
template <class E, int N> struct vec_of { using type = E __attribute__((ext_vector_type(N))); };
template <class E> struct vec_of<E, 1> { using type = E; };
template <class E, int N> using vec_of_t = typename vec_of<E, N>::type;

// cvt<E>(x): one component converted to the element type E. `char` is the
// element type of boolN only, so it normalises to 0/1 (Metal's true is 1,
// OpenCL comparison masks are -1).
template <class E, class S> constexpr E cvt(S x) {
  if constexpr (is_same_v<E, char>)
    return static_cast<E>(static_cast<bool>(x));
  else
    return static_cast<E>(x);
}

// Vector constructors must be constant-evaluable (program-scope
// `constant float4 c = float4(...)` needs a constant initializer), but Clang
// 19 cannot constant-evaluate vector subscripts or swizzles of parameters.
// __builtin_shufflevector / __builtin_convertvector and splat casts are
// constant-evaluable, so concatenation works on 4-wide vectors through them.

// to_elems<E>(x): x converted to a vector of E with the same component count
// (a scalar becomes a 4-wide splat). boolN (E == char) normalises to 0/1.
template <class E, class S> constexpr auto to_elems(S x) {
  if constexpr (!vec<S>::is_vector)
    return (vec_of_t<E, 4>)cvt<E>(x);
  else if constexpr (is_same_v<E, char>)
    return __builtin_convertvector(-(x != (S)0), vec_of_t<E, vec<S>::n>);
  else
    return __builtin_convertvector(x, vec_of_t<E, vec<S>::n>);
}

// widen4<E>(x): x's components in the low lanes of a 4-wide vector of E.
template <class E, class S> constexpr vec_of_t<E, 4> widen4(S x) {
  auto v = to_elems<E>(x);
  if constexpr (vec<S>::n == 2) return __builtin_shufflevector(v, v, 0, 1, 0, 1);
  else if constexpr (vec<S>::n == 3) return __builtin_shufflevector(v, v, 0, 1, 2, 0);
  else return v;
}

// Lane j of (acc with K valid lanes) ++ (next, N lanes): index into
// shufflevector's 8-lane concatenation of its two operands. Lanes past both
// keep acc's (zero) value.
constexpr int cat_index(int j, int k, int n) { return j < k ? j : (j < k + n ? j - k + 4 : j); }

template <class E, int K> constexpr vec_of_t<E, 4> cat(vec_of_t<E, 4> acc) { return acc; }
template <class E, int K, class A0, class... As>
constexpr vec_of_t<E, 4> cat(vec_of_t<E, 4> acc, A0 a0, As... as) {
  vec_of_t<E, 4> w = widen4<E>(a0);
  constexpr int n = vec<A0>::n;
  vec_of_t<E, 4> r = __builtin_shufflevector(acc, w, cat_index(0, K, n), cat_index(1, K, n),
                                             cat_index(2, K, n), cat_index(3, K, n));
  return cat<E, K + vec<A0>::n>(r, as...);
}

template <class A0> constexpr A0 first(A0 a0) { return a0; }

// unpack(x): a class-type argument (packed_floatN, see metal_packed) as the
// ordinary vector it holds; anything else unchanged.
template <class A> constexpr auto unpack(A a) {
  if constexpr (__is_class(A)) return a.__msl_unpack();
  else return a;
}

// make<V>(args...): Metal vector constructor semantics.
//   V()            zero
//   V(scalar)      splat (value-converted)
//   V(vectorN)     element-wise value conversion (not OpenCL's bitcast)
//   V(vectorM>N)   the first N components, converted (float3(float4))
//   V(a, b, ...)   concatenation of scalars and vectors, N components at
//                  most; missing trailing components are zero, as in the
//                  braced form `uint4 v = {x, uint2(0)};` (spirv-cross writes
//                  uint4(x, uint2(0)), and Apple's compiler accepts it)
template <class V, class... A> constexpr V make(A... a) {
  using E = typename vec<V>::elem;
  constexpr int N = vec<V>::n;
  if constexpr ((__is_class(A) || ...)) {
    return make<V>(unpack(a)...);
  } else if constexpr (sizeof...(A) == 0) {
    return (V)(E)0;
  } else if constexpr (sizeof...(A) == 1 && (!vec<A>::is_vector && ...)) {
    return (V)cvt<E>(a...);
  } else if constexpr (sizeof...(A) == 1 && ((vec<A>::n == N) && ...)) {
    return to_elems<E>(first(a...));
  } else if constexpr (sizeof...(A) == 1 && ((vec<A>::n > N) && ...)) {
    auto w = widen4<E>(first(a...));
    if constexpr (N == 2) return __builtin_shufflevector(w, w, 0, 1);
    else return __builtin_shufflevector(w, w, 0, 1, 2);
  } else {
    static_assert(sizeof...(A) > 1, "Metal vector constructor: a single vector argument needs "
                                    "at least as many components as the vector has");
    static_assert((vec<A>::n + ...) <= N,
                  "Metal vector constructor: the arguments supply more components "
                  "than the vector has");
    vec_of_t<E, 4> r = cat<E, 0>((vec_of_t<E, 4>)(E)0, a...);
    if constexpr (N == 2) return __builtin_shufflevector(r, r, 0, 1);
    else if constexpr (N == 3) return __builtin_shufflevector(r, r, 0, 1, 2);
    else return r;
  }
}
} // namespace detail
} // namespace metal

// __msl_type<float4>: the type float4 where a declarator looks like a call
// (`float4 (&out)[2]`) and the constructor macro below would expand; the
// frontend's source repair writes it.
template <class T> using __msl_type = T;

// ---- vector constructors ------------------------------------------------------
// `float4(a, b, c, d)` is rejected for ext_vector types and `float4(int4)`
// would be a bitcast, so each vector name is also a function-like macro. It
// expands only when the name is followed by `(`, so declarations, casts and
// template arguments (`float4 v;`, `(float4)x`, `vec<float4>`) are untouched.
// It expands to a function name, not an expression, so the qualified calls
// `metal::float4(...)` and `::float4(...)` work too (the function is declared
// in both namespaces).
#define __MSL_VEC_CTORS(NAME)                                                  \
  template <class... A> constexpr NAME##2 __msl_make_##NAME##2(A... a) {      \
    return metal::detail::make<NAME##2>(a...);                                \
  }                                                                            \
  template <class... A> constexpr NAME##3 __msl_make_##NAME##3(A... a) {      \
    return metal::detail::make<NAME##3>(a...);                                \
  }                                                                            \
  template <class... A> constexpr NAME##4 __msl_make_##NAME##4(A... a) {      \
    return metal::detail::make<NAME##4>(a...);                                \
  }                                                                            \
  namespace metal {                                                            \
  using ::__msl_make_##NAME##2; using ::__msl_make_##NAME##3;                  \
  using ::__msl_make_##NAME##4;                                                \
  }
__MSL_VEC_CTORS(bool) __MSL_VEC_CTORS(char) __MSL_VEC_CTORS(uchar)
__MSL_VEC_CTORS(short) __MSL_VEC_CTORS(ushort) __MSL_VEC_CTORS(int)
__MSL_VEC_CTORS(uint) __MSL_VEC_CTORS(long) __MSL_VEC_CTORS(ulong)
__MSL_VEC_CTORS(half) __MSL_VEC_CTORS(float)
#if __METAL_VERSION__ >= 310
__MSL_VEC_CTORS(bfloat)
#define bfloat2(...) __msl_make_bfloat2(__VA_ARGS__)
#define bfloat3(...) __msl_make_bfloat3(__VA_ARGS__)
#define bfloat4(...) __msl_make_bfloat4(__VA_ARGS__)
#endif
#undef __MSL_VEC_CTORS
#define bool2(...) __msl_make_bool2(__VA_ARGS__)
#define bool3(...) __msl_make_bool3(__VA_ARGS__)
#define bool4(...) __msl_make_bool4(__VA_ARGS__)
#define char2(...) __msl_make_char2(__VA_ARGS__)
#define char3(...) __msl_make_char3(__VA_ARGS__)
#define char4(...) __msl_make_char4(__VA_ARGS__)
#define uchar2(...) __msl_make_uchar2(__VA_ARGS__)
#define uchar3(...) __msl_make_uchar3(__VA_ARGS__)
#define uchar4(...) __msl_make_uchar4(__VA_ARGS__)
#define short2(...) __msl_make_short2(__VA_ARGS__)
#define short3(...) __msl_make_short3(__VA_ARGS__)
#define short4(...) __msl_make_short4(__VA_ARGS__)
#define ushort2(...) __msl_make_ushort2(__VA_ARGS__)
#define ushort3(...) __msl_make_ushort3(__VA_ARGS__)
#define ushort4(...) __msl_make_ushort4(__VA_ARGS__)
#define int2(...) __msl_make_int2(__VA_ARGS__)
#define int3(...) __msl_make_int3(__VA_ARGS__)
#define int4(...) __msl_make_int4(__VA_ARGS__)
#define uint2(...) __msl_make_uint2(__VA_ARGS__)
#define uint3(...) __msl_make_uint3(__VA_ARGS__)
#define uint4(...) __msl_make_uint4(__VA_ARGS__)
#define long2(...) __msl_make_long2(__VA_ARGS__)
#define long3(...) __msl_make_long3(__VA_ARGS__)
#define long4(...) __msl_make_long4(__VA_ARGS__)
#define ulong2(...) __msl_make_ulong2(__VA_ARGS__)
#define ulong3(...) __msl_make_ulong3(__VA_ARGS__)
#define ulong4(...) __msl_make_ulong4(__VA_ARGS__)
#define half2(...) __msl_make_half2(__VA_ARGS__)
#define half3(...) __msl_make_half3(__VA_ARGS__)
#define half4(...) __msl_make_half4(__VA_ARGS__)
#define float2(...) __msl_make_float2(__VA_ARGS__)
#define float3(...) __msl_make_float3(__VA_ARGS__)
#define float4(...) __msl_make_float4(__VA_ARGS__)

#endif // __MSL_PRELUDE_H
