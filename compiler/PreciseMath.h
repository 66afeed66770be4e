//===- PreciseMath.h - metal::precise without fast-math assumptions -------===//
//
// Metal's -ffast-math (the default) applies to the whole compile, yet
// metal::precise:: functions must keep IEEE behaviour (NaN, infinities,
// exact rounding of +, -, *, /, sqrt) and the accurate kernels of
// __msl_libm.h must not be reassociated. Clang cannot scope that: a
// `#pragma float_control(precise, on)` leaves the fast flags on builtin
// calls and the fast-math function attributes in place. So after Clang, the
// precise code is made precise in the IR, before anything is optimized.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace llvm {
class Module;
}

namespace msl::compiler {

/// For every function defined in metal::precise or __msl_libm (recognised by
/// its mangled name): inlines what it calls, then clears the fast-math flags
/// and !fpmath accuracy of its instructions, its nofpclass(nan inf) argument and return
/// attributes (also at its call sites) and sets its fast-math function
/// attributes to "false". Inlining it later makes its caller's fast-math
/// function attributes "false" too (LLVM merges them), so the backend's own
/// fast-math choices (NVPTX div.approx, sqrt.approx) do not apply to it.
void makePreciseMathPrecise(llvm::Module &m);

/// NVPTX, after optimization: every half (or half vector) fdiv compiled
/// with fast math (arcp/afn flags, or an "unsafe-fp-math" function) becomes
/// fpext, llvm.nvvm.div.rn.f (div.rn.f32) per lane, fptrunc. Table 38 wants
/// half x / y correctly rounded whatever the fast-math mode, and the backend
/// promotes a fast half fdiv to div.approx.f32, which rounds 45 of 1.8e7
/// quotients wrongly (msl-conformance, H200); the correctly rounded float
/// quotient rounded to half is the correctly rounded half quotient (24 >=
/// 2 * 11 + 2 bits). The intrinsic keeps the choice from the backend's
/// function-wide fast-math options; it runs after InstCombine, which would
/// fold it back into an fdiv.
void correctlyRoundHalfDivision(llvm::Module &m);

} // namespace msl::compiler
