#include "msl/client/MslcDriver.h"

#include <cctype>
#include <deque>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "msl/client/Client.h"

namespace fs = std::filesystem;

namespace msl::client::mslc {
namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Where root/rel really is (every symlink resolved) when that is outside
// root's real path; nullopt when it stays inside. A path that cannot be
// resolved counts as outside.
std::optional<fs::path> realPathOutsideRoot(const fs::path& root, const std::string& rel) {
  std::error_code ec;
  fs::path realRoot = fs::canonical(root, ec);
  if (ec) return root / rel;
  fs::path real = fs::canonical(root / rel, ec);
  if (ec) return root / rel;
  fs::path inside = real.lexically_relative(realRoot);
  if (inside.empty() || *inside.begin() == "..") return real;
  return std::nullopt;
}

}  // namespace

bool readFile(const fs::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return false;
  *out = std::move(ss).str();
  return true;
}

std::optional<msl::v1::ArtifactKind> parseEmit(std::string_view name) {
  if (name == "llvm-bc") return msl::v1::LLVM_BITCODE;
  if (name == "llvm-ir") return msl::v1::LLVM_IR;
  if (name == "ptx") return msl::v1::PTX;
  if (name == "reflection") return msl::v1::REFLECTION;
  return std::nullopt;
}

std::string_view emitName(msl::v1::ArtifactKind kind) {
  switch (kind) {
    case msl::v1::LLVM_BITCODE: return "llvm-bc";
    case msl::v1::LLVM_IR: return "llvm-ir";
    case msl::v1::PTX: return "ptx";
    case msl::v1::REFLECTION: return "reflection";
    default: return "unspecified";
  }
}

msl::v1::ArtifactKind defaultEmit(const msl::v1::Target& target) {
  return target.arch() == msl::v1::Target::NVPTX64 ? msl::v1::PTX : msl::v1::LLVM_BITCODE;
}

bool parseTarget(std::string_view spec, msl::v1::Target* out, std::string* error) {
  msl::v1::Target t;
  if (spec == "x86_64") {
    t.set_arch(msl::v1::Target::X86_64);
  } else if (spec == "nvptx64") {
    t.set_arch(msl::v1::Target::NVPTX64);
  } else if (startsWith(spec, "nvptx64-")) {
    std::string_view cpu = spec.substr(8);
    // sm_NN with an optional letter suffix (sm_90a).
    bool ok = startsWith(cpu, "sm_") && cpu.size() > 3;
    std::size_t i = 3;
    while (ok && i < cpu.size() && std::isdigit(static_cast<unsigned char>(cpu[i]))) ++i;
    ok = ok && i > 3 && (i == cpu.size() || (i + 1 == cpu.size() && std::islower(static_cast<unsigned char>(cpu[i]))));
    if (!ok) {
      *error = "invalid NVPTX cpu '" + std::string(cpu) + "' in target '" + std::string(spec) +
               "' (expected e.g. nvptx64-sm_80)";
      return false;
    }
    t.set_arch(msl::v1::Target::NVPTX64);
    t.set_cpu(std::string(cpu));
  } else {
    *error = "unknown target '" + std::string(spec) + "' (expected x86_64, nvptx64 or nvptx64-sm_NN)";
    return false;
  }
  *out = t;
  return true;
}

std::optional<std::string> relativeToRoot(const fs::path& path, const fs::path& root) {
  auto attempt = [](const fs::path& p, const fs::path& r) -> std::optional<std::string> {
    fs::path rel = p.lexically_normal().lexically_relative(r.lexically_normal());
    if (rel.empty()) return std::nullopt;
    std::string s = rel.generic_string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    if (s.size() >= 2 && s.compare(s.size() - 2, 2, "/.") == 0) s.resize(s.size() - 2);
    if (s.empty()) s = ".";
    if (s == ".." || startsWith(s, "../")) return std::nullopt;
    return s;
  };
  fs::path abs = path.is_absolute() ? path : root / path;
  if (auto r = attempt(abs, root)) return r;
  // Maybe the same place through symlinks.
  std::error_code ec1, ec2;
  fs::path ca = fs::weakly_canonical(abs, ec1), cr = fs::weakly_canonical(root, ec2);
  if (!ec1 && !ec2) return attempt(ca, cr);
  return std::nullopt;
}

