#include "AdminService.h"

#include "Metrics.h"

#include <chrono>

namespace msl::service {

AdminService::AdminService(cache::ContentStore &store, ServiceMetrics *metrics, std::function<void()> onScrubbed)
    : store_(store), metrics_(metrics), onScrubbed_(std::move(onScrubbed)) {}

AdminService::~AdminService() { shutdown(); }

bool AdminService::scrubRunning() const {
  std::lock_guard lock(mu_);
  return running_;
}

void AdminService::scrub(const msl::v1::ScrubRequest &request, std::shared_ptr<std::atomic<bool>> cancel,
                         std::function<void(ScrubReply)> done) {
  std::thread previous;
  grpc::Status refused;
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      refused = grpc::Status(grpc::StatusCode::UNAVAILABLE, "msld is shutting down; the scrub did not start");
    } else if (running_) {
      refused = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION,
                             "a scrub is already running (one at a time); try again when it has finished");
    } else {
      running_ = true;
      cancel_ = cancel;
      if (metrics_)
        metrics_->scrubRunning.Set(1);
      // The last scrub's thread has cleared running_ and at most still
      // answers its caller: joined below, outside the lock.
      previous = std::move(thread_);
      thread_ = std::thread([this, request, cancel = std::move(cancel), done = std::move(done)]() mutable {
        run(std::move(request), std::move(cancel), std::move(done));
      });
    }
  }
  if (!refused.ok())
    done({refused, {}}); // not moved: only the started branch takes it
  if (previous.joinable())
    previous.join();
}

void AdminService::run(msl::v1::ScrubRequest request, std::shared_ptr<std::atomic<bool>> cancel,
                       std::function<void(ScrubReply)> done) {
  const auto start = std::chrono::steady_clock::now();
  cache::ScrubOptions options;
  options.drop_corrupt = !request.dry_run();
  options.cancel = cancel.get();
  cache::ScrubReport report = store_.scrub(options);
  cache::StoreStats stats = store_.stats();

  ScrubReply reply;
  msl::v1::ScrubResponse &r = reply.response;
  r.set_clean(report.clean());
  r.set_complete(report.status.isOk());
  if (!report.status.isOk())
    r.set_error(report.status.toString());
  r.set_blobs_checked(report.blobs_checked);
  r.set_bytes_checked(report.bytes_checked);
  r.set_corrupt_blobs(report.corrupt_blobs);
  r.set_entries_checked(report.entries_checked);
  r.set_corrupt_entries(report.corrupt_entries);
  r.set_entries_missing_blobs(report.entries_missing_blobs);
  r.set_index_repairs(report.index_repairs);
  r.set_blobs(stats.blob_count);
  r.set_blob_bytes(stats.total_bytes);
  r.set_action_entries(stats.action_entries);
  r.set_duration_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  r.set_report(report.toString());

  if (metrics_) {
    ServiceMetrics &m = *metrics_;
    (!report.status.isOk() ? m.scrubsIncomplete : report.clean() ? m.scrubsClean : m.scrubsCorrupt).Increment();
    m.scrubBlobsChecked.Increment(double(report.blobs_checked));
    m.scrubBytesChecked.Increment(double(report.bytes_checked));
    m.scrubEntriesChecked.Increment(double(report.entries_checked));
    if (options.drop_corrupt) {
      m.scrubDroppedBlobs.Increment(double(report.corrupt_blobs));
      m.scrubDroppedActions.Increment(double(report.corrupt_entries + report.entries_missing_blobs));
    }
  }
  if (onScrubbed_)
    onScrubbed_();

  bool shuttingDown;
  {
    // Cleared before the answer, so that a client that got it may start
    // the next scrub at once.
    std::lock_guard lock(mu_);
    running_ = false;
    cancel_.reset();
    shuttingDown = stopped_;
    if (metrics_)
      metrics_->scrubRunning.Set(0);
  }
  if (report.status.code() == cache::Status::Code::Cancelled) {
    std::string checked = " after " + std::to_string(report.blobs_checked) + " blobs and " +
                          std::to_string(report.entries_checked) + " action entries";
    reply.status = shuttingDown
                       ? grpc::Status(grpc::StatusCode::UNAVAILABLE, "msld is shutting down: the scrub stopped" + checked)
                       : grpc::Status(grpc::StatusCode::CANCELLED,
                                      "the client cancelled the scrub or its deadline passed: it stopped" + checked);
  }
  done(std::move(reply));
}

void AdminService::shutdown() {
  std::thread last;
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
    if (cancel_)
      *cancel_ = true;
    last = std::move(thread_);
  }
  if (last.joinable())
    last.join();
}

} // namespace msl::service
