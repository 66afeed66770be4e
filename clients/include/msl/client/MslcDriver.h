// The pieces of the `mslc` command line, kept apart from main() so that they
// can be unit-tested: argument parsing and option normalization, target and
// emit parsing, #include scanning and resolution, diagnostic formatting.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <ostream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "msl/v1/compiler.pb.h"

namespace msl::client::mslc {

inline constexpr const char* kDefaultAddress = "127.0.0.1:8980";
inline constexpr const char* kAddressEnv = "MSLD_ADDRESS";

// "llvm-bc", "llvm-ir", "ptx", "reflection".
std::optional<msl::v1::ArtifactKind> parseEmit(std::string_view name);
std::string_view emitName(msl::v1::ArtifactKind kind);
// llvm-bc for x86_64, ptx for nvptx64.
msl::v1::ArtifactKind defaultEmit(const msl::v1::Target& target);

// "x86_64", "nvptx64" (server's default SM) or "nvptx64-sm_NN[a]".
// On failure returns false and sets *error.
bool parseTarget(std::string_view spec, msl::v1::Target* out, std::string* error);

// `path` (absolute or relative to `root`) as a normalized relative path with
// '/' separators and no "./" ("." for root itself); nullopt when it lies
// outside root. `root` must be absolute.
std::optional<std::string> relativeToRoot(const std::filesystem::path& path,
                                          const std::filesystem::path& root);

// What `mslc -c` and `mslc run` share: the server, the Metal options and
// function constants of the compile, --stats.
struct SourceOptions {
  std::string server;  // --server, else $MSLD_ADDRESS, else kDefaultAddress
  // Metal options for CompileRequest.options, normalized to the separate
  // form: {"-D", "N=4", "-I", "inc", "-std=ios-metal2.0", "-Werror"}.
  std::vector<std::string> options;
  // The -I directories, relative to the cwd and normalized, in order.
  std::vector<std::string> include_dirs;
  // The -include files, relative to the cwd and normalized, in order.
  std::vector<std::string> forced_includes;
  bool stats = false;
  // --constant KEY=VALUE: function constant values by index or name.
  std::map<std::string, std::string> function_constants;
  std::vector<std::string> warnings;  // e.g. -I dirs dropped
};

struct Invocation : SourceOptions {
  bool help = false;
  std::string input;   // -c FILE, as given
  std::string output;  // -o OUT ("-" = stdout)
  msl::v1::Target target;  // default x86_64
  msl::v1::ArtifactKind emit = msl::v1::LLVM_BITCODE;
};

// Walks a command line one argument at a time.
class ArgReader {
 public:
  explicit ArgReader(const std::vector<std::string>& args) : args_(args) {}
  bool done() const { return i_ >= args_.size(); }
  const std::string& arg() const { return args_[i_]; }
  void next() { ++i_; }
  // The argument is `flag`, or "--flag=..." for a long flag.
  bool is(std::string_view flag) const;
  // The current flag's value: the next argument ("-X v", "--name v"), or,
  // with allowAttached, what follows the flag ("-Xv", "--name=v"). False
  // with *error set when the value is missing.
  bool value(std::string_view flag, bool allowAttached, std::string* v, std::string* error);