std::string usage() {
  return R"(usage: mslc [--server HOST:PORT] -c FILE.metal -o OUT [metal options]
            [--target x86_64|nvptx64[-sm_NN]] [--emit llvm-bc|llvm-ir|ptx|reflection]
       mslc run FILE.metal --kernel NAME ...   (runs a kernel; see mslc run --help)

Compiles a Metal Shading Language source on an msld server.

  -c FILE          the source (a path under the current directory)
  -o OUT           where to write the artifact; '-' for stdout
  --server ADDR    the msld server (default: $MSLD_ADDRESS, else 127.0.0.1:8980)
  --target T       x86_64 (default), nvptx64 (server's default SM), nvptx64-sm_NN
  --emit KIND      llvm-bc (default for x86_64), llvm-ir, ptx (default for nvptx64),
                   reflection (JSON)
  --stats          print cache hit and compile time to stderr
  --constant K=V   value of a [[function_constant]] by index or name
                   (--constant 0=true --constant scale=0.5); repeatable
  -h, --help       this help

Metal options (passed to the server):
  -D name, -Dname, -D name=def, -Dname=def   predefine a macro
  -I dir, -Idir    add a header search directory (under the current directory)
  -include FILE    include FILE (under the current directory) before the source
  -std=VERSION     language revision, e.g. -std=ios-metal2.0
  -ffast-math, -fno-fast-math
  -Werror, -W, -W<warning> (e.g. -Wno-unused-variable)

Headers included by the source are found here (quotes: the including file's
folder, then -I dirs; angle brackets: -I dirs) and sent with the request.
)";
}

bool ArgReader::is(std::string_view flag) const {
  const std::string& a = arg();
  return a == flag || (startsWith(flag, "--") && startsWith(a, std::string(flag) + "="));
}

bool ArgReader::value(std::string_view flag, bool allowAttached, std::string* v, std::string* error) {
  const std::string& a = arg();
  if (a == flag) {
    if (i_ + 1 >= args_.size()) {
      *error = "missing argument to '" + a + "'";
      return false;
    }
    *v = args_[++i_];
    return true;
  }
  if (allowAttached) {
    std::string_view rest = std::string_view(a).substr(flag.size());
    if (startsWith(rest, "=") && startsWith(flag, "--")) rest.remove_prefix(1);
    *v = std::string(rest);
    return true;
  }
  *error = "'" + a + "' needs its value as a separate argument";
  return false;
}

SourceOptions defaultSourceOptions(const char* env_address) {
  SourceOptions o;
  o.server = env_address && *env_address ? env_address : kDefaultAddress;
  return o;
}

OptionParse parseSourceOption(ArgReader& args, const fs::path& cwd, SourceOptions* out,
                              std::string* error) {
  const std::string a = args.arg();
  std::string v;
  auto fail = [&](std::string message) {
    *error = std::move(message);
    return OptionParse::kFailed;
  };
  if (args.is("--server")) {
    if (!args.value("--server", true, &v, error)) return OptionParse::kFailed;
    if (v.empty()) return fail("empty --server address");
    out->server = v;
  } else if (a == "--stats") {
    out->stats = true;
  } else if (startsWith(a, "-D")) {
    if (!args.value("-D", true, &v, error)) return OptionParse::kFailed;
    if (v.empty() || v.front() == '=') return fail("missing macro name in '" + a + "'");
    out->options.push_back("-D");
    out->options.push_back(v);
  } else if (startsWith(a, "-I")) {
    if (!args.value("-I", true, &v, error)) return OptionParse::kFailed;
    if (v.empty()) return fail("missing directory in '" + a + "'");
    auto rel = relativeToRoot(v, cwd);
    if (!rel) {
      out->warnings.push_back("ignoring -I " + v +
                              ": outside the current directory, which is all the server can see");
      return OptionParse::kTaken;
    }
    out->options.push_back("-I");
    out->options.push_back(*rel);
    out->include_dirs.push_back(*rel);
  } else if (a == "-include") {
    if (!args.value("-include", false, &v, error)) return OptionParse::kFailed;
    auto rel = relativeToRoot(v, cwd);
    if (!rel || *rel == ".")
      return fail("-include " + v + ": not a file under the current directory, which is all the server can see");
    out->options.push_back("-include");
    out->options.push_back(*rel);
    out->forced_includes.push_back(*rel);
  } else if (args.is("--constant")) {
    if (!args.value("--constant", true, &v, error)) return OptionParse::kFailed;
    auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
      return fail("--constant needs KEY=VALUE, not '" + v + "'");
    out->function_constants[v.substr(0, eq)] = v.substr(eq + 1);
  } else if (startsWith(a, "-std=")) {
    if (a.size() == 5) return fail("missing value in '-std='");
    out->options.push_back(a);
  } else if (a == "-ffast-math" || a == "-fno-fast-math" || startsWith(a, "-W")) {
    out->options.push_back(a);
  } else {
    return OptionParse::kNotMine;
  }
  return OptionParse::kTaken;
}

