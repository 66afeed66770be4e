//===- msl-corpus: compile-rate report over the public MSL corpus ---------===//
//
//   msl-corpus DIR [--jobs N] [--filter SUBSTR] [--failures-limit K]
//              [--stdlib-dir compiler/stdlib  (headers from disk, no rebuild)]
//              [--target nvptx64  (PTX instead of x86_64 reflection)]
//              [--ptx-dir DIR     (nvptx64, and write each file's PTX there)]
//              [--json OUT] [--min-passed N]
//
// Reads DIR/manifest.csv, compiles every `source` row in-process with its
// -std and flags (target x86_64, reflection only) and prints a table by
// source, stage and language version, the failures grouped by their first
// error, the compile rate, and last a line `N passed, M failed`.
//
// A row passes when it compiles, except `mfa` rows that use an Apple-private
// builtin (`__metal_...`, in the file or in a header it includes), which pass
// when they are rejected with a first error that names such a builtin, and
// files that include Metal 4's <metal_tensor>, which pass when they compile
// or are rejected with an error saying what msld does not provide.
// `glsl-optimizer` rows are reported but not counted.
//
// Each compile is hermetic: the job carries the main file, every file of its
// directory and every file under its -I directories (paths relative to DIR).
//
// Exit: 0; 1 with --min-passed N when fewer than N passed; 2 on usage or
// manifest errors; 77 when DIR or DIR/manifest.csv does not exist.
//
//===----------------------------------------------------------------------===//

#include "CorpusManifest.h"
#include "msl/compiler/Compiler.h"
#include "msl/compiler/Options.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;
using namespace msl::compiler;
using msl::corpus::joinRel;
using msl::corpus::readFile;

namespace {

// ---- rows -------------------------------------------------------------------

struct Row {
  std::string source, local, stagesRaw, stdRaw, flagsRaw;
  std::string stdValue; // "macos-metal2.0" or "" (compiler default)
  std::vector<std::string> stages;
  std::vector<std::string> options;
  std::vector<std::string> fileDirs;     // non-recursive, relative to DIR
  std::vector<std::string> fileTrees;    // recursive, relative to DIR
  bool counted = true;
  bool privateSet = false; // mfa: rejected when it uses a __metal_ builtin
};

struct Outcome {
  bool compiled = false, passed = false;
  bool expectReject = false; // privateSet row that uses a __metal_ builtin
  bool metal4Tensors = false; // includes <metal_tensor>: compiles, or is rejected naming what msld lacks
  std::string firstError;     // "file:line:col: message"
  std::string firstErrorMsg;  // message only
  std::string group;          // normalized group key (failures only)
  double seconds = 0;
};

// ---- failure grouping -------------------------------------------------------

/// Identifiers (anything) in single quotes -> '…', so that similar errors group.
std::string normalizeMessage(const std::string &m) {
  std::string out;
  for (size_t i = 0; i < m.size(); ++i) {
    if (m[i] == '\'') {
      size_t j = m.find('\'', i + 1);
      if (j != std::string::npos) {
        out += "'…'";
        i = j;
        continue;
      }
    }
    out += m[i];
  }
  return out;
}

const Diagnostic *firstError(const CompileResult &r) {
  for (const auto &d : r.diagnostics)
    if (d.severity == Severity::Error || d.severity == Severity::Fatal)
      return &d;
  return nullptr;
}

/// Whether the main source, or a file it #includes "..." (transitively,
/// resolved against the includer's directory and the -I dirs), mentions an
/// Apple-private `__metal_` builtin.
bool usesPrivateBuiltins(const CompileJob &job, const std::vector<std::string> &includeDirs) {
  std::set<std::string> seen;
  std::vector<std::pair<std::string, const std::string *>> todo = {{job.mainPath, &job.mainSource}};
  while (!todo.empty()) {
    auto [path, text] = todo.back();
    todo.pop_back();
    if (!seen.insert(path).second)
      continue;
    if (text->find("__metal_") != std::string::npos)
      return true;
    std::istringstream in(*text);
    for (std::string line; std::getline(in, line);) {
      size_t h = line.find_first_not_of(" \t");
      if (h == std::string::npos || line[h] != '#' || line.find("include", h) == std::string::npos)
        continue;
      size_t q0 = line.find('"'), q1 = q0 == std::string::npos ? q0 : line.find('"', q0 + 1);
      if (q1 == std::string::npos)
        continue;
      std::string name = line.substr(q0 + 1, q1 - q0 - 1);
      std::vector<std::string> candidates = {
          joinRel(fs::path(path).parent_path().generic_string(), name)};
      for (const auto &d : includeDirs)
        candidates.push_back(joinRel(d, name));
      for (const auto &c : candidates)
        if (auto it = job.files.find(c); it != job.files.end()) {
          todo.emplace_back(c, &it->second);
          break;
        }
    }
  }
  return false;
}

// ---- table printing ---------------------------------------------------------

struct Tally {
  int compiled = 0, failed = 0, passed = 0, notPassed = 0;
};

void printTable(const std::string &title, const std::vector<std::pair<std::string, Tally>> &rows,
                bool showPass, const std::set<std::string> &uncounted = {}) {
  size_t w = title.size();
  for (const auto &[k, _] : rows)
    w = std::max(w, k.size() + (uncounted.count(k) ? 16 : 0));
  std::printf("\n%-*s %8s %8s %7s", int(w), title.c_str(), "compiled", "failed", "rate");
  if (showPass)
    std::printf(" %7s %7s", "passed", "failed*");
  std::printf("\n%s\n", std::string(w + 25 + (showPass ? 16 : 0), '-').c_str());
  Tally total;
  for (const auto &[k, t] : rows) {
    std::string label = k + (uncounted.count(k) ? " (not counted)" : "");
    int n = t.compiled + t.failed;
    std::printf("%-*s %8d %8d %6.1f%%", int(w), label.c_str(), t.compiled, t.failed,
                n ? 100.0 * t.compiled / n : 0.0);
    if (showPass)
      std::printf(" %7d %7d", t.passed, t.notPassed);
    std::printf("\n");
  }
}

} // namespace

