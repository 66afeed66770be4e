#include "msl/client/MslcDriver.h"

#include <cctype>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "msl/client/Client.h"
#include "msl/client/FastCompile.h"

namespace fs = std::filesystem;

namespace msl::client::mslc {
namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

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
  return R"(usage: mslc [--server HOST:PORT] [-c|-S] FILE.metal... [-o OUT] [metal options]
            [-MD|-MMD] [-MF FILE] [-MT TARGET] [-MQ TARGET] [-MP]
            [--target x86_64|nvptx64[-sm_NN]] [--emit llvm-bc|llvm-ir|ptx|reflection]
            [--tls-ca FILE [--tls-cert FILE --tls-key FILE]] [--token-file FILE] [--request-id ID]
       mslc run FILE.metal --kernel NAME ...   (runs a kernel; see mslc run --help)

Compiles Metal Shading Language sources on an msld server, as `metal -c` does.

  -c               compile each FILE.metal (any path) to NAME.air in the current
                   directory, or to -o OUT (one input only; '-' for stdout)
  -S               LLVM IR (PTX for nvptx64) instead, NAME.ll (NAME.ptx)
  -emit-llvm       with -S: LLVM IR; with -c: LLVM bitcode (also for nvptx64)
  -o OUT           where to write the artifact; '-' for stdout
  -MD, -MMD        also write a Make dependency file (OUT with .d for its
                   extension, or -MF FILE), as clang does
  -MF FILE, -MT TARGET, -MQ TARGET (quoted for Make), -MP (a phony rule per header)
  --server ADDR    the msld server (default: $MSLD_ADDRESS, else 127.0.0.1:8980)
  --tls-ca FILE    connect over TLS; verify the server's certificate with this CA
  --tls-cert FILE, --tls-key FILE   client certificate and key (msld --tls-client-ca)
  --token-file F   send the token in F (default: $MSLD_TOKEN) as 'authorization: Bearer'
  --request-id ID  send ID as x-request-id: msld logs it on the request's lines
  --target T       x86_64 (default), nvptx64 (server's default SM), nvptx64-sm_NN
  --emit KIND      llvm-bc (default for x86_64), llvm-ir, ptx (default for nvptx64),
                   reflection (JSON)
  --stats          print cache hit and compile time to stderr
  --constant K=V   value of a [[function_constant]] by index or name
                   (--constant 0=true --constant scale=0.5); repeatable
  -h, --help       this help

Metal options (passed to the server):
  -D name, -Dname, -D name=def, -Dname=def   predefine a macro
  -I dir, -Idir    add a header search directory (any path)
  -include FILE    include FILE (any path) before the source
  -std=VERSION     language revision, e.g. -std=ios-metal2.0
  -ffast-math, -fno-fast-math
  -Werror, -W, -W<warning> (e.g. -Wno-unused-variable)

Headers included by the source are found here (quotes: the including file's
folder, then -I dirs; angle brackets: -I dirs) and sent with the request: only
the files the source includes, under the current directory or a folder the
command line names. Diagnostics name files as you spelled them.
Exit status: 0 on success, 1 when any input failed.
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
  } else if (args.is("--tls-ca") || args.is("--tls-cert") || args.is("--tls-key") ||
             args.is("--token-file")) {
    std::string flag = a.substr(0, a.find('='));
    if (!args.value(flag, true, &v, error)) return OptionParse::kFailed;
    if (v.empty()) return fail("empty " + flag + " file");
    (flag == "--tls-ca"     ? out->tls_ca
     : flag == "--tls-cert" ? out->tls_cert
     : flag == "--tls-key"  ? out->tls_key
                            : out->token_file) = v;
  } else if (args.is("--request-id")) {
    if (!args.value("--request-id", true, &v, error)) return OptionParse::kFailed;
    if (v.empty() || v.size() > 128) return fail("--request-id must have 1 to 128 characters");
    for (char c : v)
      if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
        return fail("--request-id must be printable ASCII without blanks");
    out->request_id = v;
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
    // Kept as spelled (a host path, anywhere): loadSources maps it to the
    // request's relative path, and headers found in it print as clang would.
    out->options.push_back("-I");
    out->options.push_back(v);
    out->include_dirs.push_back(v);
  } else if (a == "-include") {
    if (!args.value("-include", false, &v, error)) return OptionParse::kFailed;
    if (v.empty()) return fail("missing file in '-include'");
    out->options.push_back("-include");
    out->options.push_back(v);
    out->forced_includes.push_back(v);
  } else if (args.is("--constant")) {
    if (!args.value("--constant", true, &v, error)) return OptionParse::kFailed;
    auto eq = v.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
      return fail("--constant needs KEY=VALUE, not '" + v + "'");
    out->function_constants[v.substr(0, eq)] = v.substr(eq + 1);
  } else if (startsWith(a, "-std=")) {
    if (a.size() == 5) return fail("missing value in '-std='");
    out->options.push_back(a);
  } else if (a == "-ffast-math" || a == "-fno-fast-math" || startsWith(a, "-W") ||
             startsWith(a, "-fmetal-math-mode=") || startsWith(a, "-fmetal-math-fp32-functions=") ||
             startsWith(a, "-mmacosx-version-min=") || startsWith(a, "-mios-version-min=") ||
             a == "-O0" || a == "-O1" || a == "-O2" || a == "-O3" || a == "-Os" || a == "-Oz" || a == "-O" ||
             a == "-g" || a == "-gline-tables-only" || a == "-frecord-sources" || a == "-fno-record-sources" ||
             a == "-fmodules" || a == "-fno-modules") {
    // Passed on: msld checks them (compiler/Options.h says which change
    // the artifact).
    out->options.push_back(a);
  } else if (a == "-target" || a == "-x") {
    // `metal -target air64-apple-macos14.0` (the language of that OS when
    // there is no -std), `-x metal`.
    if (!args.value(a, false, &v, error)) return OptionParse::kFailed;
    out->options.push_back(a);
    out->options.push_back(v);
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
  bool haveOutput = false, assemble = false, emitLlvm = false;

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
      // Compile only, as `metal -c`: what mslc always does (the inputs are
      // the arguments that are not options: `-c a.metal b.metal`).
    } else if (a == "-S") {
      assemble = true;
    } else if (a == "-emit-llvm") {
      emitLlvm = true;
    } else if (startsWith(a, "-o")) {
      if (!r.value("-o", true, &v, error)) return false;
      if (v.empty()) return *error = "missing filename after '-o'", false;
      if (haveOutput) return *error = "more than one -o", false;
      inv.output = v;
      haveOutput = true;
    } else if (a == "-MD" || a == "-MMD") {
      inv.deps.write = true;
      inv.deps.system = a == "-MD";
    } else if (a == "-MP") {
      inv.deps.phony = true;
    } else if (startsWith(a, "-MF") || startsWith(a, "-MT") || startsWith(a, "-MQ")) {
      const std::string flag = a.substr(0, 3);
      if (!r.value(flag, true, &v, error)) return false;
      if (v.empty()) return *error = "missing argument to '" + flag + "'", false;
      if (flag == "-MF") inv.deps.file = v;
      else inv.deps.targets.push_back(flag == "-MT" ? v : quoteMakeTarget(v));
    } else if (a == "-") {
      return *error = "reading the source from standard input is not supported", false;
    } else if (a.size() > 1 && a.front() == '-') {
      *error = "unknown argument: '" + a + "'";
      return false;
    } else {
      inv.inputs.push_back(a);
    }
  }

  if (inv.help) {
    *out = std::move(inv);
    return true;
  }
  if (targetSpec && !parseTarget(*targetSpec, &inv.target, error)) return false;
  if (!targetSpec) inv.target.set_arch(msl::v1::Target::X86_64);
  const bool nvptx = inv.target.arch() == msl::v1::Target::NVPTX64;
  if (emitSpec) {
    auto k = parseEmit(*emitSpec);
    if (!k) {
      *error = "unknown --emit '" + *emitSpec + "' (expected llvm-bc, llvm-ir, ptx or reflection)";
      return false;
    }
    inv.emit = *k;
  } else if (assemble) {
    // -S: the target's assembly (PTX for nvptx64); -S -emit-llvm: LLVM IR.
    inv.emit = nvptx && !emitLlvm ? msl::v1::PTX : msl::v1::LLVM_IR;
  } else {
    // -c: AIR-like LLVM bitcode for x86_64, PTX for nvptx64; -c -emit-llvm: LLVM bitcode.
    inv.emit = emitLlvm ? msl::v1::LLVM_BITCODE : defaultEmit(inv.target);
  }
  if (inv.emit == msl::v1::PTX && !nvptx) {
    *error = "--emit ptx needs --target nvptx64";
    return false;
  }
  if (inv.inputs.empty()) return *error = "no input files", false;
  if (haveOutput && inv.inputs.size() > 1)
    return *error = "cannot specify -o when generating multiple output files", false;
  if (inv.deps.write && !inv.deps.file.empty() && inv.inputs.size() > 1)
    return *error = "cannot specify -MF when generating multiple dependency files", false;
  inv.input = inv.inputs.front();
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