 private:
  const std::vector<std::string>& args_;
  std::size_t i_ = 0;
};

enum class OptionParse { kNotMine, kTaken, kFailed };

// Parses the current argument when it is one of the SourceOptions (--server,
// --stats, --constant, -D, -I, -std=, -ffast-math, -fno-fast-math, -W...);
// -I directories are made relative to `cwd`. kNotMine leaves it alone.
OptionParse parseSourceOption(ArgReader& args, const std::filesystem::path& cwd,
                              SourceOptions* out, std::string* error);

// SourceOptions with the server from `env_address` (or the default).
SourceOptions defaultSourceOptions(const char* env_address);

// Parses the arguments (without argv[0]). `env_address` is $MSLD_ADDRESS or
// null; `cwd` (absolute) anchors -I directories. Returns false with *error
// set on bad usage.
bool parseCommandLine(const std::vector<std::string>& args, const char* env_address,
                      const std::filesystem::path& cwd, Invocation* out, std::string* error);

std::string usage();

struct IncludeDirective {
  std::string name;   // between the quotes / angle brackets
  bool angled = false;
  bool next = false;  // #include_next
  unsigned line = 0;  // 1-based line of the '#'
};

// The #include / #import / #include_next directives of a source, skipping
// comments, string literals and line splices. Computed includes
// (#include MACRO) are ignored.
std::vector<IncludeDirective> scanIncludes(std::string_view source);

struct CollectedSources {
  // Request path (relative to root, normalized) -> contents; the main file
  // is not among them.
  std::map<std::string, std::string> files;
  std::vector<std::string> warnings;
  // Headers refused, e.g. a symlink whose target lies outside root
  // ("evil.h -> /etc/passwd"); mslc fails when there are any.
  std::vector<std::string> errors;
};

// Finds, recursively, every header the main source includes that exists
// under `root`: "x" against the including file's folder, then each include
// dir in order; <x> against the include dirs only. Headers not found are
// left to the server (its stdlib, or a real error). A header whose real path
// (symlinks resolved) lies outside root's is not read: it goes to `errors`,
// naming the header and where it points. `main_path` and `include_dirs` are
// relative to root.
CollectedSources collectIncludes(const std::filesystem::path& root, const std::string& main_path,
                                 std::string_view main_source,
                                 const std::vector<std::string>& include_dirs);

// The main source and the headers it includes, ready for a CompileRequest.
struct LoadedSources {
  std::string main_path;  // relative to the cwd, normalized
  std::string main_source;
  std::map<std::string, std::string> files;  // the headers (collectIncludes)
};

// Reads `input` and the -include files (files under `cwd`, not symlinks out
// of it) and collects their headers; the -include files are sent as headers.
// Warnings and errors go to `err` as "mslc: warning: ..." / "mslc: error:
// ..."; false on error.
bool loadSources(const std::string& input, const SourceOptions& options, const std::filesystem::path& cwd,
                 LoadedSources* out, std::ostream& err);

// What `mslc` and `mslc run` do first: the current directory, the command
// line (`parse`, with `hint` naming the help to see on an error), --help
// (`usageText`), the warnings, and the sources. Returns the exit status when
// the command is already done (help printed, or an error reported on `err`),
// nullopt to go on with `inv`, `cwd` and `sources` filled in.
template <class Invocation, class Parse, class Usage>
std::optional<int> startCommand(const std::vector<std::string>& args, const char* env_address,
                                std::ostream& out, std::ostream& err, Parse parse, Usage usageText,
                                const char* hint, Invocation* inv, std::filesystem::path* cwd,
                                LoadedSources* sources) {
  std::error_code ec;
  *cwd = std::filesystem::current_path(ec);
  if (ec) {
    err << "mslc: error: cannot get the current directory: " << ec.message() << "\n";
    return 1;
  }
  std::string error;
  if (!parse(args, env_address, *cwd, inv, &error)) {
    err << "mslc: error: " << error << "\n(see " << hint << ")\n";
    return 1;
  }
  if (inv->help) {
    out << usageText();
    return 0;
  }
  for (const auto& w : inv->warnings) err << "mslc: warning: " << w << "\n";
  if (!loadSources(inv->input, *inv, *cwd, sources, err)) return 1;
  return std::nullopt;
}

// The whole file; false when it cannot be read.
bool readFile(const std::filesystem::path& path, std::string* out);

// "error", "warning", "note", "remark", "fatal error".
std::string_view severityName(msl::v1::Diagnostic::Severity severity);
// Clang style: "file:line:col: error: message\n", followed by its notes.
std::string formatDiagnostic(const msl::v1::Diagnostic& diagnostic);
// "1 warning and 2 errors generated.\n", or "" when there are none.
std::string formatSummary(const msl::v1::CompileResponse& response);
// Every diagnostic (formatDiagnostic) followed by the summary.
std::string formatDiagnostics(const msl::v1::CompileResponse& response);

// The whole command: parse, collect sources, compile, print diagnostics,
// write the artifact. Returns the exit status (0 ok, 1 failure).
int run(const std::vector<std::string>& args, const char* env_address, std::ostream& out,
        std::ostream& err);

}  // namespace msl::client::mslc
