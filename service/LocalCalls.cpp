#include "LocalCalls.h"

#include "Auth.h"
#include "ExecuteService.h"
#include "Metrics.h"
#include "RpcLog.h"
#include "msl/v1/local.pb.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <list>
#include <mutex>
#include <system_error>
#include <thread>

namespace msl::service {
namespace {

using Clock = std::chrono::steady_clock;
using grpc::Status;
using grpc::StatusCode;

int millisUntil(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return int(std::clamp<int64_t>(left, 0, 1000));
}

// Whether the client of connection `fd` has hung up (or shut its side), now,
// whether or not the connection's thread has noticed. While msld drains, the
// end of input is its own SHUT_RD (stop()), not the client's.
bool clientGone(int fd, bool draining) {
  pollfd p{fd, POLLRDHUP, 0};
  const short events = ::poll(&p, 1, 0) > 0 ? p.revents : 0;
  return (events & (POLLHUP | POLLERR)) || ((events & POLLRDHUP) && !draining);
}

// Sends what it can of `data` now (the socket is non-blocking); the bytes sent.
size_t sendNow(int fd, const char *data, size_t size) {
  size_t sent = 0;
  while (sent < size) {
    ssize_t n = ::send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n > 0)
      sent += size_t(n);
    else if (n < 0 && errno == EINTR)
      continue;
    else
      break;
  }
  return sent;
}

// All of `data` by `deadline`; false when the client is gone or too slow.
bool sendAll(int fd, const char *data, size_t size, Clock::time_point deadline) {
  for (;;) {
    size_t sent = sendNow(fd, data, size);
    data += sent;
    size -= sent;
    if (size == 0)
      return true;
    if (errno != EAGAIN && errno != EWOULDBLOCK)
      return false;
    if (Clock::now() >= deadline)
      return false;
    pollfd p{fd, POLLOUT, 0};
    ::poll(&p, 1, millisUntil(deadline));
  }
}

// Exactly `size` bytes into `out` by `deadline`; false when the client closed
// the connection, failed or was too slow.
bool receiveAll(int fd, char *out, size_t size, Clock::time_point deadline) {
  while (size > 0) {
    ssize_t n = ::recv(fd, out, size, 0);
    if (n > 0) {
      out += n;
      size -= size_t(n);
      continue;
    }
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
      return false;
    if (Clock::now() >= deadline)
      return false;
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, millisUntil(deadline));
  }
  return true;
}

// A reply's frame: its length, then the LocalExecuteReply.
std::string frameOf(const Status &status, const std::string &requestId, msl::v1::ExecuteResponse response = {}) {
  msl::v1::LocalExecuteReply reply;
  reply.set_code(int(status.error_code()));
  reply.set_message(status.error_message());
  reply.set_request_id(requestId);
  if (status.ok())
    *reply.mutable_response() = std::move(response);
  const size_t size = reply.ByteSizeLong();
  std::string out(4 + size, '\0');
  for (int i = 0; i < 4; ++i)
    out[size_t(i)] = char(uint32_t(size) >> (8 * i));
  reply.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t *>(out.data()) + 4);
  return out;
}

const log::Fields &localTransport() {
  static const log::Fields fields{{"transport", std::string("local")}};
  return fields;
}

} // namespace

struct LocalCalls::Impl {
  Impl(ExecuteService &e, const Authorizer *a, ServiceMetrics &m, LocalCallsOptions o)
      : execute(e), auth(a), metrics(m), options(o) {}

  ExecuteService &execute;
  const Authorizer *auth;
  ServiceMetrics &metrics;
  LocalCallsOptions options;

  struct Connection {
    int fd = -1;
    int64_t uid = -1;
    std::string peer;   // for the log: "unix:pid=N,uid=N"
    std::string client; // for the fair queue: "local-uid:N"
    std::thread thread;
    std::atomic<bool> ended{false};
  };
  mutable std::mutex mu; // guards the fields below
  std::list<std::unique_ptr<Connection>> live;
  bool opened = false;
  bool stopping = false;
  Clock::time_point drainDeadline = Clock::time_point::max();

  /// One call, shared by the connection's thread and whoever answers it.
  struct Call {
    explicit Call(RpcLog log) : log(std::move(log)) {}
    std::mutex mu;
    std::condition_variable answeredCv;
    bool answered = false;
    bool abandoned = false; // the client went away: nothing to send
    bool timedOut = false;  // past timeout_ms: answered DEADLINE_EXCEEDED
    bool drained = false;   // past msld's drain deadline: answered UNAVAILABLE
    std::string unsent;     // the reply's bytes the socket did not take at once
    bool sendFailed = false;
    RpcLog log;
    std::string device; // its metrics label, once it reaches ExecuteService
    uint32_t timeoutMs = 0;
  };

