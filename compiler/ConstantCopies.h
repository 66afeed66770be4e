//===- ConstantCopies.h - Copying structs out of constant memory ----------===//
//
// Metal copies a struct out of `constant` memory like any other value
// (`S s = uniforms.s;`). In C++ for OpenCL the implicit copy constructor and
// copy assignment take a `__generic` reference, and a `__constant` object
// does not bind to one, so Clang rejects the copy. This consumer gives every
// class whose copy constructor (or copy assignment) is defaulted and trivial
// an implicit twin taking `const __constant T&`, defined by Sema like the
// original (a memcpy), and one taking `const volatile __generic T&` for
// Metal's object_data and ray_data memory (volatile here: see the prelude). Classes with user-written copy operations keep
// Clang's rules.
//
// It also lets temporaries meet `thread`-qualified members: Metal's
// temporaries are in thread memory, Clang's have no address space, so a
// `thread` constructor and a `const thread T&` parameter are widened to the
// generic address space (see widenThreadQualifiers).

//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

namespace clang {
class ASTConsumer;
}

namespace msl::compiler {

/// A consumer to run before code generation (and while precompiling the
/// stdlib, so both paths see the same classes).
std::unique_ptr<clang::ASTConsumer> createConstantCopiesConsumer();

} // namespace msl::compiler
