#include "LocalChannel.h"

#include "UnixSocket.h"
#include "msl/v1/local.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace msl::client {
namespace {

using Clock = std::chrono::steady_clock;

// All of `size` bytes by `deadline` (the socket is non-blocking).
bool sendAll(int fd, const char* data, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      size -= size_t(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!waitForSocket(fd, true, deadline)) return false;
    } else {
      return false;
    }
  }
  return true;
}

enum class Received { kOk, kClosed, kTimedOut };

// Exactly `size` bytes by `deadline`, polling without sleeping until
// `spinUntil` (ClientOptions::busy_poll).
Received receiveAll(int fd, char* out, size_t size, Clock::time_point spinUntil, Clock::time_point deadline) {
  while (size > 0) {
    ssize_t n = ::recv(fd, out, size, MSG_DONTWAIT);
    if (n > 0) {
      out += n;
      size -= size_t(n);
    } else if (n == 0) {
      return Received::kClosed;
    } else if (errno == EINTR) {
      continue;
    } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Received::kClosed;
    } else if (Clock::now() >= spinUntil && !waitForSocket(fd, false, deadline)) {
      return Clock::now() >= deadline ? Received::kTimedOut : Received::kClosed;
    }
  }
  return Received::kOk;
}

grpc::Status statusOf(const msl::v1::LocalExecuteReply& reply) {
  return grpc::Status(grpc::StatusCode(std::clamp(reply.code(), 1, 16)), reply.message());
}

constexpr char kHello[16] = {'M', 'S', 'L', 'D', 'E', 'X', 'E', '1'};  // version 0
constexpr size_t kMostIdle = 8;

}  // namespace

LocalChannel::~LocalChannel() {
  for (int fd : idle_) ::close(fd);
}

grpc::Status LocalChannel::failed(grpc::StatusCode code, const std::string& why) const {
  return grpc::Status(code, "local call to " + path_ + ": " + why);
}

int LocalChannel::take(Clock::time_point deadline, grpc::Status* error) {
  for (;;) {
    int fd = -1;
    {
      std::lock_guard lock(mu_);
      if (idle_.empty()) break;
      fd = idle_.back();
      idle_.pop_back();
    }
    // Still open, with nothing unread: msld closes only on an error or when
    // it stops (and then a call sent on it could not be told from one lost).
    pollfd p{fd, POLLIN | POLLRDHUP, 0};
    if (::poll(&p, 1, 0) == 0) return fd;
    ::close(fd);
  }
  int fd = connectUnixSocket(path_, true, error);
  if (fd < 0) {
    *error = failed(error->error_code(), error->error_message());
    return -1;
  }
  // "OK\n", or "ERR <why>\n".
  std::string line;
  if (sendAll(fd, kHello, sizeof kHello, deadline)) {
    char c = 0;
    while (line.size() < 512 && receiveAll(fd, &c, 1, Clock::now(), deadline) == Received::kOk && c != '\n')
      line.push_back(c);
  }
  if (line == "OK") return fd;
  ::close(fd);
  *error = line.rfind("ERR ", 0) == 0 ? failed(grpc::StatusCode::UNAVAILABLE, line.substr(4))
           : Clock::now() >= deadline ? failed(grpc::StatusCode::DEADLINE_EXCEEDED, "msld did not answer the hello")
                                      : failed(grpc::StatusCode::UNAVAILABLE, "msld closed the connection");
  return -1;
}

void LocalChannel::giveBack(int fd) {
  std::lock_guard lock(mu_);
  if (idle_.size() < kMostIdle) {
    idle_.push_back(fd);
    return;
  }
  ::close(fd);
}

