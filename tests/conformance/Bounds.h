//===- Bounds.h - The accuracy tables of MSL 2.0 section 7.4 ---------------===//
//
// For each function: what result the specification allows, per table:
// single precision (-fno-fast-math), single precision with fast math (the
// default, -ffast-math), half precision (either). The seed excerpt of the
// specification stops after the table's first rows; the rest of each table
// is the public specification's (the same rows and bounds as in later
// revisions, where the tables are 8.1-8.3).
//
// A bound may depend on the input (fast exp: 3 + floor(|2x|) ulp; a domain
// outside which nothing is promised), and a fast-math row that says
// "implemented as <formula>" is measured as that formula: the allowed
// results are those the formula can give when each of its steps has its own
// row's accuracy (interval arithmetic over the steps, Bounds.cpp).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Functions.h"

#include <string>

namespace msl::conformance {

enum class MathMode { Precise, Fast };
const char *modeName(MathMode m);

struct Allowance {
  enum Kind {
    kUndefined,        // no bound for this input: not checked
    kCorrectlyRounded, // the exact result rounded (to nearest even or toward zero, 7.2)
    kUlps,             // |got - exact| <= ulps * ulp(exact); 0: exactly
    kAbs,              // |got - exact| <= abs
    kInterval,         // lo <= got <= hi (a formula's possible results)
  } kind = kUndefined;
  double ulps = 0, abs = 0, lo = 0, hi = 0;
};

/// Whether the table of (format, mode) has a row for fn.
bool hasRow(Fn fn, const FloatFormat &f, MathMode m);
/// The row's text, e.g. "<= 4 ulp", "correctly rounded", "as log(x + sqrt(x*x - 1))".
std::string boundText(Fn fn, const FloatFormat &f, MathMode m);
/// The allowed results of result k at `in`, given its exact value.
Allowance allowance(Fn fn, const FloatFormat &f, MathMode m, const double *in, int k, const Approx &exact);

} // namespace msl::conformance