bool parseCommandLine(const std::vector<std::string>& args, const char* env_address,
                      const fs::path& cwd, Invocation* out, std::string* error) {
  Invocation inv;
  static_cast<SourceOptions&>(inv) = defaultSourceOptions(env_address);
  std::optional<std::string> targetSpec, emitSpec;
  bool haveInput = false, haveOutput = false;

  for (ArgReader r(args); !r.done(); r.next()) {
    const std::string a = r.arg();
    switch (parseSourceOption(r, cwd, &inv, error)) {
      case OptionParse::kTaken: continue;
      case OptionParse::kFailed: return false;
      case OptionParse::kNotMine: break;
    }
    std::string v;
    if (a == "-h" || a == "--help") {
      inv.help = true;
    } else if (r.is("--target")) {
      if (!r.value("--target", true, &v, error)) return false;
      targetSpec = v;
    } else if (r.is("--emit")) {
      if (!r.value("--emit", true, &v, error)) return false;
      emitSpec = v;
    } else if (a == "-c") {
      if (!r.value("-c", false, &v, error)) return false;
      if (haveInput) return *error = "more than one input file", false;
      inv.input = v;
      haveInput = true;
    } else if (a == "-o") {
      if (!r.value("-o", false, &v, error)) return false;
      if (haveOutput) return *error = "more than one -o", false;
      inv.output = v;
      haveOutput = true;
    } else if (a.size() > 1 && a.front() == '-') {
      *error = "unknown argument: '" + a + "'";
      return false;
    } else {
      // A bare file name is taken as the input too.
      if (haveInput) return *error = "more than one input file ('" + inv.input + "', '" + a + "')", false;
      inv.input = a;
      haveInput = true;
    }
  }

  if (inv.help) {
    *out = std::move(inv);
    return true;
  }
  if (targetSpec && !parseTarget(*targetSpec, &inv.target, error)) return false;
  if (!targetSpec) inv.target.set_arch(msl::v1::Target::X86_64);
  if (emitSpec) {
    auto k = parseEmit(*emitSpec);
    if (!k) {
      *error = "unknown --emit '" + *emitSpec + "' (expected llvm-bc, llvm-ir, ptx or reflection)";
      return false;
    }
    inv.emit = *k;
  } else {
    inv.emit = defaultEmit(inv.target);
  }
  if (inv.emit == msl::v1::PTX && inv.target.arch() != msl::v1::Target::NVPTX64) {
    *error = "--emit ptx needs --target nvptx64";
    return false;
  }
  if (!haveInput) return *error = "no input file (-c FILE.metal)", false;
  if (!haveOutput) return *error = "no output file (-o OUT)", false;
  *out = std::move(inv);
  return true;
}