int main(int argc, char **argv) {
  std::string dir, filter, jsonOut, ptxDir;
  bool nvptx = false, verbose = false;
  int jobs = 1, failuresLimit = 40;
  long minPassed = -1;
  auto usage = [] {
    std::fprintf(stderr, "usage: msl-corpus DIR [--jobs N] [--filter SUBSTR] [--failures-limit K] "
                         "[--json OUT] [--min-passed N] [--stdlib-dir DIR] [--target nvptx64] [--ptx-dir DIR] "
                         "[--verbose]\n");
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &v) {
      if (i + 1 >= argc)
        return false;
      v = argv[++i];
      return true;
    };
    std::string v;
    try {
      if (a == "--jobs" || a == "-j") {
        if (!value(v))
          return usage();
        jobs = std::max(1, std::stoi(v));
      } else if (a == "--filter") {
        if (!value(filter))
          return usage();
      } else if (a == "--failures-limit") {
        if (!value(v))
          return usage();
        failuresLimit = std::max(0, std::stoi(v));
      } else if (a == "--json") {
        if (!value(jsonOut))
          return usage();
      } else if (a == "--verbose") {
        verbose = true; // each file's name before it compiles (finds a crashing file)
      } else if (a == "--target") {
        if (!value(v) || (v != "nvptx64" && v != "x86_64"))
          return usage();
        nvptx = v == "nvptx64";
      } else if (a == "--ptx-dir") {
        if (!value(ptxDir))
          return usage();
        nvptx = true;
      } else if (a == "--stdlib-dir") {
        std::string error;
        if (!value(v))
          return usage();
        if (!msl::compiler::useStdlibFromDirectory(v, error)) {
          std::fprintf(stderr, "msl-corpus: %s\n", error.c_str());
          return 2;
        }
      } else if (a == "--min-passed") {
        if (!value(v))
          return usage();
        minPassed = std::stol(v);
      } else if (a == "-h" || a == "--help") {
        usage();
        return 0;
      } else if (!a.empty() && a[0] == '-') {
        return usage();
      } else if (dir.empty()) {
        dir = a;
      } else {
        return usage();
      }
    } catch (const std::exception &) {
      return usage();
    }
  }
  if (dir.empty())
    return usage();

  fs::path root(dir);
  if (!fs::is_directory(root) || !fs::exists(root / "manifest.csv")) {
    std::printf("corpus absent: %s (no manifest.csv); skipping\n", dir.c_str());
    return 77;
  }
  std::string manifestError;
  auto manifestRows = msl::corpus::readManifest(root, manifestError);
  if (!manifestRows) {
    std::fprintf(stderr, "msl-corpus: %s\n", manifestError.c_str());
    return 2;
  }

  // ---- rows -> compile jobs ------------------------------------------------
  std::vector<Row> rows;
  for (msl::corpus::ManifestRow &m : *manifestRows) {
    Row row;
    row.source = m.source;
    row.local = m.local;
    if (!filter.empty() && row.local.find(filter) == std::string::npos &&
        row.source.find(filter) == std::string::npos)
      continue;
    row.stdValue = m.stdValue;
    row.options = std::move(m.options);
    row.fileDirs = std::move(m.fileDirs);
    row.fileTrees = std::move(m.fileTrees);
    row.counted = row.source != "glsl-optimizer";
    row.privateSet = row.source == "mfa";
    {
      std::istringstream in(m.stages);
      for (std::string part; std::getline(in, part, '+');)
        if (!part.empty())
          row.stages.push_back(part.substr(0, part.find(':')));
    }
    if (row.stages.empty())
      row.stages.push_back("(none)");
    row.stdRaw = m.std;
    row.stagesRaw = m.stages;
    row.flagsRaw = m.flags;
    rows.push_back(std::move(row));
  }

  // Preload every directory the jobs need, once (read-only afterwards).
  std::map<std::string, std::map<std::string, std::string>> dirFiles;  // non-recursive
  std::map<std::string, std::map<std::string, std::string>> treeFiles; // recursive
  auto load = [&](const std::string &rel, bool recursive, auto &cache) {
    if (!cache.count(rel))
      cache[rel] = msl::corpus::filesUnder(root, rel, recursive);
  };
  std::map<std::string, std::string> mainSources;
  for (const auto &row : rows) {
    for (const auto &d : row.fileDirs)
      load(d, false, dirFiles);
    for (const auto &d : row.fileTrees)
      load(d, true, treeFiles);
    if (auto text = readFile(root / row.local))
      mainSources[row.local] = std::move(*text);
  }

  // ---- compile, on a pool of --jobs threads ----------------------------------
  std::vector<Outcome> outcomes(rows.size());
  std::atomic<size_t> next{0};
  std::vector<double> busy(jobs, 0.0);
  auto worker = [&](int w) {
    for (size_t i; (i = next.fetch_add(1)) < rows.size();) {
      const Row &row = rows[i];
      Outcome &o = outcomes[i];
      auto t0 = std::chrono::steady_clock::now();
      auto src = mainSources.find(row.local);
      if (src == mainSources.end()) {
        o.firstErrorMsg = "cannot read " + row.local;
        o.firstError = o.firstErrorMsg;
      } else {
        if (verbose)
          std::fprintf(stderr, "compiling %s\n", row.local.c_str());
        CompileJob job;
        job.mainPath = row.local;
        job.mainSource = src->second;
        for (const auto &d : row.fileDirs)
          for (const auto &[p, c] : dirFiles.at(d))
            if (p != row.local)
              job.files.emplace(p, c);
        for (const auto &d : row.fileTrees)
          for (const auto &[p, c] : treeFiles.at(d))
            if (p != row.local)
              job.files.emplace(p, c);
        job.options = row.options;
        job.target.arch = nvptx ? Arch::NVPTX64 : Arch::X86_64;
        job.outputs = {nvptx ? OutputKind::PTX : OutputKind::Reflection};
        if (row.privateSet)
          o.expectReject = usesPrivateBuiltins(job, row.fileTrees);
        o.metal4Tensors = job.mainSource.find("<metal_tensor>") != std::string::npos;
        CompileResult r = compile(job);
        o.compiled = r.success;
        if (r.success && !ptxDir.empty()) {
          std::string name = row.local;
          std::replace(name.begin(), name.end(), '/', '_');
          std::ofstream(ptxDir + "/" + name + ".ptx") << r.artifacts[OutputKind::PTX];
        }
        if (const Diagnostic *d = firstError(r)) {
          o.firstErrorMsg = d->message;
          o.firstError = d->file + ":" + std::to_string(d->line) + ":" + std::to_string(d->column) +
                         ": " + d->message;
        } else if (!r.success) {
          o.firstErrorMsg = "(failed without an error diagnostic)";
          o.firstError = o.firstErrorMsg;
        }
      }
      if (o.expectReject)
        o.passed = !o.compiled && o.firstErrorMsg.find("__metal_") != std::string::npos;
      else if (o.metal4Tensors)
        o.passed = o.compiled || o.firstErrorMsg.find("msld does not provide") != std::string::npos;
      else
        o.passed = o.compiled;
      if (!o.passed)
        o.group = o.compiled ? "(compiled, but should be rejected naming a private __metal_ builtin)"
                             : normalizeMessage(o.firstErrorMsg);
      o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      busy[w] += o.seconds;
    }
  };
  auto wall0 = std::chrono::steady_clock::now();
  {
    std::vector<std::thread> pool;
    for (int w = 0; w < jobs; ++w)
      pool.emplace_back(worker, w);
    for (auto &t : pool)
      t.join();
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  double busyTotal = 0;
  for (double b : busy)
    busyTotal += b;

  // ---- report --------------------------------------------------------------
  const std::vector<std::string> sourceOrder = {"spirv-cross", "tint", "naga", "tnn", "angle",
                                                "metalpetal", "pytorch", "mfa", "glsl-optimizer"};
  std::map<std::string, Tally> bySource, byStage, byStd;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &row = rows[i];
    const Outcome &o = outcomes[i];
    auto add = [&](Tally &t) {
      (o.compiled ? t.compiled : t.failed)++;
      (o.passed ? t.passed : t.notPassed)++;
    };
    add(bySource[row.source]);
    if (!row.counted)
      continue;
    for (const auto &s : std::set<std::string>(row.stages.begin(), row.stages.end()))
      add(byStage[s]);
    add(byStd[row.stdValue.empty() ? "(default)" : row.stdValue]);
  }
  std::vector<std::pair<std::string, Tally>> srcRows;
  for (const auto &s : sourceOrder)
    if (bySource.count(s))
      srcRows.emplace_back(s, bySource[s]);
  for (const auto &[s, t] : bySource)
    if (std::find(sourceOrder.begin(), sourceOrder.end(), s) == sourceOrder.end())
      srcRows.emplace_back(s, t);

  std::printf("msl-corpus: %zu source files from %s, %d job(s)\n", rows.size(), dir.c_str(), jobs);
  std::printf("(pass = compiles; an mfa file that uses an Apple-private __metal_ builtin passes when\n"
              " rejected with a first error naming one, a <metal_tensor> file when it compiles or is\n"
              " rejected saying what msld does not provide; failed* = not passed;\n"
              " glsl-optimizer is reported but not counted)\n");
  printTable("source", srcRows, true, {"glsl-optimizer"});
  printTable("stage (counted files)",
             std::vector<std::pair<std::string, Tally>>(byStage.begin(), byStage.end()), false);
  printTable("-std (counted files)",
             std::vector<std::pair<std::string, Tally>>(byStd.begin(), byStd.end()), false);

  struct Group {
    int count = 0;
    std::string example, exampleError;
    std::map<std::string, int> sources;
  };
  std::map<std::string, Group> groups;
  int passed = 0, failed = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (!rows[i].counted)
      continue;
    if (outcomes[i].passed) {
      ++passed;
      continue;
    }
    ++failed;
    Group &g = groups[outcomes[i].group];
    if (g.count++ == 0) {
      g.example = rows[i].local;
      g.exampleError = outcomes[i].firstError;
    }
    g.sources[rows[i].source]++;
  }
  std::vector<std::pair<std::string, Group>> sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) { return a.second.count > b.second.count; });
  std::printf("\nfailures by first error (counted files; %zu groups, top %d)\n", sorted.size(),
              failuresLimit);
  std::printf("%s\n", std::string(70, '-').c_str());
  for (size_t k = 0; k < sorted.size() && int(k) < failuresLimit; ++k) {
    const auto &[msg, g] = sorted[k];
    std::string srcs;
    for (const auto &[s, n] : g.sources)
      srcs += (srcs.empty() ? "" : ", ") + s + " " + std::to_string(n);
    std::string example = g.example;
    if (!g.exampleError.empty())
      example = g.exampleError.rfind(g.example + ":", 0) == 0 ? g.exampleError
                                                               : g.example + ": " + g.exampleError;
    std::printf("%5d  %s\n       [%s]\n       e.g. %s\n", g.count, msg.c_str(), srcs.c_str(),
                example.c_str());
  }

  std::printf("\nrate: %zu files in %.2f s wall = %.1f files/s; %.1f files/s per core "
              "(%.2f s busy over %d job(s))\n",
              rows.size(), wall, wall > 0 ? rows.size() / wall : 0.0,
              busyTotal > 0 ? rows.size() / busyTotal : 0.0, busyTotal, jobs);

  if (!jsonOut.empty()) {
    nlohmann::json j;
    j["dir"] = dir;
    j["jobs"] = jobs;
    j["wall_seconds"] = wall;
    j["busy_seconds"] = busyTotal;
    j["passed"] = passed;
    j["failed"] = failed;
    auto &files = j["files"] = nlohmann::json::array();
    for (size_t i = 0; i < rows.size(); ++i)
      files.push_back({{"local", rows[i].local},
                       {"source", rows[i].source},
                       {"stages", rows[i].stagesRaw},
                       {"std", rows[i].stdValue},
                       {"options", rows[i].options},
                       {"counted", rows[i].counted},
                       {"expect_reject", outcomes[i].expectReject},
                       {"compiled", outcomes[i].compiled},
                       {"passed", outcomes[i].passed},
                       {"first_error", outcomes[i].firstError},
                       {"group", outcomes[i].group},
                       {"seconds", outcomes[i].seconds}});
    std::ofstream out(jsonOut);
    out << j.dump(1) << "\n";
    if (!out)
      std::fprintf(stderr, "msl-corpus: cannot write %s\n", jsonOut.c_str());
  }

  std::printf("%d passed, %d failed\n", passed, failed);
  std::fflush(stdout);
  if (minPassed >= 0 && passed < minPassed) {
    std::fprintf(stderr, "msl-corpus: %d passed, below the baseline of %ld\n", passed, minPassed);
    return 1;
  }
  return 0;
}
