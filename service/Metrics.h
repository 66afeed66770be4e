//===- Metrics.h - Prometheus metrics of the daemon -----------------------===//
//
// prometheus-cpp is not packaged for Debian 12, so this is a small registry
// of the three kinds msld needs (counter, gauge, histogram, each with
// labels) rendered in the Prometheus text format 0.0.4, and an HTTP endpoint
// (cpp-httplib) serving it at /metrics.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace httplib {
class Server;
}

namespace msl::service {

using Labels = std::map<std::string, std::string>;

/// One metric name with its help text and a series per label set.
class MetricFamily {
public:
  enum class Kind { Counter, Gauge, Histogram };
  MetricFamily(std::string name, std::string help, Kind kind, std::vector<double> buckets = {});

  /// Counter/gauge: add to the series for `labels`.
  void add(double value, const Labels &labels = {});
  /// Gauge: set the series for `labels`.
  void set(double value, const Labels &labels = {});
  /// Histogram: record one observation.
  void observe(double value, const Labels &labels = {});
  double value(const Labels &labels = {}) const;

  void render(std::string &out) const;

private:
  struct Series {
    double value = 0;               // counter, gauge
    std::vector<uint64_t> counts;   // histogram: per bucket (not cumulative)
    double sum = 0;
    uint64_t count = 0;
  };
  std::string name_, help_;
  Kind kind_;
  std::vector<double> buckets_;
  mutable std::mutex mu_;
  std::map<Labels, Series> series_;
};

class MetricsRegistry {
public:
  MetricFamily &counter(const std::string &name, const std::string &help);
  MetricFamily &gauge(const std::string &name, const std::string &help);
  MetricFamily &histogram(const std::string &name, const std::string &help,
                          std::vector<double> buckets);
  /// Called before each render, to refresh gauges read from elsewhere.
  void onCollect(std::function<void()> refresh);
  std::string render();

private:
  MetricFamily &add(std::unique_ptr<MetricFamily> family);
  std::mutex mu_;
  std::vector<std::unique_ptr<MetricFamily>> families_;
  std::vector<std::function<void()>> refreshers_;
};

/// The daemon's metrics, by name.
struct ServiceMetrics {
  explicit ServiceMetrics(MetricsRegistry &registry);
  MetricFamily &requests;          // msld_requests_total{method,code}
  MetricFamily &compileLatency;    // msld_compile_duration_seconds{cache}
  MetricFamily &actionCacheHits;   // msld_action_cache_hits_total
  MetricFamily &actionCacheMisses; // msld_action_cache_misses_total
  MetricFamily &casBytes;          // msld_cas_bytes
  MetricFamily &casBlobs;          // msld_cas_blobs
  MetricFamily &corruptBlobs;      // msld_cas_corrupt_blobs_total
  MetricFamily &workerCrashes;     // msld_worker_crashes_total
  MetricFamily &workerTimeouts;    // msld_worker_timeouts_total
  MetricFamily &compilesInFlight;  // msld_compiles_in_flight
  MetricFamily &compilesShared;    // msld_compiles_deduplicated_total
};

/// Serves a registry at http://HOST:PORT/metrics on its own thread.
class MetricsServer {
public:
  MetricsServer(MetricsRegistry &registry);
  ~MetricsServer();
  /// Binds (port 0 picks a free one); returns the port, or -1.
  int start(const std::string &host, int port);
  void stop();

private:
  MetricsRegistry &registry_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
};

} // namespace msl::service