std::vector<IncludeDirective> scanIncludes(std::string_view src) {
  // Phase 1: logical lines (splices removed, comments replaced by a space).
  struct Line {
    unsigned number;
    std::string text;
  };
  std::vector<Line> lines;
  std::string cur;
  unsigned lineNo = 1, curStart = 1;
  enum { kCode, kLineComment, kBlockComment, kString, kChar } state = kCode;
  auto pushLine = [&] {
    lines.push_back({curStart, std::move(cur)});
    cur.clear();
  };
  const std::size_t n = src.size();
  std::size_t i = 0;
  // Next char after splices, without consuming.
  auto peek = [&](std::size_t j) -> std::pair<char, std::size_t> {
    while (j < n && src[j] == '\\') {
      if (j + 1 < n && src[j + 1] == '\n') j += 2;
      else if (j + 2 < n && src[j + 1] == '\r' && src[j + 2] == '\n') j += 3;
      else break;
    }
    return {j < n ? src[j] : '\0', j};
  };
  while (i < n) {
    char c = src[i];
    // Line splice: invisible everywhere.
    if (c == '\\' && ((i + 1 < n && src[i + 1] == '\n') ||
                      (i + 2 < n && src[i + 1] == '\r' && src[i + 2] == '\n'))) {
      i += src[i + 1] == '\n' ? 2 : 3;
      ++lineNo;
      continue;
    }
    if (c == '\n') {
      ++lineNo;
      if (state == kBlockComment) {
        ++i;
        continue;
      }
      state = kCode;  // ends line comments and unterminated literals
      pushLine();
      curStart = lineNo;
      ++i;
      continue;
    }
    switch (state) {
      case kCode: {
        if (c == '/') {
          auto [nc, j] = peek(i + 1);
          if (nc == '/') { state = kLineComment; i = j + 1; cur += ' '; continue; }
          if (nc == '*') { state = kBlockComment; i = j + 1; cur += ' '; continue; }
        }
        if (c == '"') state = kString;
        if (c == '\'') {
          // Not a char literal when it is a digit separator (1'000, 0xFF'FF):
          // look back over the pp-number.
          std::size_t k = cur.size();
          while (k > 0 && (isIdentChar(cur[k - 1]) || cur[k - 1] == '.' || cur[k - 1] == '\'')) --k;
          bool inNumber = k < cur.size() && (std::isdigit(static_cast<unsigned char>(cur[k])) ||
                                             (cur[k] == '.' && k + 1 < cur.size() &&
                                              std::isdigit(static_cast<unsigned char>(cur[k + 1]))));
          if (!inNumber) state = kChar;
        }
        cur += c;
        ++i;
        break;
      }
      case kLineComment:
        ++i;
        break;
      case kBlockComment: {
        if (c == '*') {
          auto [nc, j] = peek(i + 1);
          if (nc == '/') { state = kCode; i = j + 1; continue; }
        }
        ++i;
        break;
      }
      case kString:
      case kChar: {
        cur += c;
        ++i;
        if (c == '\\') {
          auto [nc, j] = peek(i);
          if (j < n && nc != '\n') { cur += nc; i = j + 1; }
        } else if ((state == kString && c == '"') || (state == kChar && c == '\'')) {
          state = kCode;
        }
        break;
      }
    }
  }
  if (!cur.empty()) pushLine();

  // Phase 2: directives.
  std::vector<IncludeDirective> out;
  for (const auto& [number, text] : lines) {
    std::size_t p = 0;
    auto skipWs = [&] { while (p < text.size() && (text[p] == ' ' || text[p] == '\t' || text[p] == '\r' || text[p] == '\f' || text[p] == '\v')) ++p; };
    skipWs();
    if (p >= text.size() || text[p] != '#') continue;
    ++p;
    skipWs();
    std::size_t s = p;
    while (p < text.size() && isIdentChar(text[p])) ++p;
    std::string_view word(text.data() + s, p - s);
    if (word != "include" && word != "import" && word != "include_next") continue;
    skipWs();
    if (p >= text.size()) continue;
    char open = text[p];
    char close = open == '"' ? '"' : open == '<' ? '>' : '\0';
    if (!close) continue;  // computed include
    std::size_t e = text.find(close, p + 1);
    if (e == std::string::npos || e == p + 1) continue;
    out.push_back({text.substr(p + 1, e - p - 1), open == '<', word == "include_next", number});
  }
  return out;
}