// collectIncludes, loadSources: MslcSources.cpp.

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

bool makeClientOptions(const SourceOptions& options, const char* env_token, ClientOptions* out,
                       std::string* error) {
  ClientOptions copts;
  copts.address = options.server;
  if ((!options.tls_ca.empty() || !options.tls_cert.empty() || !options.tls_key.empty()) &&
      !loadTlsFiles(options.tls_ca, options.tls_cert, options.tls_key, &copts, error))
    return false;
  std::string token;
  if (!options.token_file.empty()) {
    std::ifstream in(options.token_file, std::ios::binary);
    if (!in) return *error = "--token-file " + options.token_file + ": cannot read", false;
    std::getline(in, token);  // the first line
    if (token.size() > 4096) return *error = "--token-file " + options.token_file + ": token too long", false;
  } else if (env_token) {
    token = env_token;
  }
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.front()))) token.erase(0, 1);
  if (!options.token_file.empty() && token.empty())
    return *error = "--token-file " + options.token_file + ": no token in its first line", false;
  for (char c : token)
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f)
      return *error = std::string(options.token_file.empty() ? "$MSLD_TOKEN" : "the --token-file") +
                      " token contains blanks or control characters",
             false;
  copts.auth_token = std::move(token);
  copts.request_id = options.request_id;
  *out = std::move(copts);
  return true;
}

