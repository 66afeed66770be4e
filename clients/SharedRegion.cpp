// msl::client::SharedRegion: asks msld for a shared region over its
// --shared-regions-socket (the protocol: service/SharedRegions.h) and maps
// the memfd it sends.
#include "msl/client/SharedRegion.h"

#include "UnixSocket.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

namespace msl::client {
namespace {

grpc::Status failed(grpc::StatusCode code, const std::string& socket_path, const std::string& why) {
  return grpc::Status(code, "shared region from " + socket_path + ": " + why);
}

}  // namespace

Result<std::unique_ptr<SharedRegion>> SharedRegion::open(const std::string& socket_path, uint64_t size,
                                                         std::chrono::milliseconds timeout) {
  std::unique_ptr<SharedRegion> region(new SharedRegion());
  grpc::Status error;
  region->connection_ = connectUnixSocket(socket_path, false, &error);
  if (region->connection_ < 0) return failed(error.error_code(), socket_path, error.error_message());
  char request[16] = {'M', 'S', 'L', 'D', 'S', 'H', 'M', '1'};
  for (int i = 0; i < 8; ++i) request[8 + i] = char(uint8_t(size >> (8 * i)));
  if (::send(region->connection_, request, sizeof request, MSG_NOSIGNAL) != ssize_t(sizeof request))
    return failed(grpc::StatusCode::UNAVAILABLE, socket_path, std::string("cannot ask: ") + std::strerror(errno));

  // One line, with the memfd attached to its first bytes.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string line;
  int memfd = -1;
  while (line.find('\n') == std::string::npos && line.size() < 512) {
    if (!waitForSocket(region->connection_, false, deadline)) {
      if (memfd >= 0) ::close(memfd);
      return failed(grpc::StatusCode::DEADLINE_EXCEEDED, socket_path, "no answer");
    }
    char buffer[256];
    iovec iov{buffer, sizeof buffer};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(region->connection_, &msg, MSG_CMSG_CLOEXEC);
    if (n <= 0) {
      if (memfd >= 0) ::close(memfd);
      return failed(grpc::StatusCode::UNAVAILABLE, socket_path, "msld closed the connection without an answer");
    }
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
      if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        if (memfd < 0)
          memfd = fd;
        else
          ::close(fd);  // one is all msld sends
      }
    line.append(buffer, size_t(n));
  }
  line = line.substr(0, line.find('\n'));
  if (line.rfind("OK ", 0) != 0 || memfd < 0) {
    if (memfd >= 0) ::close(memfd);
    return failed(grpc::StatusCode::FAILED_PRECONDITION, socket_path,
                  line.rfind("ERR ", 0) == 0 ? line.substr(4) : "a malformed answer");
  }
  // What the answer says it is: a memfd of that size, sealed against
  // shrinking (else a read past its end would fault here).
  struct stat st;
  const int seals = ::fcntl(memfd, F_GET_SEALS);
  if (::fstat(memfd, &st) != 0 || uint64_t(st.st_size) < size || seals < 0 || !(seals & F_SEAL_SHRINK)) {
    ::close(memfd);
    return failed(grpc::StatusCode::FAILED_PRECONDITION, socket_path, "the region sent is not a sealed memfd of " +
                                                                          std::to_string(size) + " bytes");
  }
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  const int mapError = errno;
  ::close(memfd);
  if (base == MAP_FAILED)
    return failed(grpc::StatusCode::RESOURCE_EXHAUSTED, socket_path,
                  std::string("cannot map ") + std::to_string(size) + " bytes: " + std::strerror(mapError));
  region->token_ = line.substr(3);
  region->data_ = static_cast<char*>(base);
  region->size_ = size;
  return region;
}

SharedRegion::~SharedRegion() {
  if (data_) ::munmap(data_, size_);
  if (connection_ >= 0) ::close(connection_);
}

msl::v1::SharedRange SharedRegion::range(uint64_t offset, uint64_t length) const {
  msl::v1::SharedRange r;
  r.set_region(token_);
  r.set_offset(offset);
  r.set_length(length);
  return r;
}

}  // namespace msl::client
