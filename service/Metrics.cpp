#include "Metrics.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <prometheus/text_serializer.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <csignal>
#include <cstring>
#include <deque>
#include <exception>
#include <thread>

namespace msl::service {
namespace {

// grpc::StatusCode names, by value.
constexpr const char *kCodeNames[ServiceMetrics::kStatusCodes] = {
    "OK",          "CANCELLED",         "UNKNOWN",          "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED", "NOT_FOUND",   "ALREADY_EXISTS",   "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL",        "UNAVAILABLE",      "DATA_LOSS",
    "UNAUTHENTICATED"};
constexpr int kUnknownCode = 2;

int codeIndex(int code) { return code >= 0 && code < ServiceMetrics::kStatusCodes ? code : kUnknownCode; }

prometheus::Family<prometheus::Counter> &counterFamily(prometheus::Registry &r, const char *name,
                                                       const char *help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

prometheus::Counter &counter(prometheus::Registry &r, const char *name, const char *help) {
  return counterFamily(r, name, help).Add({});
}

prometheus::Gauge &gauge(prometheus::Registry &r, const char *name, const char *help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
}

const prometheus::Histogram::BucketBoundaries &kernelBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 60};
  return buckets;
}

const prometheus::Histogram::BucketBoundaries &latencyBuckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return buckets;
}

} // namespace

void MetricsRegistry::onCollect(std::function<void()> refresh) {
  std::lock_guard lock(mu_);
  refreshers_.push_back(std::move(refresh));
}

std::vector<prometheus::MetricFamily> MetricsRegistry::Collect() const {
  {
    std::lock_guard lock(mu_);
    for (const auto &refresh : refreshers_)
      refresh();
  }
  return registry_->Collect();
}

std::string MetricsRegistry::render() const {
  return prometheus::TextSerializer().Serialize(Collect());
}