std::string describeFailure(const grpc::Status& status, const SourceOptions& options, bool with_server) {
  std::string out = "mslc: error: ";
  if (with_server || status.error_code() == grpc::StatusCode::UNAVAILABLE) out += options.server + ": ";
  out += describeStatus(status) + "\n";
  bool tls = !options.tls_ca.empty() || !options.tls_cert.empty() || !options.tls_key.empty();
  const std::string& m = status.error_message();
  auto has = [&](const char* text) { return m.find(text) != std::string::npos; };
  switch (status.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:
      if (has("onnection refused") || has("DNS resolution failed")) {
        out += "mslc: note: nothing answers at " + options.server + ": is msld running there?\n";
      } else if (!tls) {
        out += "mslc: note: the connection closed before the server answered: if msld serves TLS "
               "(--tls-cert), a plaintext client fails its TLS handshake like this; connect with "
               "--tls-ca FILE (the CA of the server's certificate)\n";
      } else {
        out += "mslc: note: the TLS handshake probably failed: check that --tls-ca is the CA of the server's "
               "certificate (and that the certificate names the host in --server), that the server serves TLS, "
               "and, if it requires client certificates (--tls-client-ca), --tls-cert and --tls-key\n";
      }
      break;
    case grpc::StatusCode::UNAUTHENTICATED:
      out += "mslc: note: msld requires a token: set $MSLD_TOKEN or pass --token-file FILE\n";
      break;
    default:
      break;
  }
  return out;
}

namespace {

// The CompileRequest Client::compileFiles sends, when every file goes
// inline (nothing to upload first) and it fits fastCompile; else nullopt.
std::optional<msl::v1::CompileRequest> inlineCompileRequest(const LoadedSources& sources, const Invocation& inv,
                                                            const ClientOptions& copts) {
  std::size_t total = sources.main_source.size();
  if (sources.main_source.size() > copts.inline_threshold) return std::nullopt;
  for (const auto& [path, bytes] : sources.files) {
    if (bytes.size() > copts.inline_threshold) return std::nullopt;
    total += bytes.size() + path.size();
    if (total > kFastCompileMaxRequestBytes) return std::nullopt;
  }
  msl::v1::CompileRequest req;
  req.set_main_path(sources.main_path);
  for (const auto& o : sources.options) req.add_options(o);
  req.mutable_function_constants()->insert(inv.function_constants.begin(), inv.function_constants.end());
  *req.mutable_target() = inv.target;
  req.add_outputs(inv.emit);
  req.mutable_main_source()->set_inline_(sources.main_source);
  for (const auto& [path, bytes] : sources.files) {
    auto* f = req.add_files();
    f->set_path(path);
    f->mutable_content()->set_inline_(bytes);
  }
  return req;
}

// Writes `bytes` to `path` ("-": `out`); false with a message on `err`.
bool writeOutput(const std::string& path, std::string_view bytes, std::ostream& out, std::ostream& err) {
  if (path == "-") {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      err << "mslc: error: writing to stdout failed\n";
      return false;
    }
    return true;
  }
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) {
    err << "mslc: error: cannot write '" << path << "'\n";
    return false;
  }
  return true;
}

