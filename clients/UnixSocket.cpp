#include "UnixSocket.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>

namespace msl::client {

int connectUnixSocket(const std::string& path, bool nonblocking, grpc::Status* error) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof addr.sun_path) {
    *error = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "not a Unix socket path");
    return -1;
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    *error = grpc::Status(grpc::StatusCode::UNAVAILABLE, std::string("cannot connect: ") + std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return -1;
  }
  if (nonblocking) {
    if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0) {
      *error = grpc::Status(grpc::StatusCode::UNAVAILABLE,
                            std::string("cannot make the connection non-blocking: ") + std::strerror(errno));
      ::close(fd);
      return -1;
    }
  }
  return fd;
}

bool waitForSocket(int fd, bool write, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    // Rounded up: a deadline less than a millisecond away is still waited for.
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, short(write ? POLLOUT : POLLIN), 0};
    int n = ::poll(&p, 1, int(std::min<long long>(left.count(), 1 << 30)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

}  // namespace msl::client
