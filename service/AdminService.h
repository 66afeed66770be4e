//===- AdminService.h - msld: operations on the running daemon ------------===//
//
// The logic of msl.v1.Admin (proto/msl/v1/admin.proto), apart from gRPC's
// plumbing (Server.cpp): Scrub verifies the live store
// (cache::ContentStore::scrub) while msld serves.
//
// A scrub reads the whole store, minutes on a large one, so it runs on a
// thread of its own rather than on one of gRPC's callback threads, and one
// at a time: a second request while one runs is refused at once
// (FAILED_PRECONDITION), so no number of Scrub calls can start more than one
// full read of the store. The store itself takes no lock across the scrub
// that its writers would wait on (cache/README.md, "Scrub").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/cache/ContentStore.h"
#include "msl/v1/admin.pb.h"

#include <grpcpp/support/status.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

namespace msl::service {

struct ServiceMetrics;

struct ScrubReply {
  grpc::Status status;
  msl::v1::ScrubResponse response;
};

class AdminService {
public:
  /// `metrics` may be null (no metrics); `onScrubbed` runs on the scrub's
  /// thread after each scrub (msld mirrors the corruption the store counted
  /// into msld_cas_corrupt_blobs_total).
  AdminService(cache::ContentStore &store, ServiceMetrics *metrics, std::function<void()> onScrubbed = {});
  ~AdminService();
  AdminService(const AdminService &) = delete;
  AdminService &operator=(const AdminService &) = delete;

  /// Starts a scrub of the store on the scrub thread, which calls `done`
  /// with its report when it ends: OK with the counts (also when a read
  /// error stopped it: complete = false), CANCELLED when `cancel` was set
  /// (the client went away), UNAVAILABLE when msld shut down meanwhile.
  /// When a scrub is running already, or msld is shutting down, `done` is
  /// called at once on this thread with FAILED_PRECONDITION / UNAVAILABLE.
  /// `cancel` may be set from any thread at any time.
  void scrub(const msl::v1::ScrubRequest &request, std::shared_ptr<std::atomic<bool>> cancel,
             std::function<void(ScrubReply)> done);

  /// Whether a scrub is running now.
  bool scrubRunning() const;

  /// Stops a running scrub (its caller gets UNAVAILABLE), waits for its
  /// thread, and refuses new ones. Idempotent.
  void shutdown();

private:
  void run(msl::v1::ScrubRequest request, std::shared_ptr<std::atomic<bool>> cancel,
           std::function<void(ScrubReply)> done);

  cache::ContentStore &store_;
  ServiceMetrics *metrics_;
  std::function<void()> onScrubbed_;
  mutable std::mutex mu_;
  bool running_ = false, stopped_ = false;
  std::shared_ptr<std::atomic<bool>> cancel_; // the running scrub's
  std::thread thread_;                        // the last scrub's (joined before the next starts)
};

} // namespace msl::service
