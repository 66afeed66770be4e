//===- Metrics.h - Prometheus metrics of the daemon -----------------------===//
//
// msld's metrics on prometheus-cpp (Debian 12: prometheus-cpp-dev 1.0.1): a
// prometheus::Registry holding every family, ServiceMetrics naming each
// series the daemon updates (created once at start-up and held by reference,
// so the hot path only does atomic increments), and MetricsServer serving
// the registry at http(s)://HOST:PORT/metrics in the Prometheus text format
// 0.0.4 with cpp-httplib (Debian 12: libcpp-httplib 0.11.4, linked against
// OpenSSL 3), plain HTTP or TLS (optionally verifying client certificates).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Auth.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace msl::service {

/// The `device` label of an Execute for the device its client named: "cpu",
/// "cuda:N", else "other" (a client names it, so only a bounded set of
/// values may become series).
std::string executionDeviceLabel(const std::string &device);

/// The daemon's registry, as a Collectable: each Collect (a scrape of
/// /metrics) first runs the refresh hooks (gauges read from elsewhere at
/// scrape time, e.g. the CAS size), then collects the prometheus::Registry.
class MetricsRegistry final : public prometheus::Collectable {
public:
  MetricsRegistry() : registry_(std::make_shared<prometheus::Registry>()) {}
  prometheus::Registry &registry() { return *registry_; }
  /// Called at the start of every Collect (on MetricsServer's threads).
  void onCollect(std::function<void()> refresh);
  std::vector<prometheus::MetricFamily> Collect() const override;
  /// The registry in the Prometheus text format (what /metrics serves).
  std::string render() const;

private:
  std::shared_ptr<prometheus::Registry> registry_;
  mutable std::mutex mu_; // guards refreshers_ (scrape path only)
  std::vector<std::function<void()>> refreshers_;
};

/// The daemon's metrics, by name: the one place naming them.
struct ServiceMetrics {
  explicit ServiceMetrics(MetricsRegistry &registry) : ServiceMetrics(registry.registry()) {}
  explicit ServiceMetrics(prometheus::Registry &registry);
  ServiceMetrics(const ServiceMetrics &) = delete;
  ServiceMetrics &operator=(const ServiceMetrics &) = delete;

