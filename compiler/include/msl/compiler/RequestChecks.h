//===- msl/compiler/RequestChecks.h - Bounds and checks on a request ------===//
//
// What a compile request may contain, checked with the same code by msld
// (before it queues a request) and by the worker (before it compiles one),
// so both accept and refuse alike, with the same message. No LLVM; every
// check is linear in its input and never uses std::regex.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace msl::compiler {

/// Bounds on what one compile request may contain. msld (before queueing)
/// and the worker (before compiling) check with these same functions.
struct RequestLimits {
  size_t maxPathBytes = 1024;          // a request file path or -I directory
  size_t maxFiles = 10000;             // request files besides the main source
  size_t maxOptions = 1024;            // option arguments
  size_t maxOptionBytes = 4096;        // one option argument
  size_t maxFunctionConstants = 4096;
  size_t maxConstantNameBytes = 256;
  size_t maxConstantValueBytes = 256;
};

/// "" when a request with `files` files besides the main source and
/// `functionConstants` function constant values is within `limits`, else
/// a message naming the limit.
std::string checkRequestCounts(size_t files, size_t functionConstants,
                               const RequestLimits &limits = {});

/// "" when valid, else a message naming the problem. `role` is e.g.
/// "main_path", "file path", "-I directory". Paths: relative, canonical
/// (no "", ".", ".." parts), no NUL/control bytes, at most maxPathBytes.
std::string checkRequestPath(std::string_view role, std::string_view path,
                             const RequestLimits &limits = {});

/// Key: an index 0-65535 or an identifier ([A-Za-z_][A-Za-z0-9_]*), at most
/// maxConstantNameBytes; value: a literal (true/false, an integer that fits
/// in 64 bits, e.g. -2147483648 and -9223372036854775808, or a float), at
/// most maxConstantValueBytes. Integers are C literals (decimal, 0x hex, 0b
/// binary, 0 octal) with an optional '-'; floats are decimal ("0.5", "-1e3").
/// Whether the value fits the constant's type is checked where the type is
/// known, in the compile.
std::string checkFunctionConstant(std::string_view key, std::string_view value,
                                  const RequestLimits &limits = {});

/// "" when `cpu` is an NVPTX SM such as sm_90 / sm_90a (sm_ + 2-3 digits +
/// optional a).
std::string checkNvptxCpu(std::string_view cpu);

/// A request-controlled string made safe to put in a message, in single
/// quotes: non-printable bytes as \xNN, long strings cut (first 64 bytes +
/// "... (N bytes)").
std::string quoteForMessage(std::string_view s);

} // namespace msl::compiler
