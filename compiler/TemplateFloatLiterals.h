//===- TemplateFloatLiterals.h - Unsuffixed literals in templates are float ===//
//
// Metal has no double: `x * 0.5` is float arithmetic. -cl-single-precision-
// constant makes Clang type such a literal float, but only by wrapping the
// double literal in an implicit conversion, which template instantiation
// drops: inside templates the literal was double again, and `t < 1.0/6.0`
// compared in double (f64 instructions on the GPU, other rounding). This
// consumer turns those literals of template definitions into float literals
// before anything is instantiated from them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

namespace clang {
class ASTConsumer;
}

namespace msl::compiler {

std::unique_ptr<clang::ASTConsumer> createTemplateFloatLiteralsConsumer();

} // namespace msl::compiler