bool LocalChannel::readReply(int fd, Clock::time_point spinUntil, Clock::time_point deadline,
                             const ClientOptions& options, msl::v1::LocalExecuteReply* reply, grpc::Status* error) {
  unsigned char header[4];
  Received got = receiveAll(fd, reinterpret_cast<char*>(header), 4, spinUntil, deadline);
  std::string body;
  if (got == Received::kOk) {
    const size_t size = size_t(header[0]) | size_t(header[1]) << 8 | size_t(header[2]) << 16 |
                        size_t(header[3]) << 24;
    if (size > size_t(options.max_message_bytes)) {
      *error = failed(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      "the answer is " + std::to_string(size) + " bytes, more than max_message_bytes");
      return false;
    }
    body.resize(size);
    got = receiveAll(fd, body.data(), size, spinUntil, deadline);
  }
  if (got != Received::kOk) {
    *error = got == Received::kTimedOut
                 ? failed(grpc::StatusCode::DEADLINE_EXCEEDED,
                          "no answer within " + std::to_string(options.call_deadline.count()) + " ms")
                 : failed(grpc::StatusCode::UNAVAILABLE, "msld closed the connection before it answered");
    return false;
  }
  if (!reply->ParseFromString(body)) {
    *error = failed(grpc::StatusCode::INTERNAL, "the answer is not a LocalExecuteReply");
    return false;
  }
  return true;
}

grpc::Status LocalChannel::execute(const msl::v1::ExecuteRequest& request, msl::v1::ExecuteResponse* response,
                                   const ClientOptions& options) {
  const auto deadline = Clock::now() + options.call_deadline;
  msl::v1::LocalExecuteRequest head;
  if (!options.auth_token.empty()) head.set_authorization("Bearer " + options.auth_token);
  head.set_request_id(options.request_id);
  head.set_timeout_ms(uint32_t(std::clamp<int64_t>(options.call_deadline.count(), 1, UINT32_MAX)));
  // The frame: the length, the head's fields, then `request` as field 5
  // (LocalExecuteRequest.request), serialized in place rather than copied in.
  const size_t headBytes = head.ByteSizeLong(), requestBytes = request.ByteSizeLong();
  const size_t bodyBytes =
      headBytes + 1 + google::protobuf::io::CodedOutputStream::VarintSize64(requestBytes) + requestBytes;
  if (bodyBytes > size_t(options.max_message_bytes))
    return failed(grpc::StatusCode::RESOURCE_EXHAUSTED, "the request is " + std::to_string(bodyBytes) +
                                                            " bytes, more than max_message_bytes");
  std::string frame(4 + bodyBytes, '\0');
  for (int i = 0; i < 4; ++i) frame[size_t(i)] = char(uint32_t(bodyBytes) >> (8 * i));
  auto* p = reinterpret_cast<uint8_t*>(frame.data()) + 4;
  p = head.SerializeWithCachedSizesToArray(p);
  *p++ = uint8_t(5 << 3 | 2);  // field 5, length-delimited
  p = google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(requestBytes, p);
  request.SerializeWithCachedSizesToArray(p);

  grpc::Status error;
  int fd = take(deadline, &error);
  if (fd < 0) return error;
  msl::v1::LocalExecuteReply reply;
  if (!sendAll(fd, frame.data(), frame.size(), deadline)) {
    // msld may have refused the frame (too large, or over its memory for
    // them) and closed: its reply, when there, says why.
    const bool late = Clock::now() >= deadline;
    const auto briefly = std::min(deadline, Clock::now() + std::chrono::milliseconds(200));
    const bool refused = !late && readReply(fd, Clock::now(), briefly, options, &reply, &error);
    ::close(fd);
    if (refused && reply.code() != 0) return statusOf(reply);
    return late ? failed(grpc::StatusCode::DEADLINE_EXCEEDED, "the request was not taken in time")
                : failed(grpc::StatusCode::UNAVAILABLE, "msld closed the connection");
  }
  frame = std::string();
  // The answer; closing the connection before it cancels the call in msld.
  if (!readReply(fd, Clock::now() + options.busy_poll, deadline, options, &reply, &error)) {
    ::close(fd);
    return error;
  }
  giveBack(fd);
  if (reply.code() != 0) return statusOf(reply);
  *response = std::move(*reply.mutable_response());
  return grpc::Status::OK;
}

}  // namespace msl::client
