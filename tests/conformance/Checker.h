//===- Checker.h - One sample against the tables, and the statistics ------===//
//
// The judgement of one sample is Judge.h's (shared with the GPU checker);
// here are the statistics of a row the report is made of. Both acceptances
// of 7.1 (a result allowed as is, or only as a flushed denormal) are
// counted, so the report can say whether the device keeps or flushes
// denormals.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Bounds.h"
#include "Functions.h"
#include "Reference.h"

#include <cstdint>
#include <string>
#include <vector>

namespace msl::conformance {

struct ResultVerdict;

/// One sample as the report shows it.
struct SampleRecord {
  uint32_t in[3] = {0, 0, 0};
  int result = 0;     // which result (sincos: 0 sin, 1 cos)
  uint32_t got = 0;   // the device's bits
  double exact = 0;   // the exact result (double approximation)
  double ulps = 0;    // the error in ulp
  double allowed = 0; // what the bound allows here, in ulp of the exact result
};

/// The statistics of one row: a function in one (format, mode).
struct RowStats {
  uint64_t checked = 0;   // samples (times results) held to a bound
  uint64_t skipped = 0;   // no bound (undefined) for the input
  uint64_t failures = 0;
  uint64_t flushed = 0;   // accepted only as a flushed denormal (7.1)
  uint64_t towardZero = 0; // correctly rounded toward zero, not to nearest (7.2)
  uint64_t nearestOnly = 0; // correctly rounded to nearest where toward zero differs
  uint64_t mpfr = 0;      // decided by MPFR
  uint64_t specials = 0;  // exact results INF or NaN (checked when precise)
  uint64_t specialFailures = 0;
  bool haveMax = false;
  SampleRecord max;                 // the largest error in ulp (where the bound is not absolute)
  bool haveMaxAbs = false;
  SampleRecord maxAbs;              // the largest absolute error where the bound is absolute (exact - got in `ulps`)
  std::vector<SampleRecord> failed; // the first few failures
  std::vector<SampleRecord> roundedTowardZero; // the first few of those
  static constexpr size_t kKeptFailures = 4;

  /// One judged result (Judge.h), `r` being its record.
  void add(const ResultVerdict &v, const SampleRecord &r);
  void merge(const RowStats &o);
  /// After the last sample: 7.2 lets a device round to nearest even or
  /// toward zero, not both, so a row with results of both kinds fails with
  /// the toward-zero ones (which are then not correctly rounded in the
  /// device's mode, to nearest).
  void finish();
};

/// The report's record of result k of a sample, as judged (v).
SampleRecord recordOf(const FunctionInfo &fn, const uint32_t *inBits, int k, const uint32_t *gotBits,
                      const Approx &exact, const ResultVerdict &v);

/// Judges the device's results for one sample (arity inputs, `results`
/// outputs), adding to `stats`.
void checkSample(const FunctionInfo &fn, const FloatFormat &f, MathMode mode, const uint32_t *inBits,
                 const double *in, const uint32_t *gotBits, const Approx *exact, RowStats &stats);

/// "0x1.921fb6p+0 (1.5707964)"; an int as itself.
std::string formatValue(const FloatFormat &f, double v);

} // namespace msl::conformance