  /// Bytes of frames and parsed requests all connections hold now.
  std::atomic<uint64_t> held{0};
  /// A share of maxBytesHeld, given back when it goes.
  class Reservation {
  public:
    explicit Reservation(Impl &impl) : impl_(impl) {}
    ~Reservation() { release(); }
    bool take(uint64_t bytes) {
      if (impl_.held.fetch_add(bytes) + bytes > impl_.options.maxBytesHeld) {
        impl_.held -= bytes;
        return false;
      }
      bytes_ += bytes;
      return true;
    }
    void release() {
      impl_.held -= bytes_;
      bytes_ = 0;
    }

  private:
    Impl &impl_;
    uint64_t bytes_ = 0;
  };

  void serve(Connection &c);
  bool waitForRequest(int fd);
  enum class Read { kOk, kClosed, kTooLarge, kOverBudget };
  /// One request's frame into `body` (its length in `size`).
  Read readRequest(int fd, std::string &body, Reservation &reservation, uint64_t &size);
  /// Answers a frame that is no call with `code` (logged and counted);
  /// false when the client is gone.
  bool reject(Connection &c, StatusCode code, const std::string &message);
  bool serveCall(Connection &c, msl::v1::LocalExecuteRequest &request, Reservation &reservation);
  void answer(int fd, Call &call, Status status, msl::v1::ExecuteResponse response);
  /// Waits for `call`'s answer; cancels `running` when its client goes
  /// away, its deadline passes or msld's drain deadline does.
  void awaitAnswer(int fd, Call &call, const std::shared_ptr<ExecuteService::Call> &running,
                   Clock::time_point deadline);
  void reapEnded();
};

LocalCalls::LocalCalls(ExecuteService &execute, const Authorizer *auth, ServiceMetrics &metrics,
                       LocalCallsOptions options)
    : impl_(std::make_unique<Impl>(execute, auth, metrics, options)) {}

LocalCalls::~LocalCalls() { stop(Clock::now()); }

void LocalCalls::Impl::reapEnded() {
  std::list<std::unique_ptr<Connection>> ended;
  {
    std::lock_guard lock(mu);
    for (auto it = live.begin(); it != live.end();)
      if ((*it)->ended) {
        ended.push_back(std::move(*it));
        it = live.erase(it);
      } else {
        ++it;
      }
  }
  for (auto &c : ended) {
    c->thread.join();
    ::close(c->fd); // only now: stop() may shut it down until it leaves `live`
  }
}

void LocalCalls::adopt(int fd, uint64_t version) {
  impl_->reapEnded();
  auto refuse = [fd](const std::string &why) {
    std::string line = "ERR " + why + "\n";
    sendNow(fd, line.data(), line.size());
    ::close(fd);
  };
  if (version != 0)
    return refuse("unknown local call protocol version " + std::to_string(version) + " (msld speaks 0)");
  auto c = std::make_unique<Impl::Connection>();
  c->fd = fd;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    c->uid = cred.uid;
    c->peer = "unix:pid=" + std::to_string(cred.pid) + ",uid=" + std::to_string(cred.uid);
    c->client = "local-uid:" + std::to_string(cred.uid);
  } else {
    c->peer = "unix:unknown";
    c->client = "local";
  }
  std::lock_guard lock(impl_->mu);
  if (impl_->stopping)
    return refuse("msld is shutting down");
  if (!impl_->opened)
    return refuse("msld is starting; try again");
  // A connection whose client has gone counts no more, though its thread
  // may not have noticed yet: a client that closes and reconnects at once
  // is not refused.
  unsigned all = 0, mine = 0;
  for (const auto &other : impl_->live) {
    const bool counts = !other->ended && !clientGone(other->fd, false);
    all += counts;
    mine += counts && other->uid == c->uid;
  }
  if (all >= impl_->options.maxConnections)
    return refuse("msld serves " + std::to_string(impl_->options.maxConnections) +
                  " local connections already, its most");
  if (mine >= impl_->options.maxConnectionsPerUser)
    return refuse("this user holds " + std::to_string(mine) + " local connections already, the most one may");
  static const char kOk[] = "OK\n";
  if (sendNow(fd, kOk, 3) != 3) {
    ::close(fd);
    return;
  }
  Impl::Connection *raw = c.get();
  Impl *impl = impl_.get();
  try {
    c->thread = std::thread([impl, raw] {
      impl->serve(*raw);
      // The client sees the end now; the descriptor is closed when the
      // thread is joined (reapEnded), so stop() never shuts down a reused
      // number.
      ::shutdown(raw->fd, SHUT_RDWR);
      raw->ended = true;
    });
  } catch (const std::system_error &e) {
    return refuse(std::string("msld cannot start a thread for the connection: ") + e.what());
  }
  impl_->live.push_back(std::move(c));
}

