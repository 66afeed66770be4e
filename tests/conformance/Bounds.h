//===- Bounds.h - The accuracy tables of MSL 2.0 section 7.4 ---------------===//
//
// For each function: what result the specification allows, per table:
// single precision (-fno-fast-math), single precision with fast math (the
// default, -ffast-math), half precision (either). The seed excerpt of the
// specification stops after the table's first rows; the rest of each table
// is the public specification's (the same rows and bounds as in later
// revisions, where the tables are 8.1-8.3). The rows themselves, per input,
// are Allowance.h's; here is what the report says of them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Allowance.h"
#include "Functions.h"

#include <string>

namespace msl::conformance {

const char *modeName(MathMode m);

/// Whether the table of (format, mode) has a row for fn.
bool hasRow(Fn fn, const FloatFormat &f, MathMode m);
/// The row's text, e.g. "<= 4 ulp", "correctly rounded", "as log(x + sqrt(x*x - 1))".
std::string boundText(Fn fn, const FloatFormat &f, MathMode m);

} // namespace msl::conformance
