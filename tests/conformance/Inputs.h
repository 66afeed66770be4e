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

#include "HostDevice.h"
#include "Ulp.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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

/// The bits of argument `arg` of sample i, as conformance.metal computes
/// them (with mix32); intArg: ldexp's exponent from its argument's bits,
/// [-320, 320]; valueOf: a value of the format from its bits (a half in the
/// low 16). Shared with the GPU checker (HostDevice.h).
MSL_HD inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

MSL_HD inline uint32_t argBits(const Params &p, const uint32_t *explicitBits, uint64_t i, unsigned arg, unsigned arity) {
  uint32_t i32 = uint32_t(i);
  if (p.mode == Params::kExplicit) return explicitBits[i * arity + arg];
  if (p.mode == Params::kSweep) {
    uint32_t b = p.start + i32 * p.stride;
    return arity == 1 ? b : (arg == 0 ? b >> 16 : b & 0xffffu);
  }
  return mix32(mix32(p.start + i32 + p.seed) ^ (0x9e3779b9u * (arg + 1)));
}

MSL_HD inline int intArg(uint32_t bits) { return int(bits % 641u) - 320; }

MSL_HD inline double valueOf(const FloatFormat &f, uint32_t bits) {
  if (f.isBinary32()) {
    float v;
    std::memcpy(&v, &bits, 4);
    return v;
  }
  uint32_t h = bits & 0xffffu;
  double sign = (h & 0x8000u) ? -1.0 : 1.0;
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return m ? std::copysign(std::numeric_limits<double>::quiet_NaN(), sign)
                          : sign * std::numeric_limits<double>::infinity();
  if (e == 0) return sign * std::ldexp(double(m), -24);
  return sign * std::ldexp(double(m | 0x400u), int(e) - 25);
}

/// Sample i's inputs: their bits, and their values (an int argument, ldexp's
/// second, as an int).
MSL_HD inline void sampleInputs(const Params &p, const uint32_t *explicitBits, uint64_t i, int arity, bool intSecondArg,
                                const FloatFormat &f, uint32_t *bits, double *in) {
  for (int j = 0; j < arity; ++j) {
    bits[j] = argBits(p, explicitBits, i, unsigned(j), unsigned(arity));
    in[j] = intSecondArg && j == 1 ? intArg(bits[j]) : valueOf(f, bits[j]);
  }
}

MSL_HD inline bool isSubnormal(const FloatFormat &f, double v) { return v != 0 && std::fabs(v) < f.minNormal(); }

/// A value of the format back to its bits (v must be a value of the format,
/// an infinity or a NaN).
uint32_t bitsOf(const FloatFormat &f, double v);

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

/// The batch's Params for its chunk that starts at sample `offset`.
Params chunkParams(const Batch &b, uint64_t offset);

/// Everything one function is measured on, for one format.
std::vector<Batch> planSamples(const FunctionInfo &fn, const FloatFormat &f, const PlanOptions &options);

} // namespace msl::conformance
