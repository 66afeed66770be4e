// mslc's view of the host's files: which files a compile reads (the main
// source, its -include files and the headers they include, found as clang
// finds them), the map between host paths and the request's relative paths
// (both ways: requests are hermetic, diagnostics are printed with the paths
// the user spelled), and the Make-style dependency file of -MD.
#include <algorithm>
#include <set>

#include "msl/client/Client.h"
#include "msl/client/MslcDriver.h"

namespace fs = std::filesystem;

namespace msl::client::mslc {
namespace {

// `p` (relative to `base`, or absolute) made absolute and lexically normal,
// without a trailing separator ("/a/b/." -> "/a/b"). Symlinks are not
// resolved: this is the path as the preprocessor (and the request) sees it.
fs::path absoluteLexical(const fs::path& p, const fs::path& base) {
  fs::path a = (p.is_absolute() ? p : base / p).lexically_normal();
  if (!a.has_filename() && a.has_relative_path()) a = a.parent_path();
  return a;
}

// `p` lies in `root` or below (both absolute and lexically normal).
bool isUnder(const fs::path& p, const fs::path& root) {
  fs::path rel = p.lexically_relative(root);
  return !rel.empty() && *rel.begin() != "..";
}

bool isUnderAny(const fs::path& p, const std::vector<fs::path>& roots) {
  return std::any_of(roots.begin(), roots.end(), [&](const fs::path& r) { return isUnder(p, r); });
}

// The folder of a file as clang spells it: "." for "a.metal", "/" for "/a.metal".
std::string spelledFolder(const std::string& file) {
  std::size_t slash = file.find_last_of('/');
  if (slash == std::string::npos) return ".";
  std::string dir = file.substr(0, slash);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir.empty() ? "/" : dir;
}

// A folder as given joined with an #include name, as clang joins them.
std::string joinSpelled(std::string dir, const std::string& name) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

// The roots files may be read under: lexically, and with symlinks resolved.
struct Roots {
  std::vector<fs::path> lexical;
  std::vector<fs::path> real;
  std::string describe;  // for messages
};

Roots makeRoots(const fs::path& root, const std::vector<fs::path>& extra) {
  Roots r;
  r.lexical.push_back(absoluteLexical(root, root));
  for (const auto& e : extra) r.lexical.push_back(absoluteLexical(e, root));
  for (const auto& l : r.lexical) {
    std::error_code ec;
    fs::path real = fs::canonical(l, ec);
    if (!ec) r.real.push_back(real);
  }
  r.describe = "the current directory '" + r.lexical.front().string() + "'";
  if (r.lexical.size() > 1) {
    r.describe += " and the directories the command line names outside it (";
    for (std::size_t i = 1; i < r.lexical.size(); ++i) r.describe += (i > 1 ? ", '" : "'") + r.lexical[i].string() + "'";
    r.describe += ")";
  }
  return r;
}

// Where `os_path` really is (symlinks resolved) when that is outside every
// root's real path; nullopt when it stays inside one. A path that cannot be
// resolved counts as outside.
std::optional<fs::path> realPathOutside(const fs::path& os_path, const Roots& roots) {
  std::error_code ec;
  fs::path real = fs::canonical(os_path, ec);
  if (ec) return os_path;
  if (isUnderAny(real, roots.real)) return std::nullopt;
  return real;
}

// The deepest folder holding every path of `dirs`.
fs::path commonAncestor(const std::vector<fs::path>& dirs) {
  fs::path common = dirs.front();
  for (const auto& d : dirs) {
    fs::path next;
    auto a = common.begin(), b = d.begin();
    for (; a != common.end() && b != d.end() && *a == *b; ++a, ++b) next /= *a;
    common = next;
  }
  return common;
}

// llvm::sys::path::remove_leading_dotslash.
std::string_view withoutLeadingDotSlash(std::string_view p) {
  while (p.size() > 2 && p[0] == '.' && p[1] == '/') {
    p.remove_prefix(2);
    while (!p.empty() && p[0] == '/') p.remove_prefix(1);
  }
  return p;
}

// A prerequisite as clang's DependencyFileGenerator prints it (Make format).
void printDependency(std::string& out, std::string_view file) {
  for (std::size_t i = 0; i < file.size(); ++i) {
    if (file[i] == '#') {
      out += '\\';
    } else if (file[i] == ' ') {
      out += '\\';
      for (std::size_t j = i; j > 0 && file[--j] == '\\';) out += '\\';
    } else if (file[i] == '$') {
      out += '$';
    }
    out += file[i];
  }
}

bool gLeaveClientsToExit = false;
void destroyClient(Client* c) { delete c; }
void leaveClient(Client*) {}  // the process's exit reclaims it

}  // namespace

std::unique_ptr<Client, void (*)(Client*)> makeCommandClient(const ClientOptions& options) {
  return {new Client(options), gLeaveClientsToExit ? &leaveClient : &destroyClient};
}

void leaveClientsToExit(bool leave) { gLeaveClientsToExit = leave; }

std::string defaultOutputName(const std::string& input, msl::v1::ArtifactKind emit) {
  const char* ext = ".air";
  switch (emit) {
    case msl::v1::LLVM_IR: ext = ".ll"; break;
    case msl::v1::PTX: ext = ".ptx"; break;
    case msl::v1::REFLECTION: ext = ".json"; break;
    default: break;
  }
  return fs::path(input).filename().replace_extension(ext).string();
}

CollectedSources collectIncludes(const fs::path& root, const std::string& main_path, std::string_view main_source,
                                 const std::vector<std::string>& include_dirs,
                                 const std::vector<fs::path>& extra_roots) {
  CollectedSources result;
  const Roots roots = makeRoots(root, extra_roots);
  const fs::path& rootLex = roots.lexical.front();
  auto keyOf = [&](const fs::path& abs) {
    return isUnder(abs, rootLex) ? abs.lexically_relative(rootLex).generic_string() : abs.generic_string();
  };
  std::set<std::string> seen{keyOf(absoluteLexical(main_path, root))};
  std::set<std::string> warned;
  auto warnOnce = [&](const std::string& w) {
    if (warned.insert(w).second) result.warnings.push_back(w);
  };

  // Depth first, as the preprocessor enters them.
  struct Frame {
    std::string spelled;
    std::vector<IncludeDirective> includes;
    std::size_t next = 0;
  };
  std::vector<Frame> stack;
  stack.push_back({main_path, scanIncludes(main_source)});
  while (!stack.empty()) {
    if (stack.back().next >= stack.back().includes.size()) {
      stack.pop_back();
      continue;
    }
    const IncludeDirective inc = stack.back().includes[stack.back().next++];
    const std::string includer = stack.back().spelled;
    const std::string where = includer + ":" + std::to_string(inc.line);
    if (fs::path(inc.name).is_absolute()) {
      // The request has relative paths only: the server cannot find it.
      warnOnce(where + ": not sending absolute include '" + inc.name +
               "' (the compile sees relative paths only: include it by a relative name and -I)");
      continue;
    }
    std::vector<std::string> candidates;
    if (!inc.angled && !inc.next) candidates.push_back(joinSpelled(spelledFolder(includer), inc.name));
    for (const auto& dir : include_dirs) candidates.push_back(joinSpelled(dir, inc.name));
    std::vector<Frame> found;
    for (const auto& candidate : candidates) {
      const fs::path osPath = fs::path(candidate).is_absolute() ? fs::path(candidate) : root / candidate;
      std::error_code ec;
      if (!fs::is_regular_file(osPath, ec)) continue;
      const fs::path abs = absoluteLexical(candidate, root);
      if (!isUnderAny(abs, roots.lexical)) {
        warnOnce(where + ": not sending '" + candidate + "': it lies outside " + roots.describe +
                 " (name its folder with -I to send it)");
        if (!inc.next) break;
        continue;
      }
      const std::string key = keyOf(abs);
      if (seen.insert(key).second) {
        // A symlink (of the header or a folder on its way) must not take us
        // out of the tree: evil.h -> /etc/passwd would be uploaded and come
        // back in diagnostics.
        if (auto real = realPathOutside(osPath, roots)) {
          result.errors.push_back(where + ": refusing to send '" + candidate + "': it resolves to '" +
                                  real->string() + "', outside " + roots.describe);
          if (!inc.next) break;
          continue;
        }
        std::string bytes;
        if (!readFile(osPath, &bytes)) {
          warnOnce(where + ": cannot read '" + candidate + "'; not sending it");
          continue;
        }
        auto [it, _] = result.files.emplace(key, std::move(bytes));
        result.spelled.emplace(key, candidate);
        result.order.push_back(key);
        found.push_back({candidate, scanIncludes(it->second)});
      }
      if (!inc.next) break;  // the first match wins, as for the compiler
    }
    // (Several only for #include_next, which is sent every match.)
    for (auto it = found.rbegin(); it != found.rend(); ++it) stack.push_back(std::move(*it));
  }
  return result;
}

bool loadSources(const std::string& input, const SourceOptions& options, const fs::path& cwd,
                 LoadedSources* out, std::ostream& err) {
  const fs::path cwdLex = absoluteLexical(cwd, cwd);
  // The folders the command line names outside the current directory: the
  // inputs' and -include files' folders, the -I directories.
  std::vector<fs::path> extra;
  auto addRoot = [&](const fs::path& dir) {
    if (!isUnder(dir, cwdLex) && std::find(extra.begin(), extra.end(), dir) == extra.end()) extra.push_back(dir);
  };
  addRoot(absoluteLexical(input, cwd).parent_path());
  for (const auto& f : options.forced_includes) addRoot(absoluteLexical(f, cwd).parent_path());
  for (const auto& d : options.include_dirs) addRoot(absoluteLexical(d, cwd));
  const Roots roots = makeRoots(cwd, extra);

  auto load = [&](const std::string& given, std::string* bytes) {
    std::error_code ec;
    const fs::path osPath = fs::path(given).is_absolute() ? fs::path(given) : cwd / given;
    if (!fs::is_regular_file(osPath, ec)) {
      err << "mslc: error: cannot read '" << given << "': no such file or directory\n";
      return false;
    }
    if (auto real = realPathOutside(osPath, roots)) {
      err << "mslc: error: refusing to send '" << given << "': it resolves to '" << real->string() << "', outside "
          << roots.describe << "\n";
      return false;
    }
    if (!readFile(osPath, bytes)) {
      err << "mslc: error: cannot read '" << given << "'\n";
      return false;
    }
    return true;
  };

  // Everything read, by absolute lexical path, in the order clang enters it.
  struct Read {
    std::string bytes;
    std::string spelled;
  };
  std::map<std::string, Read> files;
  std::vector<std::string> order;
  auto add = [&](const fs::path& abs, std::string bytes, const std::string& spelled) {
    const std::string key = abs.generic_string();
    if (files.count(key)) {
      files[key].bytes = std::move(bytes);  // an -include file also included: same bytes
      return;
    }
    files.emplace(key, Read{std::move(bytes), spelled});
    order.push_back(key);
  };
  auto collect = [&](const std::string& spelled, std::string_view text) {
    CollectedSources collected = collectIncludes(cwd, spelled, text, options.include_dirs, extra);
    for (const auto& w : collected.warnings) err << "mslc: warning: " << w << "\n";
    for (const auto& e : collected.errors) err << "mslc: error: " << e << "\n";
    for (const auto& key : collected.order)
      add(absoluteLexical(key, cwdLex), std::move(collected.files[key]), collected.spelled[key]);
    return collected.errors.empty();
  };

  std::string source;
  if (!load(input, &source)) return false;
  const fs::path mainAbs = absoluteLexical(input, cwd);
  // As clang enters them: the -include files (and what they include) first.
  for (const std::string& forced : options.forced_includes) {
    std::string bytes;
    if (!load(forced, &bytes)) return false;
    const fs::path abs = absoluteLexical(forced, cwd);
    add(abs, bytes, forced);
    if (!collect(forced, bytes)) return false;
  }
  if (!collect(input, source)) return false;
  files.erase(mainAbs.generic_string());  // a header including the main source

  // The request's root: the current directory when everything lies under
  // it, else the deepest folder above everything.
  std::vector<fs::path> dirs{mainAbs.parent_path()};
  for (const auto& [key, _] : files) dirs.push_back(fs::path(key).parent_path());
  for (const auto& d : options.include_dirs) dirs.push_back(absoluteLexical(d, cwd));
  fs::path requestRoot = commonAncestor(dirs);
  if (isUnder(requestRoot, cwdLex)) requestRoot = cwdLex;
  auto requestPath = [&](const fs::path& abs) { return abs.lexically_relative(requestRoot).generic_string(); };

  LoadedSources loaded;
  loaded.request_root = requestRoot;
  loaded.main_path = requestPath(mainAbs);
  loaded.main_source = std::move(source);
  loaded.host_paths[loaded.main_path] = input;
  loaded.dependencies.push_back(input);
  for (const auto& key : order) {
    auto it = files.find(key);
    if (it == files.end()) continue;
    const std::string path = requestPath(fs::path(key));
    loaded.host_paths.emplace(path, it->second.spelled);
    loaded.dependencies.push_back(it->second.spelled);
    loaded.files.emplace(path, std::move(it->second.bytes));
  }
  loaded.options = options.options;
  for (std::size_t i = 0; i + 1 < loaded.options.size(); ++i) {
    const std::string& flag = loaded.options[i];
    if (flag == "-D") {
      ++i;
    } else if (flag == "-I" || flag == "-include") {
      loaded.options[i + 1] = requestPath(absoluteLexical(loaded.options[i + 1], cwd));
      ++i;
    }
  }
  *out = std::move(loaded);
  return true;
}

void mapDiagnosticPaths(msl::v1::CompileResponse* response, const LoadedSources& sources) {
  struct Mapper {
    const std::map<std::string, std::string>& paths;
    void operator()(msl::v1::Diagnostic* d) const {
      const std::string& file = d->file();
      if (!file.empty() && file.front() != '<') {
        auto it = paths.find(fs::path(file).lexically_normal().generic_string());
        if (it != paths.end()) d->set_file(it->second);
      }
      for (auto& note : *d->mutable_notes()) (*this)(&note);
    }
  } map{sources.host_paths};
  for (auto& d : *response->mutable_diagnostics()) map(&d);
}

std::string quoteMakeTarget(std::string_view target) {
  std::string out;
  for (std::size_t i = 0; i < target.size(); ++i) {
    switch (target[i]) {
      case ' ':
      case '\t':
        for (std::size_t j = i; j > 0 && target[--j] == '\\';) out += '\\';
        out += '\\';
        break;
      case '$': out += '$'; break;
      case '#': out += '\\'; break;
      default: break;
    }
    out += target[i];
  }
  return out;
}

std::string formatDependencyFile(const std::vector<std::string>& targets,
                                 const std::vector<std::string>& dependencies, bool phony) {
  // clang's DependencyFileGenerator::outputDependencyFile, Make format.
  constexpr std::size_t kMaxColumns = 75;
  std::string out;
  std::size_t columns = 0;
  for (const auto& target : targets) {
    std::size_t n = target.size();
    if (columns == 0) {
      columns += n;
    } else if (columns + n + 2 > kMaxColumns) {
      columns = n + 2;
      out += " \\\n  ";
    } else {
      columns += n + 1;
      out += ' ';
    }
    out += target;
  }
  out += ':';
  columns += 1;
  std::vector<std::string_view> files;
  std::set<std::string_view> seen;
  for (const auto& d : dependencies) {
    std::string_view f = withoutLeadingDotSlash(d);
    if (seen.insert(f).second) files.push_back(f);
  }
  for (std::string_view file : files) {
    std::size_t n = file.size();
    if (columns + (n + 1) + 2 > kMaxColumns) {
      out += " \\\n ";
      columns = 2;
    }
    out += ' ';
    printDependency(out, file);
    columns += n + 1;
  }
  out += '\n';
  if (phony) {
    for (std::size_t i = 1; i < files.size(); ++i) {
      out += '\n';
      printDependency(out, files[i]);
      out += ":\n";
    }
  }
  return out;
}

}  // namespace msl::client::mslc
