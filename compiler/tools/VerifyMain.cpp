//===- msl-verify: run MSL test files written in clang's -verify style ----===//
//
//   msl-verify [--stdlib-dir DIR] [--as-header] FILE.metal...
//
// --as-header compiles each file as a request header instead, included by a
// main source of two lines (`#include <metal_stdlib>`, `#include "FILE"`):
// every expectation then holds for the header's lines, so whatever msld does
// to a main source (repairs, rewrites) is shown to hold in headers too.
//
// Compiles each file with compile() and checks it against directives in its
// comments (lit/FileCheck-like, but self-contained):
//
//   // msl-options: -std=ios-metal2.0 -ffast-math   metal options (repeatable)
//   // msl-target: nvptx64                          default x86_64
//   // msl-target: nvptx64 sm_75                    ... for that SM (default sm_90)
//   // msl-constant: use_bias=true                  a function constant value
//   expected-error {{text}}       an error on this line whose message has text
//   expected-error@+1 {{text}}    ... on the next line (@-N, @+N relative,
//                                 @N absolute, @0 for errors without a line);
//                                 an error in a stdlib header counts on the
//                                 line of the main file its notes point to
//   expected-warning {{text}}     likewise for warnings
//   // CHECK-IR: text             the optimised LLVM IR contains text
//   // CHECK-IR-NOT: text         ... does not contain text
//   // CHECK-PTX: text            the PTX contains text (nvptx64 only)
//   // CHECK-PTX-NOT: text        ... does not contain text
//   // CHECK-REFLECTION: text     the reflection JSON contains text
//                                 (CHECK lines need a file that compiles)
//
// Every error and warning of the compile must be expected, and every
// expectation met; a file without expected-error must compile. Prints one
// line per file (PASS/FAIL and why); exits 1 if any file fails.
//
//===----------------------------------------------------------------------===//
#include "msl/compiler/Compiler.h"

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace mc = msl::compiler;

namespace {

struct Expectation {
  bool error = true; // else warning
  unsigned line = 0;
  std::string text;
  bool met = false;
};

struct Check {
  std::string kind; // IR, IR-NOT, PTX, REFLECTION
  std::string text;
};

std::vector<std::string> splitSpaces(const std::string &s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    out.push_back(w);
  return out;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r'))
    s.pop_back();
  size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b);
}

