//===- InlineAsm.h - Inline assembly is not Metal -------------------------===//
//
// Metal has no inline assembly, but Clang accepts GNU `asm` statements and
// file-scope `asm(...)` in our mode, and they would reach the generated code
// (native code on the CPU device). This consumer diagnoses every asm
// statement (GCCAsmStmt, MSAsmStmt) and file-scope asm declaration of the
// sources and headers parsed with them, at the asm's location. Asm labels on
// declarations (`f() __asm("llvm.nvvm.activemask")`) are not inline
// assembly and stay allowed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

namespace clang {
class ASTConsumer;
}

namespace msl::compiler {

std::unique_ptr<clang::ASTConsumer> createInlineAsmConsumer();

} // namespace msl::compiler