CollectedSources collectIncludes(const fs::path& root, const std::string& main_path,
                                 std::string_view main_source,
                                 const std::vector<std::string>& include_dirs) {
  CollectedSources result;
  std::set<std::string> seen{main_path};
  std::set<std::string> warned;
  struct Pending {
    std::string path;
    std::string_view text;
  };
  std::deque<Pending> queue{{main_path, main_source}};
  auto warnOnce = [&](const std::string& w) {
    if (warned.insert(w).second) result.warnings.push_back(w);
  };

  while (!queue.empty()) {
    Pending cur = queue.front();
    queue.pop_front();
    const std::string folder = fs::path(cur.path).parent_path().generic_string();
    for (const auto& inc : scanIncludes(cur.text)) {
      const std::string where = cur.path + ":" + std::to_string(inc.line);
      if (fs::path(inc.name).is_absolute()) {
        warnOnce(where + ": not sending absolute include '" + inc.name + "'");
        continue;
      }
      std::vector<std::string> dirs;
      if (!inc.angled && !inc.next) dirs.push_back(folder.empty() ? "." : folder);
      dirs.insert(dirs.end(), include_dirs.begin(), include_dirs.end());
      for (const auto& dir : dirs) {
        fs::path candidate = fs::path(dir) / inc.name;
        std::error_code ec;
        auto rel = relativeToRoot(candidate, root);
        if (!rel) {
          if (fs::is_regular_file(root / candidate, ec)) {
            warnOnce(where + ": not sending '" + (root / candidate).lexically_normal().string() +
                     "': outside the current directory");
          }
          continue;
        }
        if (!fs::is_regular_file(root / *rel, ec)) continue;
        if (seen.insert(*rel).second) {
          // A symlink (of the header or a folder on its way) must not take
          // us out of the tree: evil.h -> /etc/passwd would be uploaded and
          // come back in diagnostics.
          if (auto real = realPathOutsideRoot(root, *rel)) {
            result.errors.push_back(where + ": refusing to send '" + *rel + "': it resolves to '" +
                                    real->string() + "', outside the source tree '" +
                                    root.string() + "'");
            if (!inc.next) break;
            continue;
          }
          std::string bytes;
          if (!readFile(root / *rel, &bytes)) {
            warnOnce(where + ": cannot read '" + *rel + "'; not sending it");
            continue;
          }
          auto [it, _] = result.files.emplace(*rel, std::move(bytes));
          queue.push_back({*rel, it->second});
        }
        if (!inc.next) break;  // the first match wins, as for the compiler
      }
    }
  }
  return result;
}

std::string_view severityName(msl::v1::Diagnostic::Severity severity) {
  switch (severity) {
    case msl::v1::Diagnostic::NOTE: return "note";
    case msl::v1::Diagnostic::REMARK: return "remark";
    case msl::v1::Diagnostic::WARNING: return "warning";
    case msl::v1::Diagnostic::ERROR: return "error";
    case msl::v1::Diagnostic::FATAL: return "fatal error";
    default: return "diagnostic";
  }
}

std::string formatDiagnostic(const msl::v1::Diagnostic& d) {
  std::string out;
  if (!d.file().empty()) {
    out += d.file();
    if (d.line() > 0) {
      out += ":" + std::to_string(d.line());
      if (d.column() > 0) out += ":" + std::to_string(d.column());
    }
    out += ": ";
  }
  out += severityName(d.severity());
  out += ": ";
  out += d.message();
  out += "\n";
  for (const auto& note : d.notes()) out += formatDiagnostic(note);
  return out;
}

