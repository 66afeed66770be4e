//===- Checker.cpp - One sample against the tables, and the statistics ----===//
#include "Checker.h"

#include "Inputs.h"
#include "Judge.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace msl::conformance {

void RowStats::merge(const RowStats &o) {
  checked += o.checked;
  skipped += o.skipped;
  failures += o.failures;
  flushed += o.flushed;
  towardZero += o.towardZero;
  nearestOnly += o.nearestOnly;
  mpfr += o.mpfr;
  specials += o.specials;
  specialFailures += o.specialFailures;
  if (o.haveMax && (!haveMax || o.max.ulps > max.ulps)) {
    max = o.max;
    haveMax = true;
  }
  if (o.haveMaxAbs && (!haveMaxAbs || o.maxAbs.ulps > maxAbs.ulps)) {
    maxAbs = o.maxAbs;
    haveMaxAbs = true;
  }
  for (const auto &s : o.failed)
    if (failed.size() < kKeptFailures) failed.push_back(s);
  for (const auto &s : o.roundedTowardZero)
    if (roundedTowardZero.size() < kKeptFailures) roundedTowardZero.push_back(s);
}

void RowStats::finish() {
  if (!towardZero || !nearestOnly) return;
  failures += towardZero;
  for (const auto &s : roundedTowardZero)
    if (failed.size() < kKeptFailures) failed.push_back(s);
}

void checkSample(const FunctionInfo &fn, const FloatFormat &f, MathMode mode, const uint32_t *inBits,
                 const double *in, const uint32_t *gotBits, const Approx *exact, RowStats &stats) {
  ResultVerdict verdicts[2];
  if (!judgeSample<ExactValue>(fn, f, mode, in, gotBits, exact, verdicts)) {
    stats.skipped += fn.results;
    return;
  }
  for (int k = 0; k < fn.results; ++k) {
    const ResultVerdict &v = verdicts[k];
    if (!v.counted) {
      ++stats.skipped;
      continue;
    }
    stats.add(v, recordOf(fn, inBits, k, gotBits, exact[k], v));
  }
}

SampleRecord recordOf(const FunctionInfo &fn, const uint32_t *inBits, int k, const uint32_t *gotBits,
                      const Approx &exact, const ResultVerdict &v) {
  SampleRecord r;
  for (int j = 0; j < fn.arity; ++j) r.in[j] = inBits[j];
  r.result = k;
  r.got = gotBits[k];
  r.exact = exact.v;
  r.ulps = v.error;
  r.allowed = v.allowed;
  return r;
}

void RowStats::add(const ResultVerdict &v, const SampleRecord &r) {
  ++checked;
  mpfr += v.mpfr;
  towardZero += v.towardZero && !v.flushed;
  nearestOnly += v.nearestOnly;
  if (v.special) {
    ++specials;
    specialFailures += !v.pass;
  }
  if (v.flushed) {
    ++flushed;
  } else if (v.absolute) {
    if (!haveMaxAbs || r.ulps > maxAbs.ulps) {
      maxAbs = r;
      haveMaxAbs = true;
    }
  } else if (!haveMax || r.ulps > max.ulps) {
    max = r;
    haveMax = true;
  }
  if (!v.pass) {
    ++failures;
    if (failed.size() < kKeptFailures) failed.push_back(r);
  }
  if (v.towardZero && roundedTowardZero.size() < kKeptFailures) roundedTowardZero.push_back(r);
}

std::string formatValue(const FloatFormat &f, double v) {
  char b[64];
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::snprintf(b, sizeof b, f.isBinary32() ? "%a (%.9g)" : "%a (%.5g)", v, v);
  return b;
}

} // namespace msl::conformance
