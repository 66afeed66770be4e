//===- CompileService.h - The logic of the Compiler and CAS services ------===//
//
// Request handling without a network: validation, the action cache, the
// content-addressed store, deduplication of identical concurrent compiles and
// dispatch to the worker pool. The gRPC classes in Server.cpp only adapt.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Metrics.h"
#include "WorkerPool.h"
#include "msl/cache/ActionCache.h"
#include "msl/cache/ContentStore.h"
#include "msl/v1/cas.pb.h"
#include "msl/v1/compiler.pb.h"

#include <future>
#include <grpcpp/support/status.h>
#include <map>
#include <mutex>
#include <optional>

namespace msl::service {

struct CompileServiceOptions {
  /// Artifacts up to this size travel inline in CompileResponse (all of
  /// them are in the store too). 1 MiB.
  size_t inlineArtifactBytes = 1 << 20;
};

class CompileService {
public:
  CompileService(cache::ContentStore &store, WorkerPool &workers, ServiceMetrics &metrics,
                 CompileServiceOptions options = {});

  grpc::Status compile(const msl::v1::CompileRequest &request, msl::v1::CompileResponse &response);

  grpc::Status findMissingBlobs(const msl::v1::FindMissingBlobsRequest &request,
                                msl::v1::FindMissingBlobsResponse &response);
  grpc::Status batchUpdateBlobs(const msl::v1::BatchUpdateBlobsRequest &request,
                                msl::v1::BatchUpdateBlobsResponse &response);
  grpc::Status batchReadBlobs(const msl::v1::BatchReadBlobsRequest &request,
                              msl::v1::BatchReadBlobsResponse &response);

private:
  struct Result {
    grpc::Status status;
    msl::v1::CompileResponse response; // without inline data or cache_hit
  };
  /// Compiles for `key` unless an identical compile is already running, in
  /// which case it waits for that one's result.
  Result compileOnce(const std::string &key, const msl::internal::WorkerRequest &job);
  Result runWorker(const std::string &key, const msl::internal::WorkerRequest &job);
  /// The cached result for `key`, if it and every artifact it names are intact.
  std::optional<msl::v1::CompileResponse> lookup(const std::string &key);
  void inlineSmallArtifacts(msl::v1::CompileResponse &response);
  void countCorruption();

  cache::ContentStore &store_;
  WorkerPool &workers_;
  ServiceMetrics &metrics_;
  CompileServiceOptions options_;
  std::mutex inFlightMu_;
  std::map<std::string, std::shared_future<Result>> inFlight_;
  uint64_t corruptionSeen_ = 0;
};

} // namespace msl::service
