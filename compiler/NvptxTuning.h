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

/// Loads and stores of char vectors (uchar2/3/4, char2/3/4, bool2/3/4:
/// vectors of 8-bit elements) in device and constant memory claim only the
/// alignment their address proves. Clang gives each the alignment of its
/// type (uchar3, uchar4: 4; uchar2: 2), also where a kernel reads packed
/// bytes through a reinterpret_cast at any byte offset (torchao's int3
/// matmul: a uchar3 at B + 3 * k / 8), and NVPTX turns that claim into a
/// 16- or 32-bit load, which faults at an address it does not divide
/// (CUDA_ERROR_MISALIGNED_ADDRESS); x86 reads it, and so do Apple's GPUs
/// (torchao runs there). Runs before optimization, while the access is
/// still the source's vector one (the optimizer scalarizes it and hands the
/// claim on to each byte): there its address is unknown, so the claim drops
/// to what it proves (1, mostly), and LLVM's InferAlignment pass raises it
/// again as far as it proves after inlining, from the alignment of the
/// buffer arguments (lowerEntryPoints: what Metal requires of a binding
/// offset; `constant uchar *` and `device uint *`: 4). A uchar4 at buf +
/// 4 * i stays one 32-bit load; a uchar3 at buf + 3 * k becomes byte
/// loads (NVPTX splits an under-aligned vector access itself).
/// Vectors of wider elements keep their type's alignment: kernels read
/// half4 and float4 through addresses that prove less (reinterpret_casts
/// of half and float buffers, computed offsets), and lowering them too
/// split MNN's convolutions' half4 loads and torchao's half kernels' into
/// 8- and 16-bit ones (msl-corpus --target nvptx64).
void relaxByteVectorAlignment(llvm::Module &m);

/// A kernel entry's read-only buffer parameter (noalias readonly
/// dereferenceable: a present `constant T &`, lowerEntryPoints) that the
/// optimized kernel loads more than once, each time whole and as the same
/// type (a scalar or vector reference), is loaded once, at the top of the
/// entry, as nvcc reads a by-value parameter. LLVM keeps a load per use
/// when the uses sit in branches that do not dominate each other (no
/// hoisting over a branch): transpose's `N` was loaded again after its
/// barrier, a dependent load at the head of every threadgroup's second
/// half (0.89x of nvcc on the H200, bench/RESULTS.md). Safe: the binding
/// holds the bytes (Execute checks) and nothing writes constant memory
/// while the kernel runs. Runs after optimization.
void readConstantReferencesOnce(llvm::Module &m);

/// A loop counter's exit test on the counter before its step (`j < 24`
/// where the source says `j += 8` ... `j < 32`; InstCombine's canonical
/// form of a no-wrap step) tests the stepped value instead (`j + 8 < 32`),
/// as nvcc's PTX does. From the first form LLVM's loop strength reduction
/// starts the counter at `tid.y - 8`, which wraps for the first threads,
/// and ptxas schedules that loop worse: transpose 45.1 us against nvcc's
/// 40.7 on the H200, the same PTX with the stepped test 40.8
/// (bench/RESULTS.md). Only where the step provably never wraps (the test
/// is the loop's exit branch in the step's block, the counter starts at
/// most at bound + step, and bound + 2 steps fits), so no poison from a
/// no-wrap flag reaches the branch. Runs after optimization.
void compareLoopCountersAfterTheirStep(llvm::Module &m);

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