  /// msld_requests_total{method,code}: one RPC finished with `grpcStatusCode`
  /// (grpc::StatusCode). Lock-free for the RPCs msld serves (series created
  /// up front); another method name is counted through the family (locked).
  void countRequest(const char *method, int grpcStatusCode);

private:
  // Families first: the series below are initialised from them.
  prometheus::Family<prometheus::Counter> &requestsFamily_;
  prometheus::Family<prometheus::Histogram> &compileLatencyFamily_;
  prometheus::Family<prometheus::Counter> &rejectedFamily_;
  prometheus::Family<prometheus::Counter> &executionsFamily_;
  prometheus::Family<prometheus::Counter> &executeBytesFamily_;
  prometheus::Family<prometheus::Histogram> &kernelTimeFamily_;
  prometheus::Family<prometheus::Histogram> &cudaModuleLoadFamily_;
  prometheus::Family<prometheus::Counter> &authFailuresFamily_;
  prometheus::Family<prometheus::Counter> &cacheEvictionsFamily_;
  prometheus::Family<prometheus::Counter> &cacheEvictedBytesFamily_;
  prometheus::Family<prometheus::Counter> &scrubsFamily_;
  prometheus::Family<prometheus::Counter> &scrubDroppedFamily_;
  prometheus::Family<prometheus::Gauge> &workerSandboxedFamily_;

public:
  prometheus::Histogram &compileLatencyHit;     // msld_compile_duration_seconds{cache="hit"}
  prometheus::Histogram &compileLatencyMiss;    // msld_compile_duration_seconds{cache="miss"}
  prometheus::Counter &actionCacheHits;         // msld_action_cache_hits_total
  prometheus::Counter &actionCacheMisses;       // msld_action_cache_misses_total
  prometheus::Gauge &casBytes;                  // msld_cas_bytes (set at scrape time)
  prometheus::Gauge &casBlobs;                  // msld_cas_blobs (set at scrape time)
  prometheus::Gauge &sharedRegions;             // msld_shared_regions (set at scrape time)
  prometheus::Gauge &sharedRegionBytes;         // msld_shared_region_bytes (set at scrape time)
  prometheus::Counter &corruptBlobs;            // msld_cas_corrupt_blobs_total
  prometheus::Counter &workerCrashes;           // msld_worker_crashes_total
  prometheus::Counter &workerTimeouts;          // msld_worker_timeouts_total
  prometheus::Counter &workerMemoryKills;       // msld_worker_memory_limit_kills_total
  prometheus::Counter &workerIdentityMismatches; // msld_worker_identity_mismatches_total
  prometheus::Gauge &compilesInFlight;          // msld_compiles_in_flight
  prometheus::Gauge &compileQueueDepth;         // msld_compile_queue_depth
  prometheus::Counter &compilesShared;          // msld_compiles_deduplicated_total
  prometheus::Counter &compilesCancelled;       // msld_compiles_cancelled_total
  prometheus::Counter &rejectedQueueFull;       // msld_requests_rejected_total{reason="queue_full"}
  prometheus::Counter &rejectedTooLarge;        // msld_requests_rejected_total{reason="too_large"}
  prometheus::Counter &rejectedInvalid;         // msld_requests_rejected_total{reason="invalid_argument"}
  prometheus::Histogram &kernelTimeCpu;         // msld_kernel_duration_seconds{device="cpu"}, per dispatch
  prometheus::Counter &execWorkerCrashes;       // msld_exec_worker_crashes_total
  prometheus::Counter &execWorkerTimeouts;      // msld_exec_worker_timeouts_total
  prometheus::Counter &kernelFaults;            // msld_kernel_faults_total
  prometheus::Counter &executeBytesIn;          // msld_execute_bytes_total{direction="in"}
  prometheus::Counter &executeBytesOut;         // msld_execute_bytes_total{direction="out"}
  // The bounded cache (msld --cache-max-bytes), all read from the store at
  // scrape time: see refreshCacheMetrics.
  prometheus::Gauge &cacheBytes;                // msld_cache_bytes: blobs + action entries
  prometheus::Gauge &cacheMaxBytes;             // msld_cache_max_bytes (0: unbounded)
  prometheus::Gauge &actionCacheEntries;        // msld_action_cache_entries
  prometheus::Counter &cacheEvictionsBlob;      // msld_cache_evictions_total{kind="blob"}
  prometheus::Counter &cacheEvictionsAction;    // msld_cache_evictions_total{kind="action"}
  prometheus::Counter &cacheEvictedBytesBlob;   // msld_cache_evicted_bytes_total{kind="blob"}
  prometheus::Counter &cacheEvictedBytesAction; // msld_cache_evicted_bytes_total{kind="action"}
  prometheus::Counter &actionCachePutsDropped;  // msld_action_cache_puts_dropped_total
  // Online scrubs (msl.v1.Admin/Scrub, AdminService.h).
  prometheus::Counter &scrubsClean;             // msld_cache_scrubs_total{result="clean"}
  prometheus::Counter &scrubsCorrupt;           // msld_cache_scrubs_total{result="corrupt"}: found (and dropped) some
  prometheus::Counter &scrubsIncomplete;        // msld_cache_scrubs_total{result="incomplete"}: read error, cancelled
  prometheus::Counter &scrubBlobsChecked;       // msld_cache_scrub_blobs_checked_total
  prometheus::Counter &scrubBytesChecked;       // msld_cache_scrub_bytes_checked_total
  prometheus::Counter &scrubEntriesChecked;     // msld_cache_scrub_entries_checked_total
  prometheus::Counter &scrubDroppedBlobs;       // msld_cache_scrub_dropped_total{kind="blob"}: corrupt
  prometheus::Counter &scrubDroppedActions;     // msld_cache_scrub_dropped_total{kind="action"}: corrupt or missing blobs
  prometheus::Gauge &scrubRunning;              // msld_cache_scrub_running: 1 while a scrub runs
  /// msld_worker_sandboxed{pool}: whether the workers of `pool` ("compile",
  /// "execution", "cuda") run in the sandbox (service/Sandbox.h), 1 or 0,
  /// set once at start for each pool msld runs (what it logs as "msld:
  /// sandbox: ..."); a pool it does not run (--exec-workers 0, no GPU) has
  /// no series, so that an alert on 0 means workers that run unsandboxed.
  void setWorkerSandboxed(const std::string &pool, bool sandboxed);
  /// Sets a counter that mirrors a monotonic count kept elsewhere (the
  /// store's, since open) to `value`.
  static void mirrorCounter(prometheus::Counter &counter, double value);
  /// msld_executions_total{device,code}: one Execute finished on `device`.
  void countExecution(const std::string &device, int grpcStatusCode);
  /// msld_kernel_duration_seconds{device}: one dispatch on `device` (one of
  /// the devices msld has: a bounded set).
  void observeKernelTime(const std::string &device, double seconds);
  /// msld_cuda_module_load_seconds{source}: how a CUDA worker made a kernel's
  /// module ready (msl.internal.ModuleSource: "loaded" already, "cubin"
  /// from msld's cubin cache, "ptx_jit" linked from the PTX).
  void observeCudaModuleLoad(int moduleSource, double seconds);