/// Checks one file; returns the failure reasons (empty: pass).
std::vector<std::string> verify(const std::string &path, bool asHeader) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return {"cannot read the file"};
  std::stringstream ss;
  ss << in.rdbuf();
  mc::CompileJob job;
  job.mainPath = "main.metal";
  job.mainSource = ss.str();
  // The file whose lines the expectations name.
  std::string checkedPath = job.mainPath;
  const std::string &source = job.mainSource;
  if (asHeader) {
    checkedPath = "include/checked.h";
    job.files[checkedPath] = ss.str();
    job.mainSource = "#include <metal_stdlib>\n#include \"" + checkedPath + "\"\n";
  }

  std::vector<Expectation> expected;
  std::vector<Check> checks;
  static const std::regex kExpect(R"(expected-(error|warning)(@([+-]?)(\d+))?\s*\{\{(.*?)\}\})");
  static const std::regex kCheck(R"(//\s*CHECK-(IR-NOT|IR|PTX-NOT|PTX|REFLECTION):(.*)$)");
  static const std::regex kOptions(R"(//\s*msl-options:(.*)$)");
  static const std::regex kTarget(R"(//\s*msl-target:\s*(\S+)(?:\s+(sm_\S+))?)");
  static const std::regex kConstant(R"(//\s*msl-constant:\s*([^=\s]+)=(\S+))");
  std::istringstream lines(asHeader ? job.files[checkedPath] : source);
  unsigned lineNo = 0;
  for (std::string line; std::getline(lines, line);) {
    ++lineNo;
    std::smatch m;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), kExpect);
         it != std::sregex_iterator(); ++it) {
      Expectation e;
      e.error = (*it)[1] == "error";
      if (!(*it)[2].matched)
        e.line = lineNo;
      else if ((*it)[3].length() == 0) // @N: line N (0: no line, e.g. whole-module errors)
        e.line = unsigned(std::stoul((*it)[4].str()));
      else
        e.line = lineNo + ((*it)[3] == "-" ? -1 : 1) * std::stoi((*it)[4].str());
      e.text = (*it)[5];
      expected.push_back(e);
    }
    if (std::regex_search(line, m, kCheck))
      checks.push_back({m[1], trim(m[2])});
    if (std::regex_search(line, m, kOptions))
      for (auto &o : splitSpaces(m[1]))
        job.options.push_back(o);
    if (std::regex_search(line, m, kConstant))
      job.functionConstants[m[1]] = m[2];
    if (std::regex_search(line, m, kTarget)) {
      if (m[1] == "nvptx64") {
        job.target.arch = mc::Arch::NVPTX64;
        if (m[2].matched)
          job.target.cpu = m[2];
      } else if (m[1] != "x86_64")
        return {"unknown msl-target '" + m[1].str() + "'"};
    }
  }
  job.outputs = {mc::OutputKind::LLVMIR, mc::OutputKind::Reflection};
  if (job.target.arch == mc::Arch::NVPTX64)
    job.outputs.push_back(mc::OutputKind::PTX);

  auto result = mc::compile(job);
  std::vector<std::string> failures;
  for (const auto &d : result.diagnostics) {
    bool isError = d.severity == mc::Severity::Error || d.severity == mc::Severity::Fatal;
    if (!isError && d.severity != mc::Severity::Warning)
      continue;
    // An error inside a stdlib header counts on the main-file line its
    // notes lead back to ("in instantiation of ... requested here").
    auto onLine = [&](unsigned line) {
      if (d.file == checkedPath && d.line == line)
        return true;
      if (line == 0 && d.line == 0) // whole-module errors name the main source
        return true;
      for (const auto &n : d.notes)
        if (n.file == checkedPath && n.line == line)
          return true;
      return false;
    };
    bool matched = false;
    for (auto &e : expected)
      if (e.error == isError && onLine(e.line) && d.message.find(e.text) != std::string::npos)
        e.met = matched = true;
    if (!matched)
      failures.push_back("unexpected " + std::string(isError ? "error" : "warning") + " " +
                         d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) +
                         ": " + d.message);
  }
  for (const auto &e : expected)
    if (!e.met)
      failures.push_back("expected " + std::string(e.error ? "error" : "warning") + " on line " +
                         std::to_string(e.line) + " {{" + e.text + "}} not seen");
  bool expectsError = false;
  for (const auto &e : expected)
    expectsError |= e.error;
  if (!expectsError && !result.success && failures.empty())
    failures.push_back("compile failed without diagnostics");
  auto artifact = [&](mc::OutputKind k) -> std::string {
    auto it = result.artifacts.find(k);
    return it == result.artifacts.end() ? std::string() : it->second;
  };
  for (const auto &c : checks) {
    bool negative = c.kind == "IR-NOT" || c.kind == "PTX-NOT";
    std::string text = c.kind == "PTX" || c.kind == "PTX-NOT" ? artifact(mc::OutputKind::PTX)
                       : c.kind == "REFLECTION" ? artifact(mc::OutputKind::Reflection)
                                                : artifact(mc::OutputKind::LLVMIR);
    bool found = text.find(c.text) != std::string::npos;
    if (negative ? found : !found)
      failures.push_back("CHECK-" + c.kind + ": " + c.text + (found ? " found" : " not found"));
  }
  return failures;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> files;
  bool asHeader = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--stdlib-dir" && i + 1 < argc) {
      std::string error;
      if (!mc::useStdlibFromDirectory(argv[++i], error)) {
        std::fprintf(stderr, "msl-verify: %s\n", error.c_str());
        return 2;
      }
    } else if (a == "--as-header") {
      asHeader = true;
    } else if (!a.empty() && a[0] == '-') {
      std::fprintf(stderr, "usage: msl-verify [--stdlib-dir DIR] [--as-header] FILE.metal...\n");
      return 2;
    } else {
      files.push_back(a);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: msl-verify [--stdlib-dir DIR] [--as-header] FILE.metal...\n");
    return 2;
  }
  int failed = 0;
  for (const auto &f : files) {
    auto failures = verify(f, asHeader);
    std::printf("%s %s\n", failures.empty() ? "PASS" : "FAIL", f.c_str());
    for (const auto &why : failures)
      std::printf("  %s\n", why.c_str());
    failed += !failures.empty();
  }
  if (files.size() > 1)
    std::printf("%zu passed, %d failed\n", files.size() - failed, failed);
  return failed ? 1 : 0;
}
