//===- Cxx17Extensions.h - C++17 features warn as extensions in Metal 1-3 --===//
//
// Metal 1.x-3.x are C++14-based: Apple's compiler accepts C++17 features
// there as extensions, with Clang's C++14-mode warnings in group
// c++17-extensions ("constexpr if is a C++17 extension"), which projects
// silence with -Wno-c++17-extensions. Metal 4.0 is C++17-based: no warning.
//
// msld parses every language version as C++ for OpenCL 1.0, which is
// C++17-based, and cannot parse Metal 1-3 as C++14 instead: class template
// argument deduction (which msld supports in every version) is no
// extension in Clang's C++14 mode but an error, and so are other C++17
// rules that Metal code relies on (aggregates with base classes,
// guaranteed copy elision). So the parse stays C++17, and this consumer,
// added for Metal 1-3 only, reports the warnings Clang's C++14 mode gives,
// with Clang's own diagnostic ids, at the places Clang's C++14 mode puts
// them: -Wno-c++17-extensions, -Werror, -w and #pragma clang diagnostic
// treat them as Clang's. Only what the request's files spell warns: not the
// stdlib (its headers, the prelude, their macros), which is C++17 inside.
// Reported, for what the user's files wrote (template definitions once,
// not per instantiation):
//
//   if constexpr, if/switch init statements, structured bindings, fold
//   expressions, inline variables, nested namespace definitions
//   (`namespace a::b`), `constexpr` on a lambda, capture of `*this`,
//   static_assert without a message, `typename` in a template template
//   parameter, pack expansions in using declarations, several declarators
//   in one using declaration; and [[nodiscard]], [[maybe_unused]],
//   [[fallthrough]] (c++17-attribute-extensions: off unless
//   -Wc++17-extensions, as in Clang).
//
// Not reported: hexadecimal floating literals (a C++17 feature only to
// strict, non-GNU C++14, and off by default in Clang) and 'begin'/'end' of
// different types in a range-for (Clang checks it per instantiation).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>
#include <string>

namespace clang {
class ASTConsumer;
}

namespace msl::compiler {

/// Reports them in the request's files: those whose paths start with
/// `sourceRoot`, where the compile mounts the request.
std::unique_ptr<clang::ASTConsumer> createCxx17ExtensionsConsumer(std::string sourceRoot);

} // namespace msl::compiler