  /// The RPC names whose msld_requests_total series exist from start-up
  /// (add a new RPC here to keep its counting lock-free).
  static constexpr std::array<const char *, 5> kMethods = {
      "Compile", "FindMissingBlobs", "BatchUpdateBlobs", "BatchReadBlobs", "Read"};
  /// msld_auth_failures_total{reason}: a call refused by --auth-tokens /
  /// --auth-subjects (reason: kAuthFailureLabels, series from start-up).
  void countAuthFailure(AuthFailure failure);

  static constexpr int kStatusCodes = 17; // grpc::StatusCode OK (0) .. UNAUTHENTICATED (16)

private:
  std::array<std::array<prometheus::Counter *, kStatusCodes>, kMethods.size()> requestSeries_{};
  std::array<prometheus::Counter *, kStatusCodes> cpuExecutions_{};
  std::array<prometheus::Counter *, kAuthFailureLabels.size()> authFailures_{};
};

/// TLS of the metrics endpoint (msld --metrics-tls-*, README "Security"):
/// PEM files. Without a certificate and key the endpoint is plain HTTP.
struct MetricsTlsOptions {
  std::string certFile;     // --metrics-tls-cert: the endpoint's certificate chain; empty: plain HTTP
  std::string keyFile;      // --metrics-tls-key: its (unencrypted) private key
  std::string clientCaFile; // --metrics-tls-client-ca: require client certificates signed by it
  bool enabled() const { return !certFile.empty() || !keyFile.empty(); }
};

/// Serves a MetricsRegistry at http://HOST:PORT/metrics, or https:// with
/// MetricsTlsOptions, with cpp-httplib: GET /metrics only (anything else is
/// 404), one request per connection (Connection: close), Content-Type
/// `text/plain; version=0.0.4; charset=utf-8` (gzip when the scraper asks).
/// One code path for both: an httplib::Server whose connections (the socket,
/// or OpenSSL over it) are read and written under the bounds below, since
/// cpp-httplib 0.11 bounds neither a request's header lines nor their count.
class MetricsServer {
public:
  /// Connections served at once (worker threads; one more thread accepts).
  static constexpr int kThreads = 2;
  /// Accepted connections waiting for a worker; past it msld stops accepting
  /// until one frees (the kernel's listen backlog holds the next ones).
  static constexpr int kMaxWaiting = 16;
  /// A read or write (or TLS handshake step) that makes no progress for
  /// this long ends the connection.
  static constexpr int kIoTimeoutMs = 5000;
  /// A whole connection (TLS handshake, request, response) ends after this.
  static constexpr int kConnectionTimeoutMs = 10000;
  /// Bytes of a request (request line, headers, body) read at most; a
  /// longer one gets 400 and the connection is closed.
  static constexpr size_t kMaxRequestBytes = 16 << 10;

  explicit MetricsServer(std::shared_ptr<MetricsRegistry> registry, MetricsTlsOptions tls = {});
  ~MetricsServer();
  /// Binds HOST:PORT (HOST may be an IPv6 address, with or without
  /// brackets; empty: 0.0.0.0; port 0 picks a free one) and serves; returns
  /// the port, or -1 (`error` says why: a TLS file that does not load, an
  /// address that cannot be bound).
  int start(const std::string &host, int port, std::string *error = nullptr);
  /// Stops serving: connections in flight end at once, the threads are
  /// joined. Idempotent.
  void stop();

private:
  class Http; // the cpp-httplib server and its threads (Metrics.cpp)
  std::shared_ptr<MetricsRegistry> registry_;
  MetricsTlsOptions tls_;
  std::unique_ptr<Http> http_;
};

} // namespace msl::service