ServiceMetrics::ServiceMetrics(prometheus::Registry &r)
    : requestsFamily_(counterFamily(r, "msld_requests_total",
                                    "RPCs handled, by method and status code.")),
      compileLatencyFamily_(prometheus::BuildHistogram()
                                .Name("msld_compile_duration_seconds")
                                .Help("Compile RPC latency, by cache outcome (hit or miss).")
                                .Register(r)),
      rejectedFamily_(counterFamily(r, "msld_requests_rejected_total",
                                    "Requests refused before compiling, by reason (queue_full, "
                                    "too_large, invalid_argument).")),
      executionsFamily_(counterFamily(r, "msld_executions_total",
                                      "Execute RPCs finished, by device and status code.")),
      executeBytesFamily_(counterFamily(r, "msld_execute_bytes_total",
                                        "Buffer and texture bytes moved to (in) and from (out) kernels.")),
      kernelTimeFamily_(prometheus::BuildHistogram()
                            .Name("msld_kernel_duration_seconds")
                            .Help("Kernel time of one dispatch, by device.")
                            .Register(r)),
      cudaModuleLoadFamily_(prometheus::BuildHistogram()
                                .Name("msld_cuda_module_load_seconds")
                                .Help("Time a CUDA worker took to make a kernel's module ready, by source "
                                      "(loaded already, cubin from msld's cache, ptx_jit).")
                                .Register(r)),
      authFailuresFamily_(counterFamily(r, "msld_auth_failures_total",
                                        "Calls refused by authentication or roles, by reason (missing_token, "
                                        "bad_token, permission_denied, no_client_cert, unknown_subject).")),
      cacheEvictionsFamily_(counterFamily(r, "msld_cache_evictions_total",
                                          "Items evicted from the cache to stay under --cache-max-bytes, by kind "
                                          "(blob, action).")),
      cacheEvictedBytesFamily_(counterFamily(r, "msld_cache_evicted_bytes_total",
                                             "Bytes evicted from the cache, by kind (blob, action).")),
      scrubsFamily_(counterFamily(r, "msld_cache_scrubs_total",
                                  "Online scrubs of the cache (Admin.Scrub) finished, by result (clean; "
                                  "corrupt: found corrupt or missing items, dropped unless a dry run; "
                                  "incomplete: a read error or cancelled).")),
      scrubDroppedFamily_(counterFamily(r, "msld_cache_scrub_dropped_total",
                                        "Items online scrubs dropped, by kind (blob: corrupt; action: corrupt "
                                        "or referencing a dropped blob).")),
      workerSandboxedFamily_(prometheus::BuildGauge()
                                 .Name("msld_worker_sandboxed")
                                 .Help("Whether the workers of a pool run in the sandbox (1) or with rlimits "
                                       "only (0), by pool (compile, execution, cuda).")
                                 .Register(r)),
      compileLatencyHit(compileLatencyFamily_.Add({{"cache", "hit"}}, latencyBuckets())),
      compileLatencyMiss(compileLatencyFamily_.Add({{"cache", "miss"}}, latencyBuckets())),
      actionCacheHits(counter(r, "msld_action_cache_hits_total",
                              "Compiles answered from the action cache.")),
      actionCacheMisses(counter(r, "msld_action_cache_misses_total",
                                "Compiles not in the action cache.")),
      casBytes(gauge(r, "msld_cas_bytes", "Bytes of blobs in the content-addressed store.")),
      casBlobs(gauge(r, "msld_cas_blobs", "Blobs in the content-addressed store.")),
      sharedRegions(gauge(r, "msld_shared_regions", "Shared regions open (--shared-regions-socket).")),
      sharedRegionBytes(gauge(r, "msld_shared_region_bytes", "Bytes of the shared regions open.")),
      corruptBlobs(counter(r, "msld_cas_corrupt_blobs_total",
                           "Stored blobs or action results found corrupt (and dropped).")),
      workerCrashes(counter(r, "msld_worker_crashes_total", "Compile workers that died mid-request.")),
      workerTimeouts(counter(r, "msld_worker_timeouts_total",
                             "Compiles killed for passing their time limit.")),
      workerMemoryKills(counter(r, "msld_worker_memory_limit_kills_total",
                                "Compile workers that died of their memory limit.")),
      workerIdentityMismatches(counter(r, "msld_worker_identity_mismatches_total",
                                       "Replacement workers refused because their compiler "
                                       "identity differs from the pool's.")),
      compilesInFlight(gauge(r, "msld_compiles_in_flight", "Compiles running in workers now.")),
      compileQueueDepth(gauge(r, "msld_compile_queue_depth", "Compiles waiting for a worker.")),
      compilesShared(counter(r, "msld_compiles_deduplicated_total",
                             "Compile requests that waited for an identical compile in flight.")),
      compilesCancelled(counter(r, "msld_compiles_cancelled_total",
                                "Compiles stopped because their client cancelled or its deadline "
                                "passed.")),
      rejectedQueueFull(rejectedFamily_.Add({{"reason", "queue_full"}})),
      rejectedTooLarge(rejectedFamily_.Add({{"reason", "too_large"}})),
      rejectedInvalid(rejectedFamily_.Add({{"reason", "invalid_argument"}})),
      kernelTimeCpu(kernelTimeFamily_.Add({{"device", "cpu"}}, kernelBuckets())),
      execWorkerCrashes(counter(r, "msld_exec_worker_crashes_total",
                                "Execution workers that died mid-request (kernel faults excluded).")),
      execWorkerTimeouts(counter(r, "msld_exec_worker_timeouts_total",
                                 "Executions killed for passing their time limit.")),
      kernelFaults(counter(r, "msld_kernel_faults_total",
                           "Kernels that faulted (out-of-bounds access, trap); their worker was replaced.")),
      executeBytesIn(executeBytesFamily_.Add({{"direction", "in"}})),
      executeBytesOut(executeBytesFamily_.Add({{"direction", "out"}})),
      cacheBytes(gauge(r, "msld_cache_bytes",
                       "Bytes the cache holds as --cache-max-bytes counts them: blob sizes plus action "
                       "entries.")),
      cacheMaxBytes(gauge(r, "msld_cache_max_bytes", "The cache's bound (--cache-max-bytes); 0: unbounded.")),
      actionCacheEntries(gauge(r, "msld_action_cache_entries", "Entries in the action cache.")),
      cacheEvictionsBlob(cacheEvictionsFamily_.Add({{"kind", "blob"}})),
      cacheEvictionsAction(cacheEvictionsFamily_.Add({{"kind", "action"}})),
      cacheEvictedBytesBlob(cacheEvictedBytesFamily_.Add({{"kind", "blob"}})),
      cacheEvictedBytesAction(cacheEvictedBytesFamily_.Add({{"kind", "action"}})),
      actionCachePutsDropped(counter(r, "msld_action_cache_puts_dropped_total",
                                     "Results not cached because an artifact they reference was evicted "
                                     "before the result was stored.")),
      scrubsClean(scrubsFamily_.Add({{"result", "clean"}})),
      scrubsCorrupt(scrubsFamily_.Add({{"result", "corrupt"}})),
      scrubsIncomplete(scrubsFamily_.Add({{"result", "incomplete"}})),
      scrubBlobsChecked(counter(r, "msld_cache_scrub_blobs_checked_total",
                                "Blobs online scrubs read and re-hashed against their digests.")),
      scrubBytesChecked(counter(r, "msld_cache_scrub_bytes_checked_total", "Bytes of those blobs.")),
      scrubEntriesChecked(counter(r, "msld_cache_scrub_entries_checked_total",
                                  "Action cache entries online scrubs read and checksummed.")),
      scrubDroppedBlobs(scrubDroppedFamily_.Add({{"kind", "blob"}})),
      scrubDroppedActions(scrubDroppedFamily_.Add({{"kind", "action"}})),
      scrubRunning(gauge(r, "msld_cache_scrub_running", "1 while an online scrub of the cache runs.")) {
  for (int c = 0; c < kStatusCodes; ++c)
    cpuExecutions_[c] = &executionsFamily_.Add({{"device", "cpu"}, {"code", kCodeNames[c]}});
  for (size_t m = 0; m < kMethods.size(); ++m)
    for (int c = 0; c < kStatusCodes; ++c)
      requestSeries_[m][c] = &requestsFamily_.Add({{"method", kMethods[m]}, {"code", kCodeNames[c]}});
  for (size_t i = 0; i < kAuthFailureLabels.size(); ++i)
    authFailures_[i] = &authFailuresFamily_.Add({{"reason", kAuthFailureLabels[i]}});
}

