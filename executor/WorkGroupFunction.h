//===- WorkGroupFunction.h - One function per threadgroup -------------------===//
//
// msld's CPU modules have, per kernel, an entry that runs ONE work-item
// (compiler/EntryPoints.h: `void sym(void **args, const uint32_t launch[18])`).
// This builds beside it a work-group function running every work-item of a
// threadgroup, with Metal's barrier semantics compiled by continuation-based
// synchronization (CBS): the CFG is cut at the barriers into sub-CFGs, each
// run as a loop over the work-items, values live across a barrier are kept
// per work-item in context arrays, and a dispatcher picks the next sub-CFG
// by the barrier the work-items stopped at.
//
// SIMD-groups are kSimdWidth consecutive work-items (by linear index). Each
// SIMD-group function of the stdlib is one exchange (compiler/stdlib/
// metal_simdgroup): a cut where each work-item publishes its value; the
// work-items may stop at different exchanges (divergence), so then each
// records its own next sub-CFG, the earliest pending cut in reverse
// post-order runs next, and the work-items stopped there are its active
// lanes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace llvm {
class Module;
}

namespace msl::executor {

struct WorkGroupFunction {
  std::string symbol;                   // "<entry>.msl.wg"
  uint64_t threadgroupGlobalsBytes = 0; // the kernel's threadgroup variables, laid out from offset 0 of the block
  uint64_t threadgroupGlobalsAlign = 16;
};

/// Adds to `m` (a CPU module from msld's compiler) a function
///   void <entry>.msl.wg(void **args, const uint32_t launch[18], char *threadgroupMemory)
/// that runs EVERY work-item of one threadgroup (launch[0..2] is ignored; the
/// work-item loops supply thread_position_in_threadgroup over launch[6..8],
/// this threadgroup's size) with Metal's barrier semantics. `threadgroupMemory`
/// holds the kernel's threadgroup variables first (their uses are rewritten to
/// point there, so parallel threadgroups do not share them), then the
/// [[threadgroup(n)]] buffers, which arrive through args[] as pointers the
/// runtime computes. `maxThreads` bounds the work-items (the dispatched
/// threads per threadgroup) and sizes the per-work-item context arrays.
///
/// A threadgroup of more than `maxThreads` work-items traps (llvm.trap); one
/// of 0 returns at once. The function calls no barrier hook. `threadgroupMemory`
/// must be aligned to threadgroupGlobalsAlign. Context arrays live on the
/// stack of the calling thread (about maxThreads * the bytes live across
/// barriers): run it on threads with large enough stacks.
llvm::Expected<WorkGroupFunction> buildWorkGroupFunction(llvm::Module &m, llvm::StringRef entry,
                                                         unsigned maxThreads);

/// Threads per SIMD-group on the CPU (compiler/EntryPoints.cpp kCpuSimdWidth).
constexpr unsigned kSimdWidth = 32;

/// The stdlib's barrier hooks (`__msl_threadgroup_barrier`,
/// `__msl_simdgroup_barrier`), which the work-group function compiles away.
bool isBarrierHook(llvm::StringRef name);

/// Every hook the work-group function compiles away: the barriers and the
/// SIMD-group exchange, its mask and the lane id.
bool isWorkGroupHook(llvm::StringRef name);

} // namespace msl::executor
