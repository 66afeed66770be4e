// Unix stream connections to msld's local socket (--shared-regions-socket),
// shared by SharedRegion (regions) and LocalChannel (Execute calls).
#pragma once

#include <grpcpp/support/status.h>

#include <chrono>
#include <string>

namespace msl::client {

// A connected socket (close-on-exec; non-blocking when `nonblocking`), or -1
// with `error` set (INVALID_ARGUMENT for a path no Unix socket can have,
// else UNAVAILABLE; the message says why, without the path).
int connectUnixSocket(const std::string& path, bool nonblocking, grpc::Status* error);

// Waits until `fd` is readable (or writable, when `write`) or `deadline`
// passes; false on timeout or error.
bool waitForSocket(int fd, bool write, std::chrono::steady_clock::time_point deadline);

}  // namespace msl::client