void ServiceMetrics::setWorkerSandboxed(const std::string &pool, bool sandboxed) {
  workerSandboxedFamily_.Add({{"pool", pool}}).Set(sandboxed ? 1 : 0);
}

void ServiceMetrics::mirrorCounter(prometheus::Counter &counter, double value) {
  double now = counter.Value();
  if (value > now)
    counter.Increment(value - now);
}

void ServiceMetrics::countAuthFailure(AuthFailure failure) {
  size_t i = size_t(failure);
  if (i >= 1 && i <= authFailures_.size())
    authFailures_[i - 1]->Increment();
}

void ServiceMetrics::countRequest(const char *method, int grpcStatusCode) {
  int code = codeIndex(grpcStatusCode);
  for (size_t m = 0; m < kMethods.size(); ++m)
    if (std::strcmp(method, kMethods[m]) == 0) {
      requestSeries_[m][code]->Increment();
      return;
    }
  // Not one of kMethods: Family::Add returns the existing series (under its lock).
  requestsFamily_.Add({{"method", method}, {"code", kCodeNames[code]}}).Increment();
}

std::string executionDeviceLabel(const std::string &device) {
  if (device.empty() || device == "cpu")
    return "cpu";
  if (device.size() <= 7 && device.rfind("cuda:", 0) == 0 && device.size() > 5 &&
      device.find_first_not_of("0123456789", 5) == std::string::npos)
    return device;
  return "other";
}

void ServiceMetrics::countExecution(const std::string &device, int grpcStatusCode) {
  int code = codeIndex(grpcStatusCode);
  if (device == "cpu")
    cpuExecutions_[code]->Increment();
  else
    executionsFamily_.Add({{"device", device}, {"code", kCodeNames[code]}}).Increment();
}