// One input of `mslc -c`: load, compile, diagnostics, dependency file,
// artifact. `client` is made on first use. Returns the exit status.
int compileInput(const Invocation& inv, const std::string& input, const fs::path& cwd, const ClientOptions& copts,
                 std::unique_ptr<Client, void (*)(Client*)>& client, std::ostream& out, std::ostream& err) {
  LoadedSources sources;
  if (!loadSources(input, inv, cwd, &sources, err)) return 1;
  // A cache hit is mostly this RPC: without gRPC's machinery where the
  // request goes inline in one message (FastCompile.h), else (or when that
  // gives up) through the Client.
  std::optional<Result<msl::v1::CompileResponse>> fast;
  if (auto request = inlineCompileRequest(sources, inv, copts); request && !std::getenv(kNoFastPathEnv))
    fast = fastCompile(copts, *request);
  if (!fast && !client) client = makeCommandClient(copts);
  auto resp = fast ? std::move(*fast)
                   : client->compileFiles(sources.main_path, sources.main_source, sources.files, sources.options,
                                          inv.target, {inv.emit}, inv.function_constants);
  if (!resp) {
    err << describeFailure(resp.status(), inv, true);
    return 1;
  }
  mapDiagnosticPaths(&*resp, sources);
  err << formatDiagnostics(*resp);
  if (inv.stats) {
    err << "mslc: stats: cache_hit=" << (resp->cache_hit() ? "true" : "false")
        << " compile_time=" << (resp->compile_time_us() / 1000.0) << " ms";
    if (!resp->action_key().empty()) err << " action_key=" << resp->action_key();
    err << "\n";
  }
  const std::string output = inv.output.empty() ? defaultOutputName(input, inv.emit) : inv.output;
  if (inv.deps.write) {
    // As clang: next to the output (its extension replaced by .d) unless -MF;
    // the target is the output unless -MT/-MQ. Written for a failed compile too.
    std::string depfile = inv.deps.file;
    if (depfile.empty())
      depfile = output == "-" ? fs::path(input).filename().replace_extension(".d").string()
                              : fs::path(output).replace_extension(".d").string();
    std::vector<std::string> targets = inv.deps.targets;
    if (targets.empty()) targets.push_back(quoteMakeTarget(output));
    if (!writeOutput(depfile, formatDependencyFile(targets, sources.dependencies, inv.deps.phony), out, err))
      return 1;
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
  if (!client && artifact->inline_data().empty() && artifact->digest().size_bytes() > 0)
    client = makeCommandClient(copts);  // the fast path got it by digest only
  auto bytes = client ? client->fetchArtifact(*artifact) : Result<std::string>(artifact->inline_data());
  if (!bytes) {
    err << "mslc: error: fetching the " << emitName(inv.emit)
        << " artifact: " << describeStatus(bytes.status()) << "\n";
    return 1;
  }
  bool ok = writeOutput(output, *bytes, out, err);
  return ok ? 0 : 1;
}

}  // namespace

int run(const std::vector<std::string>& args, const char* env_address, std::ostream& out,
        std::ostream& err) {
  Invocation inv;
  fs::path cwd;
  if (auto done = startCommand(args, env_address, out, err, parseCommandLine, usage, "mslc --help", &inv, &cwd,
                               static_cast<LoadedSources*>(nullptr)))
    return *done;

  ClientOptions copts;
  std::string error;
  if (!makeClientOptions(inv, std::getenv(kTokenEnv), &copts, &error)) {
    err << "mslc: error: " << error << "\n";
    return 1;
  }
  std::unique_ptr<Client, void (*)(Client*)> client(nullptr, [](Client*) {});
  // Each input in turn, as clang: a failed one does not stop the others.
  int status = 0;
  for (const std::string& input : inv.inputs)
    if (compileInput(inv, input, cwd, copts, client, out, err) != 0) status = 1;
  return status;
}

}  // namespace msl::client::mslc