void LocalCalls::stop(std::chrono::steady_clock::time_point drainDeadline) {
  beginStop(drainDeadline);
  for (;;) {
    impl_->reapEnded();
    {
      std::lock_guard lock(impl_->mu);
      if (impl_->live.empty())
        return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1)); // threads still answering
  }
}

void LocalCalls::open() {
  std::lock_guard lock(impl_->mu);
  impl_->opened = true;
}

void LocalCalls::beginStop(std::chrono::steady_clock::time_point drainDeadline) {
  std::lock_guard lock(impl_->mu);
  impl_->stopping = true;
  impl_->drainDeadline = std::min(impl_->drainDeadline, drainDeadline);
  // A thread waiting for a request sees the end of its input and leaves;
  // one running a call answers it (until the drain deadline) first.
  for (auto &c : impl_->live)
    ::shutdown(c->fd, SHUT_RD);
}

bool LocalCalls::Impl::waitForRequest(int fd) {
  // Polled for a while first: a client in a loop sends its next call soon,
  // and waking a sleeping thread costs more than the poll.
  const auto spinUntil = Clock::now() + options.spin;
  pollfd p{fd, POLLIN, 0};
  do {
    if (::poll(&p, 1, 0) > 0)
      return true;
  } while (Clock::now() < spinUntil);
  const auto idleUntil = Clock::now() + std::chrono::milliseconds(options.idleTimeoutMs);
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(idleUntil - Clock::now()).count();
    if (left <= 0)
      return false; // idle too long: closed
    int n = ::poll(&p, 1, int(std::min<int64_t>(left, 1 << 30)));
    if (n > 0)
      return true;
    if (n < 0 && errno != EINTR)
      return false;
  }
}

LocalCalls::Impl::Read LocalCalls::Impl::readRequest(int fd, std::string &body, Reservation &reservation,
                                                     uint64_t &size) {
  unsigned char header[4];
  // The frame's first byte is here (waitForRequest); the rest must follow.
  const auto deadline = Clock::now() + std::chrono::milliseconds(options.frameTimeoutMs);
  if (!receiveAll(fd, reinterpret_cast<char *>(header), 4, deadline))
    return Read::kClosed;
  size = uint64_t(header[0]) | uint64_t(header[1]) << 8 | uint64_t(header[2]) << 16 | uint64_t(header[3]) << 24;
  if (size > options.maxRequestBytes)
    return Read::kTooLarge;
  // All connections' frames and parsed requests together stay under
  // maxBytesHeld (twice a frame: its bytes and its parse).
  if (!reservation.take(2 * size))
    return Read::kOverBudget;
  // Grown as the bytes come, so a client that announces a large frame and
  // sends nothing holds no memory for it.
  body.clear();
  constexpr size_t kStep = 1 << 20;
  while (body.size() < size) {
    size_t at = body.size(), n = std::min<size_t>(kStep, size - at);
    body.resize(at + n);
    if (!receiveAll(fd, body.data() + at, n, deadline))
      return Read::kClosed;
  }
  return Read::kOk;
}

bool LocalCalls::Impl::reject(Connection &c, StatusCode code, const std::string &message) {
  RpcLog log("Execute", c.peer, "", "");
  const Status status(code, message);
  metrics.countRequest("Execute", int(code));
  log.finish(status, localTransport());
  std::string frame = frameOf(status, log.id());
  return sendAll(c.fd, frame.data(), frame.size(), Clock::now() + std::chrono::milliseconds(options.frameTimeoutMs));
}

void LocalCalls::Impl::serve(Connection &c) {
  std::string body;
  for (;;) {
    if (!waitForRequest(c.fd))
      return;
    Reservation reservation(*this);
    uint64_t size = 0;
    switch (readRequest(c.fd, body, reservation, size)) {
    case Read::kOk:
      break;
    case Read::kClosed:
      return;
    case Read::kTooLarge: // the stream cannot be followed past it: the connection ends
      reject(c, StatusCode::RESOURCE_EXHAUSTED,
             "the request is " + std::to_string(size) + " bytes, more than msld takes (" +
                 std::to_string(options.maxRequestBytes) + ", --max-receive-bytes); the connection is closed");
      return;
    case Read::kOverBudget:
      reject(c, StatusCode::RESOURCE_EXHAUSTED,
             "msld holds " + std::to_string(options.maxBytesHeld) +
                 " bytes of local requests already; the connection is closed: retry later");
      return;
    }
    msl::v1::LocalExecuteRequest request;
    const bool parsed = request.ParseFromString(body);
    body = std::string(); // a large request's bytes are not kept while it runs
    if (!parsed) {
      reservation.release();
      metrics.rejectedInvalid.Increment();
      if (!reject(c, StatusCode::INVALID_ARGUMENT,
                  "the request is not a valid msl.v1.LocalExecuteRequest protobuf message"))
        return;
      continue;
    }
    if (!serveCall(c, request, reservation))
      return;
  }
}