void ServiceMetrics::observeKernelTime(const std::string &device, double seconds) {
  if (device == "cpu")
    kernelTimeCpu.Observe(seconds);
  else // Family::Add returns the existing series (under its lock)
    kernelTimeFamily_.Add({{"device", device}}, kernelBuckets()).Observe(seconds);
}

void ServiceMetrics::observeCudaModuleLoad(int moduleSource, double seconds) {
  static const char *kSources[] = {"unknown", "loaded", "cubin", "ptx_jit"};
  const char *source = moduleSource >= 0 && moduleSource < 4 ? kSources[moduleSource] : "unknown";
  cudaModuleLoadFamily_.Add({{"source", source}}, latencyBuckets()).Observe(seconds);
}

// --- The /metrics endpoint -------------------------------------------------

namespace {

using Clock = std::chrono::steady_clock;

// The OpenSSL errors of this thread, oldest first ("" when none), and clears them.
std::string opensslErrors() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    out += (out.empty() ? "" : "; ") + std::string(buf);
  }
  return out.empty() ? "no OpenSSL error reported" : out;
}

// An SSL_CTX for the endpoint (TLS 1.2 or later); null with `error` naming
// the flag and the file that did not load. A client CA makes client
// certificates required and verified against it.
SSL_CTX *makeTlsContext(const MetricsTlsOptions &tls, std::string &error) {
  ERR_clear_error();
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (!ctx) {
    error = "cannot create a TLS context: " + opensslErrors();
    return nullptr;
  }
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  // An encrypted key fails to load rather than prompting on a terminal.
  SSL_CTX_set_default_passwd_cb(ctx, [](char *, int, int, void *) { return 0; });
  bool ok = false;
  if (tls.certFile.empty() || tls.keyFile.empty())
    error = "TLS of the metrics endpoint needs both --metrics-tls-cert and --metrics-tls-key";
  else if (SSL_CTX_use_certificate_chain_file(ctx, tls.certFile.c_str()) != 1)
    error = "--metrics-tls-cert " + tls.certFile + ": " + opensslErrors();
  else if (SSL_CTX_use_PrivateKey_file(ctx, tls.keyFile.c_str(), SSL_FILETYPE_PEM) != 1)
    error = "--metrics-tls-key " + tls.keyFile + ": " + opensslErrors();
  else if (SSL_CTX_check_private_key(ctx) != 1)
    error = "--metrics-tls-key " + tls.keyFile + " is not the key of --metrics-tls-cert " + tls.certFile;
  else if (!tls.clientCaFile.empty() &&
           SSL_CTX_load_verify_locations(ctx, tls.clientCaFile.c_str(), nullptr) != 1)
    error = "--metrics-tls-client-ca " + tls.clientCaFile + ": " + opensslErrors();
  else
    ok = true;
  if (ok && !tls.clientCaFile.empty()) {
    // The CA's names go to the client in the CertificateRequest.
    if (STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(tls.clientCaFile.c_str()))
      SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  ERR_clear_error();
  if (!ok) {
    SSL_CTX_free(ctx);
    return nullptr;
  }
  return ctx;
}

// The address of a socket (getpeername/getsockname) as httplib wants it.
void socketAddress(int sock, bool peer, std::string &ip, int &port) {
  sockaddr_storage addr{};
  socklen_t length = sizeof addr;
  ip.clear();
  port = 0;
  if ((peer ? ::getpeername : ::getsockname)(sock, reinterpret_cast<sockaddr *>(&addr), &length) != 0)
    return;
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    auto *in = reinterpret_cast<sockaddr_in *>(&addr);
    ::inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
    port = ntohs(in->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    auto *in6 = reinterpret_cast<sockaddr_in6 *>(&addr);
    ::inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof text);
    port = ntohs(in6->sin6_port);
  }
  ip = text;
}

// One connection, plain or TLS (`ssl` non-null), under MetricsServer's
// bounds: every wait for the socket ends after kIoTimeoutMs, at the
// connection's deadline or when the server stops (`stopFd` readable), and
// reads end after kMaxRequestBytes. The socket is non-blocking.
class BoundedStream final : public httplib::Stream {
public:
  BoundedStream(int sock, SSL *ssl, int stopFd, Clock::time_point deadline)
      : sock_(sock), ssl_(ssl), stopFd_(stopFd), deadline_(deadline) {}

