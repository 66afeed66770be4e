// The pieces of the `mslc` command line, kept apart from main() so that they
// can be unit-tested: argument parsing and option normalization, target and
// emit parsing, #include scanning and resolution, diagnostic formatting.
#pragma once

#include <filesystem>
#include <iosfwd>
#include <ostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/support/status.h>

#include "msl/v1/compiler.pb.h"

namespace msl::client {
struct ClientOptions;
class Client;
}

namespace msl::client::mslc {

inline constexpr const char* kDefaultAddress = "127.0.0.1:8980";
inline constexpr const char* kAddressEnv = "MSLD_ADDRESS";
// Set (to anything), mslc -c makes every Compile through gRPC's client, not
// its own minimal HTTP/2 call (msl/client/FastCompile.h).
inline constexpr const char* kNoFastPathEnv = "MSLC_NO_FAST_PATH";
// The token sent as "authorization: Bearer TOKEN" (unless --token-file).
inline constexpr const char* kTokenEnv = "MSLD_TOKEN";

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
  // --tls-ca FILE: connect over TLS, verifying the server with this CA;
  // --tls-cert/--tls-key FILE: the client certificate for mTLS (these imply
  // TLS too; without --tls-ca gRPC's default roots verify the server).
  std::string tls_ca, tls_cert, tls_key;
  // --token-file FILE: the token (its first line); else $MSLD_TOKEN.
  std::string token_file;
  // --request-id ID: sent as x-request-id (msld logs it with the request).
  std::string request_id;
  // Metal options, normalized to the separate form: {"-D", "N=4", "-I",
  // "../inc", "-std=ios-metal2.0", "-Werror"}; the paths of -I and -include
  // as the user spelled them (host paths): loadSources maps them to the
  // request's relative paths (LoadedSources::options).
  std::vector<std::string> options;
  // The -I directories, as given (host paths), in order.
  std::vector<std::string> include_dirs;
  // The -include files, as given (host paths), in order.
  std::vector<std::string> forced_includes;
  bool stats = false;
  // --constant KEY=VALUE: function constant values by index or name.
  std::map<std::string, std::string> function_constants;
  std::vector<std::string> warnings;  // e.g. -I dirs dropped
};

// -MD, -MMD, -MF, -MT, -MQ, -MP: a Make-style dependency file, as clang
// writes it.
struct DependencyOptions {
  bool write = false;       // -MD or -MMD
  bool system = true;       // -MD lists system headers, -MMD not (mslc sends none)
  std::string file;         // -MF FILE; default: the output with its extension replaced by .d
  std::vector<std::string> targets;  // -MT (verbatim) / -MQ (quoted), in order; default: the output, quoted
  bool phony = false;       // -MP: a phony target for each header
};

struct Invocation : SourceOptions {
  bool help = false;
  std::string input;   // the first input, as given
  std::vector<std::string> inputs;  // every input (FILE.metal ...), as given
  std::string output;  // -o OUT ("-" = stdout); empty: NAME.air (etc.) in the cwd for each input
  msl::v1::Target target;  // default x86_64
  msl::v1::ArtifactKind emit = msl::v1::LLVM_BITCODE;
  DependencyOptions deps;
};

// The output `mslc -c` writes for `input` without -o, as `metal` does: the
// input's file name with the extension of `emit` (.air for LLVM bitcode,
// .ll for LLVM IR, .ptx, .json for reflection), in the current directory.
std::string defaultOutputName(const std::string& input, msl::v1::ArtifactKind emit);

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

// The connection options of a command: the server, TLS (--tls-ca,
// --tls-cert, --tls-key) and the token (--token-file, else `env_token`,
// i.e. $MSLD_TOKEN). The one place mslc and mslc run make their channel's
// settings. False with *error set when a file cannot be read.
bool makeClientOptions(const SourceOptions& options, const char* env_token, msl::client::ClientOptions* out,
                       std::string* error);

// "mslc: error: SERVER: CODE: message\n" (SERVER only with `with_server`
// or for UNAVAILABLE), plus a note on the likely cause of a failed
// connection (a plaintext client against a TLS server, a failed TLS
// handshake) or of a missing token.
std::string describeFailure(const grpc::Status& status, const SourceOptions& options, bool with_server);

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
  // Path -> contents; the main file is not among them. The path is relative
  // to root and normalized when the file lies under root, else absolute and
  // normalized (lexically: symlinks are not resolved in it).
  std::map<std::string, std::string> files;
  // Path (as in `files`) -> the path as clang spells it on the host: the
  // including file's folder or the -I directory as given, joined with the
  // name in the #include ("inc/../h.h", "./h.h" beside "a.metal").
  std::map<std::string, std::string> spelled;
  // The paths of `files` in the order clang first enters them (depth first).
  std::vector<std::string> order;
  std::vector<std::string> warnings;
  // Headers refused, e.g. a symlink whose target lies outside root
  // ("evil.h -> /etc/passwd"); mslc fails when there are any.
  std::vector<std::string> errors;
};

