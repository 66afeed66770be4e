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

// Metal 3.2's `coherent` (memory coherent across threadgroups) qualifies
// device pointers. It is accepted so such sources compile, but it has no
// effect yet: making plain accesses through it bypass NVPTX's L1 cache
// (ld.cg / st.cg) is still to do. Below 3.2 it stays an ordinary identifier.
#if __METAL_VERSION__ >= 320
#define coherent
#endif

// `constant T x [[function_constant(i)]];` gets the compile's value as its
// initializer and a companion constexpr flag `__msl_fc_defined_x`.
#define is_function_constant_defined(name) __msl_fc_defined_##name

#endif // __MSL_STAGE_H
