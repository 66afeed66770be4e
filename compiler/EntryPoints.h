//===- EntryPoints.h - Per-target kernel entry points ---------------------===//
//
// Clang compiles an MSL kernel as an ordinary function whose built-in
// arguments ([[thread_position_in_grid]], ...) are plain parameters. This
// step renames it to "<symbol>.msl.body", makes it internal and always-inline,
// and generates the real entry under the original symbol:
//  - NVPTX: a .entry taking buffers as pointers and threadgroup arguments as
//    byte offsets into dynamic shared memory, then the launch block: 12
//    uint32 (a .param .b8 [48]), x, y, z each:
//      [0..2]   the threadgroup position of this launch's first block
//               (added to %ctaid)
//      [3..5]   dispatch_threads_per_threadgroup (the uniform size)
//      [6..8]   threads_per_grid
//      [9..11]  threadgroups_per_grid
//    %tid and %ntid give the rest: a block is exactly one threadgroup, so
//    the host launches the partial edge threadgroups of dispatchThreads
//    separately, each launch with its block size and origin (at most 8
//    launches: interior and edge in each dimension), and no thread outside
//    the grid exists; for dispatchThreadgroups, one launch of origin 0;
//  - CPU: `void symbol(void **args, const uint32_t launch[18])`, running one
//    work-item, launch being (x, y, z each):
//      [0..2]   thread_position_in_threadgroup
//      [3..5]   threadgroup_position_in_grid
//      [6..8]   threads_per_threadgroup: THIS threadgroup's size (smaller
//               than [12..14] for the partial edge threadgroups of
//               dispatchThreads)
//      [9..11]  threadgroups_per_grid
//      [12..14] dispatch_threads_per_threadgroup: the dispatch's uniform
//               threadgroup size; thread_position_in_grid =
//               [3..5] * [12..14] + [0..2]
//      [15..17] threads_per_grid
//    For dispatchThreadgroups, [6..8] == [12..14] and [15..17] =
//    [9..11] * [12..14]. For dispatchThreads(grid, tg), [9..11] =
//    ceil(grid / tg), [12..14] = tg, [15..17] = grid and [6..8] =
//    min(tg, grid - [3..5] * tg); threads outside the grid are not run.
//    thread_index_in_threadgroup and simdgroups_/quadgroups_per_threadgroup
//    use [6..8]; the dispatch_ forms use [12..14].
//    (executor/WorkGroupFunction.h builds, from this entry, a function that
//    runs all the work-items of one threadgroup.)
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