  // The TLS handshake; false when it fails or times out.
  bool handshake() {
    for (;;) {
      ERR_clear_error();
      int r = SSL_accept(ssl_);
      if (r == 1)
        return true;
      if (!waitFor(SSL_get_error(ssl_, r)))
        return false;
    }
  }

  bool is_readable() const override {
    return bufPos_ < bufEnd_ || (ssl_ && SSL_pending(ssl_) > 0) || wait(POLLIN);
  }
  bool is_writable() const override { return wait(POLLOUT); }

  ssize_t read(char *ptr, size_t size) override {
    if (bufPos_ == bufEnd_) { // httplib reads a request a byte at a time: buffer it
      ssize_t n = fill();
      if (n <= 0)
        return n;
      bufPos_ = 0;
      bufEnd_ = size_t(n);
    }
    size_t n = std::min(size, bufEnd_ - bufPos_);
    std::memcpy(ptr, buf_ + bufPos_, n);
    bufPos_ += n;
    return ssize_t(n);
  }

  ssize_t write(const char *ptr, size_t size) override {
    if (Clock::now() >= deadline_)
      return -1;
    size = std::min(size, size_t(INT_MAX));
    for (;;) {
      if (ssl_) {
        ERR_clear_error();
        int r = SSL_write(ssl_, ptr, int(size));
        if (r > 0)
          return r;
        if (waitFor(SSL_get_error(ssl_, r)))
          continue; // OpenSSL wants the same arguments again
        return -1;
      }
      ssize_t n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
      if (n >= 0)
        return n;
      if (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && wait(POLLOUT)))
        continue;
      return -1;
    }
  }

  void get_remote_ip_and_port(std::string &ip, int &port) const override { socketAddress(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string &ip, int &port) const override { socketAddress(sock_, false, ip, port); }
  ::socket_t socket() const override { return sock_; }

private:
  // Reads what the socket (or TLS) has into buf_, at most what is left of
  // the request's bound: its size, 0 at the end, -1 on an error, a timeout
  // or past the bound.
  ssize_t fill() {
    if (readLeft_ == 0 || Clock::now() >= deadline_)
      return -1; // past the bound: httplib answers 400 (or drops a bare request line)
    size_t size = std::min(sizeof buf_, readLeft_);
    for (;;) {
      ssize_t n;
      if (ssl_) {
        ERR_clear_error();
        int r = SSL_read(ssl_, buf_, int(size));
        if (r <= 0) {
          int e = SSL_get_error(ssl_, r);
          if (e == SSL_ERROR_ZERO_RETURN)
            return 0;
          if (waitFor(e))
            continue;
          return -1;
        }
        n = r;
      } else {
        n = ::recv(sock_, buf_, size, 0);
        if (n < 0) {
          if (errno == EINTR || ((errno == EAGAIN || errno == EWOULDBLOCK) && wait(POLLIN)))
            continue;
          return -1;
        }
        if (n == 0)
          return 0;
      }
      readLeft_ -= size_t(n);
      return n;
    }
  }

  // After SSL_ERROR_WANT_READ/WRITE: waits for the socket; any other error: false.
  bool waitFor(int sslError) const {
    if (sslError == SSL_ERROR_WANT_READ)
      return wait(POLLIN);
    if (sslError == SSL_ERROR_WANT_WRITE)
      return wait(POLLOUT);
    return false;
  }

  // Waits until the socket is ready for `events` (or has failed: the next
  // call says how); false at the I/O timeout, the deadline, or a stop.
  bool wait(short events) const {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0)
        return false;
      pollfd fds[2] = {{sock_, events, 0}, {stopFd_, POLLIN, 0}};
      int n = ::poll(fds, 2, int(std::min<long long>(left, MetricsServer::kIoTimeoutMs)));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0 || fds[1].revents != 0)
        return false;
      return (fds[0].revents & (events | POLLERR | POLLHUP)) != 0;
    }
  }

  int sock_;
  SSL *ssl_;
  int stopFd_;
  Clock::time_point deadline_;
  size_t readLeft_ = MetricsServer::kMaxRequestBytes;
  char buf_[4096];
  size_t bufPos_ = 0, bufEnd_ = 0;
};