void LocalCalls::Impl::answer(int fd, Call &call, Status status, msl::v1::ExecuteResponse response) {
  std::unique_lock lock(call.mu);
  if (call.timedOut && !status.ok())
    status = Status(StatusCode::DEADLINE_EXCEEDED,
                    "the call ran past its timeout_ms (" + std::to_string(call.timeoutMs) + " ms) and was stopped");
  else if (call.drained && !status.ok())
    status = Status(StatusCode::UNAVAILABLE, "msld is shutting down and stopped the call past its drain time");
  metrics.countRequest("Execute", int(status.error_code()));
  log::Fields fields = localTransport();
  if (!call.device.empty()) {
    metrics.countExecution(call.device, int(status.error_code()));
    fields.emplace_back("device", call.device);
  }
  call.log.finish(status, std::move(fields));
  if (!call.abandoned) {
    // Sent from here, whichever thread this is: the client waits for it.
    std::string frame = frameOf(status, call.log.id(), std::move(response));
    size_t sent = sendNow(fd, frame.data(), frame.size());
    if (sent < frame.size()) {
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        call.unsent = frame.substr(sent); // the connection's thread sends the rest
      else
        call.sendFailed = true;
    }
  }
  call.answered = true;
  lock.unlock();
  call.answeredCv.notify_one();
}

void LocalCalls::Impl::awaitAnswer(int fd, Call &call, const std::shared_ptr<ExecuteService::Call> &running,
                                   Clock::time_point deadline) {
  std::unique_lock lock(call.mu);
  bool cancelled = false;
  while (!call.answered) {
    call.answeredCv.wait_for(lock, std::chrono::milliseconds(20));
    if (call.answered || cancelled)
      continue;
    bool draining, pastDrain;
    {
      std::lock_guard stopLock(mu);
      draining = stopping;
      pastDrain = stopping && Clock::now() >= drainDeadline;
    }
    const bool gone = clientGone(fd, draining);
    const bool late = Clock::now() >= deadline;
    if (!gone && !late && !pastDrain)
      continue;
    call.abandoned = gone;
    call.timedOut = late && !gone;
    call.drained = pastDrain && !gone && !late;
    cancelled = true;
    lock.unlock(); // the cancel may answer on this thread
    execute.cancel(running);
    lock.lock();
  }
}

bool LocalCalls::Impl::serveCall(Connection &c, msl::v1::LocalExecuteRequest &request, Reservation &reservation) {
  const auto arrived = Clock::now();
  auto call = std::make_shared<Call>(RpcLog("Execute", c.peer, request.request_id(), request.client_id()));
  call->timeoutMs = request.timeout_ms();
  const int fd = c.fd;

  Status refused;
  if (auth) {
    Metadata metadata;
    if (!request.authorization().empty())
      metadata.emplace("authorization", grpc::string_ref(request.authorization()));
    AuthDecision decision = auth->check(rpc::kExecute, metadata, PeerIdentity{});
    if (!decision.ok()) {
      metrics.countAuthFailure(decision.failure);
      refused = decision.status;
    }
  }
  if (refused.ok()) {
    std::lock_guard lock(mu);
    if (stopping)
      refused = Status(StatusCode::UNAVAILABLE, "msld is shutting down");
  }
  if (!refused.ok()) {
    answer(fd, *call, refused, {});
  } else {
    call->device = executionDeviceLabel(request.request().device());
    std::string client = c.client;
    if (!request.client_id().empty())
      client += "#" + request.client_id().substr(0, 64);
    auto running = execute.execute(
        std::move(*request.mutable_request()), client,
        [this, fd, call](Status s, msl::v1::ExecuteResponse r) { answer(fd, *call, std::move(s), std::move(r)); },
        arrived);
    reservation.release(); // the job holds what it needs, counted by ExecuteService
    awaitAnswer(fd, *call, running,
                call->timeoutMs ? arrived + std::chrono::milliseconds(call->timeoutMs) : Clock::time_point::max());
  }
  std::unique_lock lock(call->mu);
  if (call->abandoned || call->sendFailed)
    return false;
  if (call->unsent.empty())
    return true;
  std::string rest = std::move(call->unsent);
  lock.unlock();
  return sendAll(fd, rest.data(), rest.size(), Clock::now() + std::chrono::milliseconds(options.frameTimeoutMs));
}

} // namespace msl::service
