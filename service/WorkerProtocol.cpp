#include "WorkerProtocol.h"

#include <cerrno>
#include <string>
#include <unistd.h>

namespace msl::service {
namespace {

bool writeAll(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

bool readAll(int fd, char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

} // namespace

bool writeMessage(int fd, const google::protobuf::MessageLite &message) {
  std::string payload;
  if (!message.SerializeToString(&payload) || payload.size() > kMaxWorkerMessageBytes)
    return false;
  uint32_t n = uint32_t(payload.size());
  char header[4] = {char(n & 0xff), char((n >> 8) & 0xff), char((n >> 16) & 0xff), char(n >> 24)};
  return writeAll(fd, header, 4) && writeAll(fd, payload.data(), payload.size());
}

bool readMessage(int fd, google::protobuf::MessageLite &message) {
  unsigned char header[4];
  if (!readAll(fd, reinterpret_cast<char *>(header), 4))
    return false;
  uint32_t n = header[0] | (header[1] << 8) | (header[2] << 16) | (uint32_t(header[3]) << 24);
  if (n > kMaxWorkerMessageBytes)
    return false;
  std::string payload(n, '\0');
  return readAll(fd, payload.data(), n) && message.ParseFromString(payload);
}

} // namespace msl::service
