#include "WorkerProtocol.h"

#include "msl/internal/exec_worker.pb.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

bool writeDispatchStartNote(int fd) {
  msl::internal::ExecWorkerResponse note;
  note.set_dispatch_starts(true);
  return writeMessage(fd, note);
}

bool isDispatchStartNote(const google::protobuf::MessageLite &response) {
  return static_cast<const msl::internal::ExecWorkerResponse &>(response).dispatch_starts();
}

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
  if (n > kMaxWorkerMessageBytes) // a split frame too: not for this reader
    return false;
  std::string payload(n, '\0');
  return readAll(fd, payload.data(), n) && message.ParseFromString(payload);
}

std::vector<std::string *> execRequestPayloads(google::protobuf::MessageLite &m) {
  auto &r = static_cast<msl::internal::ExecWorkerRequest &>(m);
  std::vector<std::string *> out;
  out.reserve(size_t(r.buffers_size()) + size_t(r.textures_size()));
  for (auto &b : *r.mutable_buffers())
    out.push_back(b.mutable_data());
  for (auto &t : *r.mutable_textures())
    out.push_back(t.mutable_data());
  return out;
}

std::vector<std::string *> execResponsePayloads(google::protobuf::MessageLite &m) {
  auto &r = static_cast<msl::internal::ExecWorkerResponse &>(m);
  std::vector<std::string *> out;
  out.reserve(size_t(r.buffers_size()) + size_t(r.textures_size()));
  for (auto &b : *r.mutable_buffers())
    out.push_back(&b);
  for (auto &t : *r.mutable_textures())
    out.push_back(&t);
  return out;
}

bool mapSharedPayloads(int fd, SharedPayloads &region) {
  region = {};
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0)
    return false;
  void *p = ::mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return false;
  region = {static_cast<char *>(p), size_t(st.st_size)};
  return true;
}

void awaitNextRequest(int fd, std::chrono::microseconds spin) {
  const auto until = std::chrono::steady_clock::now() + spin;
  pollfd p{fd, POLLIN, 0};
  while (::poll(&p, 1, 0) == 0 && std::chrono::steady_clock::now() < until) {
  }
}

bool parseWorkerChannels(int argc, char **argv, int first, WorkerChannels &channels) {
  for (int i = first; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 >= argc)
      return false;
    const std::string value = argv[i + 1];
    if (value.empty() || value.size() > 6 || value.find_first_not_of("0123456789") != std::string::npos)
      return false;
    if (flag == "--payload-fd")
      channels.payloadFd = std::stoi(value);
    else if (flag == "--descriptor-fd")
      channels.descriptorFd = std::stoi(value);
    else
      return false;
  }
  return true;
}

namespace {

// A descriptor message: one byte, and room for the descriptors.
struct DescriptorMessage {
  char byte = 'D';
  iovec iov{&byte, 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxDescriptorsPerMessage)] = {};
  msghdr msg{};
  DescriptorMessage() {
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
  }
  DescriptorMessage(const DescriptorMessage &) = delete;
  DescriptorMessage &operator=(const DescriptorMessage &) = delete;
};

} // namespace

bool sendDescriptors(int socket, const std::vector<int> &descriptors) {
  if (descriptors.empty() || descriptors.size() > kMaxDescriptorsPerMessage)
    return false;
  DescriptorMessage m;
  msghdr &msg = m.msg;
  msg.msg_controllen = CMSG_SPACE(sizeof(int) * descriptors.size());
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int) * descriptors.size());
  std::memcpy(CMSG_DATA(c), descriptors.data(), sizeof(int) * descriptors.size());
  ssize_t n;
  while ((n = ::sendmsg(socket, &msg, MSG_NOSIGNAL | MSG_DONTWAIT)) < 0 && errno == EINTR) {
  }
  return n == 1;
}

bool receiveDescriptors(int socket, size_t count, std::vector<int> &descriptors) {
  descriptors.clear();
  DescriptorMessage m;
  msghdr &msg = m.msg;
  ssize_t n;
  while ((n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
  }
  if (n != 1)
    return false;
  for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < k; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        descriptors.push_back(fd);
      }
    }
  if (descriptors.size() == count && !(msg.msg_flags & MSG_CTRUNC))
    return true;
  for (int fd : descriptors)
    ::close(fd);
  descriptors.clear();
  return false;
}

bool encodeSplitHead(google::protobuf::MessageLite &message, PayloadFields fields, std::string &head,
                     std::vector<std::string *> &payloads, bool sharedPayloads) {
  payloads = fields(message);
  // Serialize the rest with the payloads moved out (O(1) swaps), then put
  // them back: they are written from where they are.
  std::vector<std::string> held(payloads.size());
  for (size_t i = 0; i < payloads.size(); ++i)
    payloads[i]->swap(held[i]);
  std::string meta;
  bool ok = message.SerializeToString(&meta);
  for (size_t i = 0; i < payloads.size(); ++i)
    payloads[i]->swap(held[i]);
  uint64_t total = meta.size() + 4 + 4 * uint64_t(payloads.size());
  for (const std::string *p : payloads)
    total += p->size();
  if (!ok || total > kMaxWorkerMessageBytes)
    return false;
  head.clear();
  head.reserve(8 + meta.size() + 4 * payloads.size());
  head += encodeLength(uint32_t(meta.size()) | kSplitFrameFlag | (sharedPayloads ? kSharedPayloadsFlag : 0));
  head += meta;
  head += encodeLength(uint32_t(payloads.size()));
  for (const std::string *p : payloads)
    head += encodeLength(uint32_t(p->size()));
  return true;
}

bool encodeSplitFrame(google::protobuf::MessageLite &message, PayloadFields fields, const SharedPayloads &shared,
                      std::string &head, std::vector<std::string *> &payloads) {
  uint64_t total = 0;
  for (const std::string *p : fields(message))
    total += p->size();
  const bool inShared = shared && total <= shared.size;
  if (!encodeSplitHead(message, fields, head, payloads, inShared))
    return false;
  if (inShared) {
    // Before the head is written: the reader takes them once it has it.
    size_t at = 0;
    for (const std::string *p : payloads) {
      std::memcpy(shared.data + at, p->data(), p->size());
      at += p->size();
    }
    payloads.clear();
  }
  return true;
}

bool writeSplitMessage(int fd, google::protobuf::MessageLite &message, PayloadFields fields,
                       const SharedPayloads &shared) {
  std::string head;
  std::vector<std::string *> payloads;
  if (!encodeSplitFrame(message, fields, shared, head, payloads) || !writeAll(fd, head.data(), head.size()))
    return false;
  for (const std::string *p : payloads)
    if (!writeAll(fd, p->data(), p->size()))
      return false;
  return true;
}

bool readAnyMessage(int fd, google::protobuf::MessageLite &message, PayloadFields fields, bool &split,
                    uint32_t limit, const SharedPayloads &shared) {
  char header[4];
  if (!readAll(fd, header, 4))
    return false;
  uint32_t prefix = decodeLength(header);
  split = (prefix & kSplitFrameFlag) != 0;
  uint64_t size = 0;
  return readFrameRest(prefix, message, fields, limit, size,
                       [&](char *data, size_t n) { return readAll(fd, data, n); }, shared) == FrameRead::Ok;
}

} // namespace msl::service