// httplib's task queue for the accepted connections: kThreads workers and at
// most kMaxWaiting connections waiting for one. When that many wait,
// enqueue (on httplib's accept thread) blocks, so msld stops accepting
// until a worker frees. Once the server stops, nothing blocks: the
// connections still waiting are closed at once by the workers.
class ConnectionQueue final : public httplib::TaskQueue {
public:
  explicit ConnectionQueue(const std::atomic<bool> &stopping) : stopping_(stopping) {
    for (int i = 0; i < MetricsServer::kThreads; ++i)
      threads_.emplace_back([this] { run(); });
  }
  ~ConnectionQueue() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::unique_lock lock(mu_);
    // In slices, to see a stop (it does not notify this queue).
    while (jobs_.size() >= size_t(MetricsServer::kMaxWaiting) && !stopping_)
      spaceFreed_.wait_for(lock, std::chrono::milliseconds(100));
    jobs_.push_back(std::move(fn));
    jobAdded_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mu_);
      if (shutDown_)
        return;
      shutDown_ = true;
    }
    jobAdded_.notify_all();
    for (auto &t : threads_)
      t.join();
  }

private:
  void run() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock lock(mu_);
        jobAdded_.wait(lock, [&] { return !jobs_.empty() || shutDown_; });
        if (jobs_.empty())
          return; // shut down, nothing left to close
        fn = std::move(jobs_.front());
        jobs_.pop_front();
      }
      spaceFreed_.notify_one();
      fn(); // serves the connection, or closes it when stopping
    }
  }

  const std::atomic<bool> &stopping_;
  std::mutex mu_;
  std::condition_variable jobAdded_, spaceFreed_;
  std::deque<std::function<void()>> jobs_;
  bool shutDown_ = false;
  std::vector<std::thread> threads_;
};

} // namespace