std::string formatSummary(const msl::v1::CompileResponse& response) {
  int warnings = 0, errors = 0;
  for (const auto& d : response.diagnostics()) {
    if (d.severity() == msl::v1::Diagnostic::WARNING) ++warnings;
    if (d.severity() == msl::v1::Diagnostic::ERROR || d.severity() == msl::v1::Diagnostic::FATAL) ++errors;
  }
  auto count = [](int n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  if (warnings && errors) return count(warnings, "warning") + " and " + count(errors, "error") + " generated.\n";
  if (warnings) return count(warnings, "warning") + " generated.\n";
  if (errors) return count(errors, "error") + " generated.\n";
  return {};
}

std::string formatDiagnostics(const msl::v1::CompileResponse& response) {
  std::string out;
  for (const auto& d : response.diagnostics()) out += formatDiagnostic(d);
  return out + formatSummary(response);
}

bool loadSources(const std::string& input, const SourceOptions& options, const fs::path& cwd,
                 LoadedSources* out, std::ostream& err) {
  // One file under cwd: its path relative to cwd and its bytes.
  auto load = [&](const std::string& given, std::string* rel, std::string* bytes) {
    std::error_code ec;
    auto path = relativeToRoot(given, cwd);
    if (!path || *path == ".") {
      err << "mslc: error: '" << given
          << "' is not a file under the current directory (the server sees only paths relative to it)\n";
      return false;
    }
    if (!fs::is_regular_file(cwd / *path, ec)) {
      err << "mslc: error: cannot read '" << given << "'\n";
      return false;
    }
    if (auto real = realPathOutsideRoot(cwd, *path)) {
      err << "mslc: error: refusing to send '" << given << "': it resolves to '" << real->string()
          << "', outside the current directory '" << cwd.string() << "'\n";
      return false;
    }
    if (!readFile(cwd / *path, bytes)) {
      err << "mslc: error: cannot read '" << given << "'\n";
      return false;
    }
    *rel = std::move(*path);
    return true;
  };
  std::string mainPath, source;
  if (!load(input, &mainPath, &source)) return false;
  std::map<std::string, std::string> files;
  auto collect = [&](const std::string& path, std::string_view text) {
    CollectedSources collected = collectIncludes(cwd, path, text, options.include_dirs);
    for (const auto& w : collected.warnings) err << "mslc: warning: " << w << "\n";
    for (const auto& e : collected.errors) err << "mslc: error: " << e << "\n";
    files.merge(collected.files);
    return collected.errors.empty();
  };
  if (!collect(mainPath, source)) return false;
  for (const std::string& forced : options.forced_includes) {
    std::string rel, bytes;
    if (!load(forced, &rel, &bytes)) return false;
    auto [it, _] = files.insert_or_assign(rel, std::move(bytes));
    if (!collect(rel, it->second)) return false;
  }
  out->main_path = std::move(mainPath);
  out->main_source = std::move(source);
  out->files = std::move(files);
  return true;
}

int run(const std::vector<std::string>& args, const char* env_address, std::ostream& out,
        std::ostream& err) {
  Invocation inv;
  fs::path cwd;
  LoadedSources sources;
  if (auto done = startCommand(args, env_address, out, err, parseCommandLine, usage, "mslc --help", &inv, &cwd,
                               &sources))
    return *done;

  ClientOptions copts;
  copts.address = inv.server;
  Client client(copts);
  auto resp = client.compileFiles(sources.main_path, sources.main_source, sources.files, inv.options,
                                  inv.target, {inv.emit}, inv.function_constants);
  if (!resp) {
    err << "mslc: error: " << inv.server << ": " << describeStatus(resp.status()) << "\n";
    return 1;
  }
  err << formatDiagnostics(*resp);
  if (inv.stats) {
    err << "mslc: stats: cache_hit=" << (resp->cache_hit() ? "true" : "false")
        << " compile_time=" << (resp->compile_time_us() / 1000.0) << " ms";
    if (!resp->action_key().empty()) err << " action_key=" << resp->action_key();
    err << "\n";
  }
  if (!resp->success()) return 1;

  const msl::v1::Artifact* artifact = nullptr;
  for (const auto& a : resp->artifacts()) {
    if (a.kind() == inv.emit) artifact = &a;
  }
  if (!artifact) {
    err << "mslc: error: the server returned no " << emitName(inv.emit) << " artifact\n";
    return 1;
  }
  auto bytes = client.fetchArtifact(*artifact);  // already inline after compileFiles
  if (!bytes) {
    err << "mslc: error: fetching the " << emitName(inv.emit)
        << " artifact: " << describeStatus(bytes.status()) << "\n";
    return 1;
  }
  if (inv.output == "-") {
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    out.flush();
    if (!out) {
      err << "mslc: error: writing to stdout failed\n";
      return 1;
    }
    return 0;
  }
  std::ofstream file(inv.output, std::ios::binary | std::ios::trunc);
  file.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
  file.close();
  if (!file) {
    err << "mslc: error: cannot write '" << inv.output << "'\n";
    return 1;
  }
  return 0;
}

}  // namespace msl::client::mslc
