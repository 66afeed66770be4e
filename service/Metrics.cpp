#include "Metrics.h"

#include <httplib.h>

#include <cmath>
#include <sstream>

namespace msl::service {
namespace {

std::string escapeLabel(const std::string &v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string formatLabels(const Labels &labels, const std::string &extraKey = "",
                         const std::string &extraValue = "") {
  if (labels.empty() && extraKey.empty())
    return "";
  std::string out = "{";
  bool first = true;
  for (const auto &[k, v] : labels) {
    out += (first ? "" : ",") + k + "=\"" + escapeLabel(v) + "\"";
    first = false;
  }
  if (!extraKey.empty())
    out += (first ? "" : ",") + extraKey + "=\"" + extraValue + "\"";
  return out + "}";
}

std::string formatNumber(double v) {
  if (std::isinf(v))
    return v > 0 ? "+Inf" : "-Inf";
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

} // namespace

MetricFamily::MetricFamily(std::string name, std::string help, Kind kind,
                           std::vector<double> buckets)
    : name_(std::move(name)), help_(std::move(help)), kind_(kind), buckets_(std::move(buckets)) {}

void MetricFamily::add(double value, const Labels &labels) {
  std::lock_guard lock(mu_);
  series_[labels].value += value;
}

void MetricFamily::set(double value, const Labels &labels) {
  std::lock_guard lock(mu_);
  series_[labels].value = value;
}

void MetricFamily::observe(double value, const Labels &labels) {
  std::lock_guard lock(mu_);
  Series &s = series_[labels];
  s.counts.resize(buckets_.size() + 1);
  size_t i = 0;
  while (i < buckets_.size() && value > buckets_[i])
    ++i;
  ++s.counts[i];
  s.sum += value;
  ++s.count;
}

double MetricFamily::value(const Labels &labels) const {
  std::lock_guard lock(mu_);
  auto it = series_.find(labels);
  if (it == series_.end())
    return 0;
  return kind_ == Kind::Histogram ? double(it->second.count) : it->second.value;
}

void MetricFamily::render(std::string &out) const {
  static const char *kTypes[] = {"counter", "gauge", "histogram"};
  out += "# HELP " + name_ + " " + help_ + "\n";
  out += "# TYPE " + name_ + " " + kTypes[int(kind_)] + "\n";
  std::lock_guard lock(mu_);
  if (series_.empty() && kind_ != Kind::Histogram) {
    out += name_ + " 0\n"; // a scraper sees the metric before its first event
    return;
  }
  for (const auto &[labels, s] : series_) {
    if (kind_ != Kind::Histogram) {
      out += name_ + formatLabels(labels) + " " + formatNumber(s.value) + "\n";
      continue;
    }
    uint64_t cumulative = 0;
    for (size_t i = 0; i <= buckets_.size(); ++i) {
      cumulative += i < s.counts.size() ? s.counts[i] : 0;
      std::string le = i < buckets_.size() ? formatNumber(buckets_[i]) : "+Inf";
      out += name_ + "_bucket" + formatLabels(labels, "le", le) + " " + std::to_string(cumulative) + "\n";
    }
    out += name_ + "_sum" + formatLabels(labels) + " " + formatNumber(s.sum) + "\n";
    out += name_ + "_count" + formatLabels(labels) + " " + std::to_string(s.count) + "\n";
  }
}

MetricFamily &MetricsRegistry::add(std::unique_ptr<MetricFamily> family) {
  std::lock_guard lock(mu_);
  families_.push_back(std::move(family));
  return *families_.back();
}

MetricFamily &MetricsRegistry::counter(const std::string &name, const std::string &help) {
  return add(std::make_unique<MetricFamily>(name, help, MetricFamily::Kind::Counter));
}

MetricFamily &MetricsRegistry::gauge(const std::string &name, const std::string &help) {
  return add(std::make_unique<MetricFamily>(name, help, MetricFamily::Kind::Gauge));
}

MetricFamily &MetricsRegistry::histogram(const std::string &name, const std::string &help,
                                         std::vector<double> buckets) {
  return add(std::make_unique<MetricFamily>(name, help, MetricFamily::Kind::Histogram,
                                            std::move(buckets)));
}

void MetricsRegistry::onCollect(std::function<void()> refresh) {
  std::lock_guard lock(mu_);
  refreshers_.push_back(std::move(refresh));
}

std::string MetricsRegistry::render() {
  std::lock_guard lock(mu_);
  for (auto &r : refreshers_)
    r();
  std::string out;
  for (const auto &f : families_)
    f->render(out);
  return out;
}

ServiceMetrics::ServiceMetrics(MetricsRegistry &r)
    : requests(r.counter("msld_requests_total", "RPCs handled, by method and status code.")),
      compileLatency(r.histogram("msld_compile_duration_seconds",
                                 "Compile RPC latency, by cache outcome (hit or miss).",
                                 {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                  1, 2.5, 5, 10, 30, 60})),
      actionCacheHits(r.counter("msld_action_cache_hits_total",
                                "Compiles answered from the action cache.")),
      actionCacheMisses(r.counter("msld_action_cache_misses_total",
                                  "Compiles not in the action cache.")),
      casBytes(r.gauge("msld_cas_bytes", "Bytes of blobs in the content-addressed store.")),
      casBlobs(r.gauge("msld_cas_blobs", "Blobs in the content-addressed store.")),
      corruptBlobs(r.counter("msld_cas_corrupt_blobs_total",
                             "Stored blobs or action results found corrupt (and dropped).")),
      workerCrashes(r.counter("msld_worker_crashes_total", "Compile workers that died mid-request.")),
      workerTimeouts(r.counter("msld_worker_timeouts_total",
                               "Compiles killed for passing their time limit.")),
      compilesInFlight(r.gauge("msld_compiles_in_flight", "Compiles running in workers now.")),
      compilesShared(r.counter("msld_compiles_deduplicated_total",
                               "Compile requests that waited for an identical compile in flight.")) {}

MetricsServer::MetricsServer(MetricsRegistry &registry)
    : registry_(registry), server_(std::make_unique<httplib::Server>()) {
  server_->Get("/metrics", [this](const httplib::Request &, httplib::Response &res) {
    res.set_content(registry_.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
}

MetricsServer::~MetricsServer() { stop(); }

int MetricsServer::start(const std::string &host, int port) {
  int bound = port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (bound < 0)
    return -1;
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  return bound;
}

void MetricsServer::stop() {
  if (thread_.joinable()) {
    server_->stop();
    thread_.join();
  }
}

} // namespace msl::service