// Finds, recursively (depth first, as the preprocessor does), every header
// the main source includes that exists: "x" against the including file's
// folder, then each include dir in order; <x> against the include dirs only
// (an absolute name is warned about: the request has relative paths only).
// Only what is included is read, never a whole directory. Headers not found
// are left to the server (its stdlib, or a real error). `main_path` and `include_dirs` are host paths as the user
// spelled them, relative to `root` (the current directory, absolute) or
// absolute. Only files under `root` or one of `extra_roots` (absolute) are
// read: one whose path lies outside them all is warned about and not sent;
// one whose real path (symlinks resolved) lies outside all of theirs is not
// read and goes to `errors`, naming the header and where it points
// ("evil.h -> /etc/passwd").
CollectedSources collectIncludes(const std::filesystem::path& root, const std::string& main_path,
                                 std::string_view main_source,
                                 const std::vector<std::string>& include_dirs,
                                 const std::vector<std::filesystem::path>& extra_roots = {});

// The main source and the headers it includes, ready for a CompileRequest,
// with the map between the request's relative paths and the host's.
struct LoadedSources {
  // The request's paths are relative to `request_root`: the current
  // directory when every file and -I directory lies under it (so that
  // in-tree compiles keep the action keys they had), else the deepest folder
  // above all of them (so that the same tree compiled from elsewhere keeps
  // them too).
  std::filesystem::path request_root;
  std::string main_path;  // the request's path of the main source
  std::string main_source;
  std::map<std::string, std::string> files;  // request path -> contents (headers, -include files)
  // SourceOptions::options with the -I and -include paths mapped to the request's.
  std::vector<std::string> options;
  // Request path (normalized) -> the host path as clang would print it.
  std::map<std::string, std::string> host_paths;
  // Every file read, as host paths in the order clang enters them (the main
  // source first): the prerequisites of a dependency file.
  std::vector<std::string> dependencies;
};

// Reads `input` and the -include files and collects their headers; the
// -include files are sent as headers. Anything the command line names may
// lie anywhere: the current directory and the folders (of the input and the
// -include files) and -I directories the command line names outside it are
// the roots collectIncludes reads under. A file named inside the current
// directory that is a symlink out of every root is refused (issue 8).
// Warnings and errors go to `err` as "mslc: warning: ..." / "mslc: error:
// ..."; false on error.
bool loadSources(const std::string& input, const SourceOptions& options, const std::filesystem::path& cwd,
                 LoadedSources* out, std::ostream& err);

// What `mslc` and `mslc run` do first: the current directory, the command
// line (`parse`, with `hint` naming the help to see on an error), --help
// (`usageText`), the warnings, and the sources (of inv->input; not when
// `sources` is null: mslc -c loads each of its inputs itself). Returns the exit status when
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
  if (sources && !loadSources(inv->input, *inv, *cwd, sources, err)) return 1;
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
// The diagnostics' (and notes') files, request paths, as the host paths the
// user spelled (LoadedSources::host_paths): "/abs/path/k.metal:3:7: error: ...".
void mapDiagnosticPaths(msl::v1::CompileResponse* response, const LoadedSources& sources);

// A Make rule as clang's -MD writes it: "TARGETS: DEPS" with lines broken at
// 75 columns, the dependencies' spaces, '#' and '$' escaped and a leading
// "./" dropped, and with `phony` a "DEP:" rule for each but the first.
// `targets` are already quoted (quoteMakeTarget) as needed.
std::string formatDependencyFile(const std::vector<std::string>& targets,
                                 const std::vector<std::string>& dependencies, bool phony);
// A target quoted for Make as clang's -MQ does ('$' -> "$$", ' ' -> "\ ", '#' -> "\#").
std::string quoteMakeTarget(std::string_view target);

// A Client for a command. After leaveClientsToExit(true) (mslc's main()
// calls it) the Client is never destroyed: tearing gRPC down (its threads,
// the channel) costs milliseconds that a build pays per compile; main()
// flushes and ends the process with std::_Exit instead.
std::unique_ptr<Client, void (*)(Client*)> makeCommandClient(const ClientOptions& options);
void leaveClientsToExit(bool leave);

// The whole command: parse, collect sources, compile, print diagnostics,
// write the artifacts (and dependency files), for each input in turn as
// clang does. Returns the exit status as clang's: 0 ok, 1 when any input
// failed (a compile error, bad usage, no server).
int run(const std::vector<std::string>& args, const char* env_address, std::ostream& out,
        std::ostream& err);

}  // namespace msl::client::mslc