// The cpp-httplib server: httplib::Server accepts (bind, listen, its accept
// loop on `listener_`) and parses and routes each request; the connection
// itself is this class's (process_and_close_socket), a BoundedStream over
// the socket or over OpenSSL, so that both are bounded alike.
class MetricsServer::Http final : public httplib::Server {
public:
  // Takes `tls` (null: plain HTTP).
  Http(std::shared_ptr<MetricsRegistry> registry, SSL_CTX *tls) : tls_(tls) {
    stopFd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    new_task_queue = [this] { return new ConnectionQueue(stopping_); };
    // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which would let
    // a second msld bind the same port and silently take half the scrapes.
    set_socket_options([](::socket_t sock) {
      int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    set_payload_max_length(kMaxRequestBytes);
    set_pre_routing_handler([](const httplib::Request &req, httplib::Response &res) {
      if (req.method == "GET" && req.path == "/metrics")
        return HandlerResponse::Unhandled;
      res.status = 404;
      res.set_content("msld serves GET /metrics only\n", "text/plain; charset=utf-8");
      return HandlerResponse::Handled;
    });
    Get("/metrics", [registry = std::move(registry)](const httplib::Request &, httplib::Response &res) {
      res.set_content(registry->render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    set_exception_handler([](const httplib::Request &, httplib::Response &res, std::exception_ptr) {
      res.status = 500;
      res.set_content("msld: rendering the metrics failed\n", "text/plain; charset=utf-8");
    });
  }

  ~Http() override {
    stop();
    if (bound_ && !listened_ && svr_sock_ != INVALID_SOCKET) // bound, never served: httplib keeps it open
      ::close(svr_sock_.exchange(INVALID_SOCKET));
    if (stopFd_ >= 0)
      ::close(stopFd_);
    SSL_CTX_free(tls_);
  }

  // Binds; the port, or -1 with `error`.
  int bindTo(const std::string &host, int port, std::string &error) {
    if (stopFd_ < 0) {
      error = std::string("eventfd: ") + std::strerror(errno);
      return -1;
    }
    errno = 0;
    int bound = port == 0 ? bind_to_any_port(host) : bind_to_port(host, port) ? port : -1;
    if (bound <= 0) {
      error = "cannot bind " + (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
              std::to_string(port) + (errno != 0 ? std::string(": ") + std::strerror(errno) : "");
      return -1;
    }
    bound_ = true;
    return bound;
  }

  // Serves on a thread of its own; false if the accept loop did not start.
  bool serve() {
    listened_ = true;
    listener_ = std::thread([this] {
      listen_after_bind();
      listenEnded_ = true;
    });
    // httplib's stop() acts only on a server that is running: wait until it is.
    auto until = Clock::now() + std::chrono::seconds(10);
    while (!is_running() && !listenEnded_ && Clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return is_running();
  }

  // Ends the connections in flight and the accept loop; joins every thread.
  void stop() {
    stopping_ = true;
    if (stopFd_ >= 0) {
      uint64_t one = 1;
      [[maybe_unused]] ssize_t n = ::write(stopFd_, &one, sizeof one);
    }
    if (listener_.joinable()) {
      auto until = Clock::now() + std::chrono::seconds(10);
      while (!listenEnded_ && !is_running() && Clock::now() < until) // started, not yet running: see serve()
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      httplib::Server::stop();
      listener_.join();
    }
  }

private:
  // One request per connection, then close (called on a ConnectionQueue worker).
  bool process_and_close_socket(::socket_t sock) override {
    bool ok = !stopping_;
    int flags = ::fcntl(sock, F_GETFL);
    ok = ok && flags >= 0 && ::fcntl(sock, F_SETFL, flags | O_NONBLOCK) == 0;
    SSL *ssl = nullptr;
    bool handshaken = false;
    if (ok && tls_) {
      ssl = SSL_new(tls_);
      ok = ssl && SSL_set_fd(ssl, sock) == 1;
    }
    BoundedStream stream(sock, ssl, stopFd_, Clock::now() + std::chrono::milliseconds(kConnectionTimeoutMs));
    if (ok && ssl)
      ok = handshaken = stream.handshake();
    if (ok) {
      bool closed = false;
      ok = process_request(stream, /*close_connection=*/true, closed, nullptr);
    }
    if (ssl) {
      if (handshaken)
        SSL_shutdown(ssl); // close_notify, not waiting for the client's
      SSL_free(ssl);
      ERR_clear_error(); // a failed handshake leaves errors on this thread
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }

  SSL_CTX *tls_;
  int stopFd_ = -1; // readable once stopping: ends every wait of a connection
  std::atomic<bool> stopping_{false};
  std::atomic<bool> listenEnded_{false};
  bool bound_ = false, listened_ = false;
  std::thread listener_;
};

MetricsServer::MetricsServer(std::shared_ptr<MetricsRegistry> registry, MetricsTlsOptions tls)
    : registry_(std::move(registry)), tls_(std::move(tls)) {}

MetricsServer::~MetricsServer() { stop(); }

int MetricsServer::start(const std::string &host, int port, std::string *error) {
  stop();
  std::string why;
  auto fail = [&] {
    if (error)
      *error = why;
    http_.reset();
    return -1;
  };
  SSL_CTX *ctx = nullptr;
  if (tls_.enabled() || !tls_.clientCaFile.empty()) {
    if (!(ctx = makeTlsContext(tls_, why)))
      return fail();
    // OpenSSL writes to the socket with write(2): a scraper that hangs up
    // must not kill msld (its worker pipes need the same, WorkerPool.cpp).
    ::signal(SIGPIPE, SIG_IGN);
  }
  http_ = std::make_unique<Http>(registry_, ctx);
  std::string address = host.empty() ? "0.0.0.0" : host;
  if (address.size() > 2 && address.front() == '[' && address.back() == ']')
    address = address.substr(1, address.size() - 2); // [V6]: getaddrinfo wants it bare
  int bound = http_->bindTo(address, port, why);
  if (bound < 0)
    return fail();
  if (!http_->serve()) {
    why = "the metrics endpoint's accept loop did not start";
    return fail();
  }
  return bound;
}

void MetricsServer::stop() {
  if (http_)
    http_->stop();
  http_.reset();
}

} // namespace msl::service
