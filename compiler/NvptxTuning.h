//===- NvptxTuning.h - what nvcc's NVVM does that LLVM's NVPTX path does not -===//
//
// Measured against nvcc on the H200 (bench/RESULTS.md, GPU), msld's PTX lost
// where NVVM's choices differ from LLVM's defaults, or where the driver's
// linking sees less than nvcc's whole-program build, not in the instructions
// themselves. Each function here closes one such gap, on the NVPTX module
// only.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace llvm {
class Module;
class PassBuilder;
} // namespace llvm

namespace msl::compiler {

/// Every shared-memory (threadgroup) global is at least 16-byte aligned.
/// msld-cuda-worker links PTX as relocatable code (cuLink), where ptxas
/// does not know where a shared variable lies and widens shared loads
/// (LDS.128) only as far as its declared alignment allows; nvcc's
/// whole-program cubin knows the address. SGEMM's `threadgroup float
/// As[16][16]` (`.align 4`): 32 scalar LDS per tile instead of 4 LDS.128
/// + 16, 348 -> 278 us on the H200 (bench/RESULTS.md, GPU).
void alignSharedMemory(llvm::Module &m);

/// Loops with a constant trip count of at most kNvptxFullUnrollMaxTrips whose
/// unrolled body stays under kNvptxFullUnrollMaxSize instructions get
/// `llvm.loop.unroll.full`, as NVVM unrolls them (the histogram's 64
/// loads and shared atomics: NVVM all 64 in flight, LLVM's NVPTX
/// heuristics 4: 19.2 -> 17.0 us on the H200). Registered at the end of the loop simplification
/// pipeline, just before LLVM's full-unroll pass reads the hint.
void registerNvptxFullUnroll(llvm::PassBuilder &pb);

constexpr unsigned kNvptxFullUnrollMaxTrips = 64;
constexpr unsigned kNvptxFullUnrollMaxSize = 1024;

} // namespace msl::compiler
