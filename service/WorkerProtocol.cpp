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

std::string encodeLength(uint32_t n) {
  return {char(n & 0xff), char((n >> 8) & 0xff), char((n >> 16) & 0xff), char(n >> 24)};
}

uint32_t decodeLength(const char header[4]) {
  auto b = [&](int i) { return uint32_t(static_cast<unsigned char>(header[i])); };
  return b(0) | (b(1) << 8) | (b(2) << 16) | (b(3) << 24);
}

bool writeMessage(int fd, const google::protobuf::MessageLite &message) {
  std::string payload;
  if (!message.SerializeToString(&payload) || payload.size() > kMaxWorkerMessageBytes)
    return false;
  std::string header = encodeLength(uint32_t(payload.size()));
  return writeAll(fd, header.data(), 4) && writeAll(fd, payload.data(), payload.size());
}

bool readMessage(int fd, google::protobuf::MessageLite &message) {
  char header[4];
  if (!readAll(fd, header, 4))
    return false;
  uint32_t n = decodeLength(header);
  if (n > kMaxWorkerMessageBytes)
    return false;
  std::string payload(n, '\0');
  return readAll(fd, payload.data(), n) && message.ParseFromString(payload);
}

} // namespace msl::service
