//===- EntryPoints.h - Per-target kernel entry points ---------------------===//
//
// Clang compiles an MSL kernel as an ordinary function whose built-in
// arguments ([[thread_position_in_grid]], ...) are plain parameters. This
// step renames it to "<symbol>.msl.body", makes it internal and always-inline,
// and generates the real entry under the original symbol:
//  - NVPTX: a .entry taking buffers as pointers and threadgroup arguments as
//    byte offsets into dynamic shared memory, computing built-ins from
//    %tid, %ntid, %ctaid, %nctaid;
//  - CPU: `void symbol(void **args, const uint32_t launch[12])`, launch being
//    {thread_position_in_threadgroup[3], threadgroup_position_in_grid[3],
//     threads_per_threadgroup[3], threadgroups_per_grid[3]}.
// It also lowers the stdlib's barrier hooks to the target's instructions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Reflection.h"
#include "msl/compiler/Compiler.h"

#include <string>
#include <vector>

namespace llvm {
class Module;
}

namespace msl::compiler {

/// Returns an empty string on success, else what went wrong.
std::string lowerEntryPoints(llvm::Module &module, const std::vector<ShaderFunction> &kernels,
                             Arch arch);

} // namespace msl::compiler
