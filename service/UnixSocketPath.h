//===- UnixSocketPath.h - A path msld may listen on as a Unix socket ------===//
//
// --listen-unix and --shared-regions-socket: the path fits sockaddr_un and
// names nothing but a socket (a stale one from an earlier msld is replaced;
// any other file is left untouched and refuses the start).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sys/stat.h>
#include <sys/un.h>

#include <string>

namespace msl::service {

/// "" when msld may listen at `path`, else why not.
inline std::string checkUnixSocketPath(const std::string &path) {
  if (path.empty())
    return "the path is empty";
  if (path.size() >= sizeof(sockaddr_un::sun_path))
    return "the path is " + std::to_string(path.size()) + " bytes; a Unix socket's path has at most " +
           std::to_string(sizeof(sockaddr_un::sun_path) - 1);
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && !S_ISSOCK(st.st_mode))
    return "it exists and is not a socket";
  return {};
}

} // namespace msl::service
