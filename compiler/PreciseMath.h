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

} // namespace msl::compiler
