//===- Inputs.h - The samples msl-conformance measures ----------------------===//
//
// A function is measured over batches of samples: the edge cases and some
// focused samples, sent as explicit bit patterns, and the bulk (a sweep over
// the bit patterns, or hashed random patterns), which conformance.metal
// generates from the sample index. argBits() is the kernel's generator on
// the host, so the checker knows every input without receiving it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Ulp.h"

#include <cstdint>
#include <string>
#include <vector>

namespace msl::conformance {

struct FunctionInfo;

/// The kernel's Params (conformance.metal), as sent with setBytes.
struct Params {
  enum Mode : uint32_t { kSweep = 0, kHashed = 1, kExplicit = 2 };
  uint32_t mode = kSweep;
  uint32_t start = 0;
  uint32_t stride = 1;
  uint32_t seed = 0;
};

uint32_t mix32(uint32_t x);
/// The bits of argument `arg` of sample i, as conformance.metal computes them.
uint32_t argBits(const Params &p, const uint32_t *explicitBits, uint64_t i, unsigned arg, unsigned arity);
/// ldexp's exponent from its argument's bits: [-320, 320].
int intArg(uint32_t bits);

/// A value of the format from its bits (a half in the low 16), and back
/// (v must be a value of the format, an infinity or a NaN).
double valueOf(const FloatFormat &f, uint32_t bits);
uint32_t bitsOf(const FloatFormat &f, double v);
bool isSubnormal(const FloatFormat &f, double v);

/// A run of samples of one function: explicit bit patterns (arity per
/// sample) or generated ones.
struct Batch {
  std::string what; // "edge cases", "sweep", "random", "focused"
  Params params;
  uint64_t count = 0;
  std::vector<uint32_t> bits; // kExplicit: count * arity
};

struct PlanOptions {
  uint64_t samples = 1ull << 24; // bulk samples per function
  bool exhaustive = false;       // every bit pattern (unary float; half pairs)
  uint32_t seed = 20170912;
};

/// Everything one function is measured on, for one format.
std::vector<Batch> planSamples(const FunctionInfo &fn, const FloatFormat &f, const PlanOptions &options);

} // namespace msl::conformance
