#include "Metrics.h"

#include <prometheus/exposer.h>
#include <prometheus/text_serializer.h>

#include <cstring>
#include <exception>

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
      compileLatencyHit(compileLatencyFamily_.Add({{"cache", "hit"}}, latencyBuckets())),
      compileLatencyMiss(compileLatencyFamily_.Add({{"cache", "miss"}}, latencyBuckets())),
      actionCacheHits(counter(r, "msld_action_cache_hits_total",
                              "Compiles answered from the action cache.")),
      actionCacheMisses(counter(r, "msld_action_cache_misses_total",
                                "Compiles not in the action cache.")),
      casBytes(gauge(r, "msld_cas_bytes", "Bytes of blobs in the content-addressed store.")),
      casBlobs(gauge(r, "msld_cas_blobs", "Blobs in the content-addressed store.")),
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
                                     "before the result was stored.")) {
  for (int c = 0; c < kStatusCodes; ++c)
    cpuExecutions_[c] = &executionsFamily_.Add({{"device", "cpu"}, {"code", kCodeNames[c]}});
  for (size_t m = 0; m < kMethods.size(); ++m)
    for (int c = 0; c < kStatusCodes; ++c)
      requestSeries_[m][c] = &requestsFamily_.Add({{"method", kMethods[m]}, {"code", kCodeNames[c]}});
  for (size_t i = 0; i < kAuthFailureLabels.size(); ++i)
    authFailures_[i] = &authFailuresFamily_.Add({{"reason", kAuthFailureLabels[i]}});
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

MetricsServer::MetricsServer(std::shared_ptr<MetricsRegistry> registry)
    : registry_(std::move(registry)) {}

MetricsServer::~MetricsServer() { stop(); }

int MetricsServer::start(const std::string &host, int port, std::string *error) {
  stop();
  // civetweb's listening_ports: "HOST:PORT", "[V6]:PORT", or "PORT" for every address.
  std::string address = std::to_string(port);
  if (!host.empty())
    address = (host.find(':') != std::string::npos && host.front() != '[' ? "[" + host + "]" : host) +
              ":" + address;
  try {
    exposer_ = std::make_unique<prometheus::Exposer>(address);
  } catch (const std::exception &e) {
    if (error)
      *error = e.what();
    return -1;
  }
  exposer_->RegisterCollectable(registry_, "/metrics");
  std::vector<int> ports = exposer_->GetListeningPorts();
  if (ports.empty() || ports.front() <= 0) {
    if (error)
      *error = "the metrics endpoint reports no listening port";
    exposer_.reset();
    return -1;
  }
  return ports.front();
}

void MetricsServer::stop() { exposer_.reset(); }

} // namespace msl::service
