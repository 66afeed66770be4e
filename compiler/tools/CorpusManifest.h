//===- CorpusManifest.h - A corpus's manifest.csv as compile inputs --------===//
//
// ../shared/corpus and ../shared/corpus-ml describe each source in a
// manifest.csv (RFC 4180): its upstream repo, its -std and its flags. This
// reads the source rows into what a compile of them needs, the way
// msl-corpus and the corpus kernel tests both compile them: the -std value,
// the flags with -I folders and -include files made relative to the corpus
// (from the upstream repo's root), and the folders whose files are sent as
// the request's headers (the main file's folder and each -include's,
// non-recursively; each -I folder, recursively).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace msl::corpus {

struct ManifestRow {
  std::string source, local, path, role, stages, std, flags; // the columns, as written
  std::string stdValue;                                    // "macos-metal2.0", or "" (the compiler's default)
  std::vector<std::string> options;                        // -std= first, then the flags, rewritten
  std::vector<std::string> fileDirs;                       // non-recursive, relative to the corpus
  std::vector<std::string> fileTrees;                      // recursive, relative to the corpus
};

/// The `role == source` rows of DIR/manifest.csv, in file order; nullopt
/// and `error` when the manifest is absent, unreadable or lacks a column.
std::optional<std::vector<ManifestRow>> readManifest(const std::filesystem::path &dir, std::string &error);

/// The files (path relative to `dir` -> contents) of `folder` under `dir`,
/// recursively or not.
std::map<std::string, std::string> filesUnder(const std::filesystem::path &dir, const std::string &folder,
                                              bool recursive);

std::optional<std::string> readFile(const std::filesystem::path &p);
/// `p` lexically normal, generic, without a trailing '/' ("." when empty).
std::string normalizeRel(const std::string &p);
/// `b` under `a`, normalized ("." or "" for `a`: `b` alone).
std::string joinRel(const std::string &a, const std::string &b);
std::vector<std::string> splitSpaces(const std::string &s);

} // namespace msl::corpus
