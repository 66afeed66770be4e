// __msl_stage.h - implicitly included (-include) after __msl_prelude.h.
//
// The parts of the language that the frontend implements together with these
// macros (see compiler/Attributes.cpp): stage qualifiers and function
// constants.
#ifndef __MSL_STAGE_H
#define __MSL_STAGE_H

// `kernel` is OpenCL's __kernel (see the prelude). `vertex` and `fragment`
// mark the function for the stage collector, which checks and reflects it;
// the function itself is compiled as an ordinary function.
#define vertex __attribute__((annotate("msl:stage:vertex")))
#define fragment __attribute__((annotate("msl:stage:fragment")))

// Metal kernels take references to structs with constructors (spirv-cross's
// spvUnsafeArray, tint's tint_array); plain OpenCL allows only POD pointees.
#pragma OPENCL EXTENSION __cl_clang_non_portable_kernel_param_types : enable
// C++ bit-fields (`uint lo : 4;`), which Metal has and OpenCL forbids
// ("bit-fields are not supported in OpenCL") unless this Clang extension is on.
#pragma OPENCL EXTENSION __cl_clang_bitfields : enable

// Metal 3.2's `coherent(device)` (memory coherent across threadgroups)
// qualifies device pointers. It is accepted so such sources compile, but it
// has no effect yet: making plain accesses through it bypass NVPTX's L1
// cache (ld.cg / st.cg) is still to do. A bare `coherent` (without its
// scope) is removed by source repair (compiler/SourceRepair.cpp). Below 3.2
// it stays an ordinary identifier.
#if __METAL_VERSION__ >= 320
#define coherent(...)
#endif

// `constant T x [[function_constant(i)]];` gets the compile's value as its
// initializer and a companion constexpr flag `__msl_fc_defined_x`.
#define is_function_constant_defined(name) __msl_fc_defined_##name

// Helpers the frontend's source repair writes (compiler/SourceRepair.h) where
// C++ for OpenCL rejects valid Metal:
//   __msl_b(mask)          a vector comparison's mask as Metal's boolN (0/1)
//   __msl_sc<V>(scalar)    a scalar converted to vector V's element type
//   __msl_scast<T>(x)      static_cast with Metal's lane-wise vector conversion
template <class T> struct __msl_lanes { using elem = T; static constexpr int n = 1; };
template <class E, int N> struct __msl_lanes<E __attribute__((ext_vector_type(N)))> {
  using elem = E;
  static constexpr int n = N;
};
template <class T> constexpr auto __msl_b(T x) {
  if constexpr (__msl_lanes<T>::n == 1)
    return x;
  else
    return __builtin_convertvector(x != (typename __msl_lanes<T>::elem)0,
                                   char __attribute__((ext_vector_type(__msl_lanes<T>::n)))) &
           (char __attribute__((ext_vector_type(__msl_lanes<T>::n))))1;
}
template <class V, class S> constexpr typename __msl_lanes<V>::elem __msl_sc(S s) {
  return (typename __msl_lanes<V>::elem)s;
}
// __msl_value(x): x as a value of its type without address space (by-value
// deduction drops it), for ?: operands that differ only in address space.
template <class T> constexpr T __msl_value(T x) { return x; }

// __msl_thread_ref(r): a generic reference as the thread reference it is.
// C++ for OpenCL gives `this` of an unqualified method, and unqualified
// references, the generic address space; Metal has no generic one: they are
// thread memory, so `thread T& operator[](int i) { return v[i]; }` binds.
template <class T> inline __private T &__msl_thread_ref(__generic T &r) { return *(__private T *)&r; }

// __msl_lanewise(x): wraps the operand of a C-style cast between vector
// types, `(float4)__msl_lanewise(i)`, so that the cast converts lane by lane
// as in Metal instead of reinterpreting the bits (OpenCL's meaning).
template <class V> struct __msl_lanewise_t {
  V v;
  template <class T> constexpr operator T() const {
    if constexpr (__msl_lanes<T>::n > 1 && __msl_lanes<T>::n == __msl_lanes<V>::n)
      return __builtin_convertvector(v, T);
    else
      return (T)v;
  }
};
template <class V> constexpr __msl_lanewise_t<V> __msl_lanewise(V v) { return {v}; }
// (Only written where a vector value is the target, so by value: that also
// drops the operand's address space.)
template <class T, class U> constexpr T __msl_scast(U u) {
  if constexpr (__msl_lanes<U>::n == __msl_lanes<T>::n)
    return __builtin_convertvector(u, T);
  else
    return static_cast<T>(u);
}

// __MSL_KERNEL_NAME(f): a fresh name for the kernel source repair writes for
// each instantiation of a kernel template f (`template [[host_name("x")]]
// kernel void f<float>(...);`): f_msl_instance_<n>. Its API name is the
// host name.
#define __MSL_CAT_(a, b) a##b
#define __MSL_CAT(a, b) __MSL_CAT_(a, b)
#define __MSL_KERNEL_NAME(f) __MSL_CAT(f##_msl_instance_, __COUNTER__)

#endif // __MSL_STAGE_H
