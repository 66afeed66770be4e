#include "SharedRegions.h"

#include "UnixSocketPath.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace msl::service {
namespace {

constexpr char kMagic[8] = {'M', 'S', 'L', 'D', 'S', 'H', 'M', '1'};
constexpr char kCallsMagic[8] = {'M', 'S', 'L', 'D', 'E', 'X', 'E', '1'}; // LocalCalls.h
constexpr size_t kRequestBytes = 16;

using Clock = std::chrono::steady_clock;

uint64_t littleEndian64(const char *bytes) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = value << 8 | uint8_t(bytes[i]);
  return value;
}

std::string randomToken() {
  unsigned char raw[16];
  size_t got = 0;
  while (got < sizeof raw) {
    ssize_t n = ::getrandom(raw + got, sizeof raw - got, 0);
    if (n <= 0) {
      if (n < 0 && errno == EINTR)
        continue;
      return "";
    }
    got += size_t(n);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char c : raw) {
    token.push_back(kHex[c >> 4]);
    token.push_back(kHex[c & 15]);
  }
  return token;
}

// Sends `line`, with `fd` attached when it is >= 0; never blocks long (the
// socket is non-blocking; a client that does not read loses its answer).
void sendLine(int connection, const std::string &line, int fd) {
  iovec iov{const_cast<char *>(line.data()), line.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  while (::sendmsg(connection, &msg, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

} // namespace

SharedRegion::~SharedRegion() {
  if (base)
    ::munmap(base, size);
  if (fd >= 0)
    ::close(fd);
}

struct SharedRegions::Impl {
  SharedRegionsOptions options;
  int listener = -1;
  int wake[2] = {-1, -1}; // written to stop the thread
  std::thread thread;

  struct Connection {
    int fd = -1;
    char request[kRequestBytes] = {};
    size_t got = 0;
    Clock::time_point deadline;
    std::shared_ptr<SharedRegion> region; // once answered
    bool done = false;                    // to be closed
  };
  std::list<Connection> connections; // the thread's own
  // Out of file descriptors: the listener is left alone until then (it
  // stays readable, and polling it would spin).
  Clock::time_point acceptAgainAt{};

  mutable std::mutex mutex;
  std::map<std::string, std::shared_ptr<SharedRegion>> byToken;
  uint64_t totalBytes = 0;
  uint64_t lastSerial = 0;

  void serve();
  void accept();
  // Reads what `c` sent; false when the connection is done with.
  bool readFrom(Connection &c);
  std::string answer(Connection &c, int &memfd);
  void close(Connection &c);
};

std::unique_ptr<SharedRegions> SharedRegions::start(const SharedRegionsOptions &options, std::string &error) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (std::string why = checkUnixSocketPath(options.socketPath); !why.empty()) {
    error = options.socketPath + ": " + why;
    return nullptr;
  }
  ::unlink(options.socketPath.c_str()); // a socket an earlier msld left, if any
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, options.socketPath.c_str(), options.socketPath.size());
  impl->listener = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (impl->listener < 0 || ::bind(impl->listener, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0 ||
      ::listen(impl->listener, 16) != 0 || ::pipe2(impl->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    error = "cannot listen on " + options.socketPath + ": " + std::strerror(errno);
    if (impl->listener >= 0)
      ::close(impl->listener);
    return nullptr;
  }
  Impl *raw = impl.get();
  impl->thread = std::thread([raw] { raw->serve(); });
  return std::unique_ptr<SharedRegions>(new SharedRegions(std::move(impl)));
}

SharedRegions::SharedRegions(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SharedRegions::~SharedRegions() {
  char c = 0;
  ssize_t ignored = ::write(impl_->wake[1], &c, 1);
  (void)ignored;
  impl_->thread.join();
  for (auto &c : impl_->connections)
    impl_->close(c);
  ::close(impl_->listener);
  ::unlink(impl_->options.socketPath.c_str());
  ::close(impl_->wake[0]);
  ::close(impl_->wake[1]);
}

std::shared_ptr<SharedRegion> SharedRegions::find(const std::string &token) const {
  std::lock_guard lock(impl_->mutex);
  auto it = impl_->byToken.find(token);
  return it == impl_->byToken.end() ? nullptr : it->second;
}

std::vector<uint64_t> SharedRegions::serials() const {
  std::lock_guard lock(impl_->mutex);
  std::vector<uint64_t> out;
  out.reserve(impl_->byToken.size());
  for (const auto &[token, region] : impl_->byToken)
    out.push_back(region->serial);
  return out;
}

unsigned SharedRegions::regions() const {
  std::lock_guard lock(impl_->mutex);
  return unsigned(impl_->byToken.size());
}

uint64_t SharedRegions::bytes() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->totalBytes;
}

void SharedRegions::Impl::serve() {
  std::vector<pollfd> fds;
  std::vector<Connection *> of;
  for (;;) {
    const auto now = Clock::now();
    const bool accepting = now >= acceptAgainAt;
    fds.assign({{wake[0], POLLIN, 0}, {accepting ? listener : -1, POLLIN, 0}});
    of.assign(2, nullptr);
    int timeout = accepting ? -1 : 100;
    for (auto &c : connections) {
      fds.push_back({c.fd, POLLIN, 0});
      of.push_back(&c);
      if (!c.region) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(c.deadline - now).count();
        timeout = timeout < 0 ? int(std::max<int64_t>(0, left)) : std::min(timeout, int(std::max<int64_t>(0, left)));
      }
    }
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
      return;
    if (fds[0].revents)
      return;
    if (fds[1].revents & POLLIN)
      accept();
    const auto after = Clock::now();
    for (size_t i = 2; i < fds.size(); ++i) {
      Connection &c = *of[i];
      bool keep = true;
      if (fds[i].revents)
        keep = readFrom(c);
      else if (!c.region && after >= c.deadline)
        keep = false; // too slow to ask
      c.done = !keep;
    }
    for (auto it = connections.begin(); it != connections.end();)
      if (it->done) {
        close(*it);
        it = connections.erase(it);
      } else {
        ++it;
      }
  }
}

void SharedRegions::Impl::accept() {
  for (;;) {
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
        acceptAgainAt = Clock::now() + std::chrono::milliseconds(100);
      return;
    }
    if (connections.size() >= options.maxRegions) {
      sendLine(fd, "ERR msld has " + std::to_string(options.maxRegions) + " shared regions open, its most\n", -1);
      ::close(fd);
      continue;
    }
    Connection c;
    c.fd = fd;
    c.deadline = Clock::now() + std::chrono::milliseconds(options.requestTimeoutMs);
    connections.push_back(c);
  }
}

bool SharedRegions::Impl::readFrom(Connection &c) {
  if (c.region) {
    // After the answer only the end matters: anything sent is refused.
    char scratch[256];
    ssize_t n = ::recv(c.fd, scratch, sizeof scratch, 0);
    return n < 0 && (errno == EAGAIN || errno == EINTR);
  }
  ssize_t n = ::recv(c.fd, c.request + c.got, kRequestBytes - c.got, 0);
  if (n < 0)
    return errno == EAGAIN || errno == EINTR;
  if (n == 0)
    return false;
  c.got += size_t(n);
  if (c.got < kRequestBytes)
    return true;
  if (std::memcmp(c.request, kCallsMagic, sizeof kCallsMagic) == 0) {
    if (!options.takeCallConnection) {
      sendLine(c.fd, "ERR this msld takes no local calls\n", -1);
      return false;
    }
    options.takeCallConnection(c.fd, littleEndian64(c.request + 8));
    c.fd = -1; // its own now
    return false;
  }
  int memfd = -1;
  std::string line = answer(c, memfd);
  sendLine(c.fd, line, memfd);
  if (memfd >= 0)
    ::close(memfd); // the client has its own; msld keeps the mapping and a copy
  return c.region != nullptr;
}

std::string SharedRegions::Impl::answer(Connection &c, int &memfd) {
  if (std::memcmp(c.request, kMagic, sizeof kMagic) != 0)
    return "ERR not a shared region request (it starts with \"MSLDSHM1\")\n";
  const uint64_t size = littleEndian64(c.request + 8);
  if (size == 0 || size > options.maxRegionBytes)
    return "ERR a shared region is 1 to " + std::to_string(options.maxRegionBytes) + " bytes, not " +
           std::to_string(size) + "\n";
  {
    std::lock_guard lock(mutex);
    if (totalBytes + size > options.maxTotalBytes)
      return "ERR msld's shared regions would exceed " + std::to_string(options.maxTotalBytes) + " bytes (" +
             std::to_string(totalBytes) + " in use)\n";
  }
  auto region = std::make_shared<SharedRegion>();
  region->token = randomToken();
  region->size = size;
  memfd = ::memfd_create("msld-shared-region", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  void *base = MAP_FAILED;
  if (memfd >= 0 && ::ftruncate(memfd, off_t(size)) == 0 &&
      ::fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0)
    base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
  if (base == MAP_FAILED || region->token.empty()) {
    std::string why = std::strerror(errno);
    if (base != MAP_FAILED)
      ::munmap(base, size);
    if (memfd >= 0)
      ::close(memfd);
    memfd = -1;
    return "ERR cannot create a shared region of " + std::to_string(size) + " bytes: " + why + "\n";
  }
  region->base = static_cast<char *>(base);
  region->fd = ::fcntl(memfd, F_DUPFD_CLOEXEC, 0);
  if (region->fd < 0) {
    std::string why = std::strerror(errno);
    ::close(memfd);
    memfd = -1;
    return "ERR cannot keep a shared region's descriptor: " + why + "\n";
  }
  region->serial = ++lastSerial;
  {
    std::lock_guard lock(mutex);
    byToken[region->token] = region;
    totalBytes += size;
  }
  c.region = region;
  return "OK " + region->token + "\n";
}

void SharedRegions::Impl::close(Connection &c) {
  if (c.region) {
    std::lock_guard lock(mutex);
    byToken.erase(c.region->token);
    totalBytes -= c.region->size;
    c.region.reset(); // unmapped when the last request reading it lets go
  }
  if (c.fd >= 0)
    ::close(c.fd);
}

} // namespace msl::service
