#include "CorpusManifest.h"

#include "msl/compiler/Options.h"

#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace msl::corpus {
namespace {


/// RFC 4180: fields separated by commas, optionally double-quoted; inside
/// quotes "" is a quote and commas and newlines are literal.
std::vector<std::vector<std::string>> parseCsv(const std::string &text) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      row.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n')
        ++i;
      if (any || !field.empty()) {
        row.push_back(std::move(field));
        rows.push_back(std::move(row));
      }
      row.clear();
      field.clear();
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (any || !field.empty()) {
    row.push_back(std::move(field));
    rows.push_back(std::move(row));
  }
  return rows;
}

/// The -std= to pass: the first `-std=` token of the std column or, as
/// corpus-ml writes it, the first bare language version ("-std=ios-metal1.0
/// / macos-metal1.1" -> ios-metal1.0; "metal3.1"; "(Xcode default)" -> none).
std::string stdFromColumn(const std::string &col) {
  for (const auto &tok : splitSpaces(col)) {
    if (tok.rfind("-std=", 0) == 0)
      return tok.substr(5);
    if (msl::compiler::parseStdValue(tok))
      return tok;
  }
  return "";
}

/// The upstream repo root of a row inside the corpus: `local` minus its
/// upstream `path` suffix ("tnn/source/x.metal", "source/x.metal" -> "tnn").
std::string repoRoot(const std::string &local, const std::string &path, const std::string &source) {
  if (!path.empty() && local.size() > path.size() &&
      local.compare(local.size() - path.size(), path.size(), path) == 0) {
    std::string root = local.substr(0, local.size() - path.size());
    while (!root.empty() && root.back() == '/')
      root.pop_back();
    return root.empty() ? "." : root;
  }
  return source;
}

} // namespace

std::string normalizeRel(const std::string &p) {
  std::string s = fs::path(p).lexically_normal().generic_string();
  while (!s.empty() && s.back() == '/')
    s.pop_back();
  return s.empty() ? "." : s;
}

std::string joinRel(const std::string &a, const std::string &b) {
  if (a.empty() || a == ".")
    return normalizeRel(b);
  return normalizeRel(a + "/" + b);
}

std::vector<std::string> splitSpaces(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string tok; in >> tok;)
    out.push_back(tok);
  return out;
}

std::optional<std::string> readFile(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::map<std::string, std::string> filesUnder(const fs::path &dir, const std::string &folder, bool recursive) {
  std::map<std::string, std::string> files;
  fs::path base = dir / folder;
  std::error_code ec;
  if (!fs::is_directory(base, ec))
    return files;
  auto add = [&](const fs::directory_entry &e) {
    if (!e.is_regular_file())
      return;
    if (auto text = readFile(e.path()))
      files[normalizeRel(e.path().lexically_relative(dir).generic_string())] = std::move(*text);
  };
  if (recursive)
    for (const auto &e : fs::recursive_directory_iterator(base, ec))
      add(e);
  else
    for (const auto &e : fs::directory_iterator(base, ec))
      add(e);
  return files;
}

std::optional<std::vector<ManifestRow>> readManifest(const fs::path &dir, std::string &error) {
  auto manifest = readFile(dir / "manifest.csv");
  if (!manifest) {
    error = "cannot read " + (dir / "manifest.csv").string();
    return std::nullopt;
  }
  auto csv = parseCsv(*manifest);
  if (csv.empty()) {
    error = "empty manifest " + (dir / "manifest.csv").string();
    return std::nullopt;
  }
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < csv[0].size(); ++i)
    col[csv[0][i]] = i;
  for (const char *need : {"source", "path", "local", "role", "stages", "std", "flags"})
    if (!col.count(need)) {
      error = "the manifest " + (dir / "manifest.csv").string() + " has no column '" + need + "'";
      return std::nullopt;
    }
  auto get = [&](const std::vector<std::string> &r, const char *name) -> std::string {
    size_t i = col.at(name);
    return i < r.size() ? r[i] : std::string();
  };
  std::vector<ManifestRow> rows;
  for (size_t i = 1; i < csv.size(); ++i) {
    const auto &r = csv[i];
    ManifestRow row;
    row.role = get(r, "role");
    if (row.role != "source")
      continue;
    row.source = get(r, "source");
    row.local = normalizeRel(get(r, "local"));
    row.path = get(r, "path");
    row.stages = get(r, "stages");
    row.std = get(r, "std");
    row.flags = get(r, "flags");
    row.stdValue = stdFromColumn(row.std);
    if (!row.stdValue.empty())
      row.options.push_back("-std=" + row.stdValue);
    // Flags: split on spaces; [bracketed] tokens are optional variants and
    // left out; -I dirs and -include files are upstream-repo relative.
    std::string repo = repoRoot(row.local, row.path, row.source);
    auto toks = splitSpaces(row.flags);
    bool inBracket = false;
    for (size_t t = 0; t < toks.size(); ++t) {
      const std::string &tok = toks[t];
      if (inBracket || tok.front() == '[') {
        inBracket = tok.back() != ']';
        continue;
      }
      if (tok == "-I" || (tok.rfind("-I", 0) == 0 && tok.size() > 2)) {
        std::string inc = tok == "-I" ? (t + 1 < toks.size() ? toks[++t] : "") : tok.substr(2);
        std::string rel = joinRel(repo, inc);
        row.options.push_back("-I");
        row.options.push_back(rel);
        row.fileTrees.push_back(rel);
      } else if (tok == "-include" && t + 1 < toks.size()) {
        std::string rel = joinRel(repo, toks[++t]);
        row.options.push_back("-include");
        row.options.push_back(rel);
        std::string folder = fs::path(rel).parent_path().generic_string();
        row.fileDirs.push_back(folder.empty() ? "." : folder);
      } else {
        row.options.push_back(tok);
      }
    }
    std::string parent = fs::path(row.local).parent_path().generic_string();
    row.fileDirs.push_back(parent.empty() ? "." : parent);
    rows.push_back(std::move(row));
  }
  return rows;
}

} // namespace msl::corpus
