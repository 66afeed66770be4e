//===- CompileService.h - The logic of the Compiler and CAS services ------===//
//
// Request handling without a network: validation, the action cache, the
// content-addressed store, deduplication of identical concurrent compiles,
// a bounded queue served fairly across clients, and dispatch to the worker
// pool. The gRPC classes in Server.cpp only adapt.
//
// A compile that misses the cache is queued and answered later, from a
// dispatcher thread: no server thread waits for a worker. A caller that goes
// away (cancelled, deadline passed) is answered at once, and when no caller
// is left for a compile it is taken off the queue or its worker is killed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "FairQueue.h"
#include "Metrics.h"
#include "WorkerPool.h"
#include "msl/cache/ActionCache.h"
#include "msl/cache/ContentStore.h"
#include "msl/compiler/RequestChecks.h"
#include "msl/v1/cas.pb.h"
#include "msl/v1/compiler.pb.h"

#include <functional>
#include <grpcpp/support/status.h>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace msl::service {

struct CompileServiceOptions {
  /// An artifact up to this size travels inline in CompileResponse (all of
  /// them are in the store too). 1 MiB.
  size_t inlineArtifactBytes = 1 << 20;
  /// All inline artifacts of one response together. 8 MiB.
  size_t inlineResponseBytes = 8 << 20;
  /// Blob bytes in one BatchReadBlobs response; blobs past it are answered
  /// RESOURCE_EXHAUSTED per blob, to be read with Read. 16 MiB.
  size_t maxBatchReadBytes = 16 << 20;
  /// Digests in one FindMissingBlobs, BatchReadBlobs or BatchUpdateBlobs. 10000.
  size_t maxBatchDigests = 10000;
  /// Sources and headers of one compile together (inline or by digest). 64 MiB.
  int64_t maxCompileInputBytes = 64 << 20;
  /// Largest blob the store takes. 256 MiB.
  int64_t maxBlobBytes = 256 << 20;
  /// Bytes per message of a Read stream. 1 MiB.
  size_t readChunkBytes = 1 << 20;
  /// Compiles waiting for a worker, in all and per client.
  FairQueueOptions queue;
  /// What one compile request may contain (paths, options, constants).
  compiler::RequestLimits requestLimits;
};

/// The answer to one Compile; `retryAfterMs` > 0 with RESOURCE_EXHAUSTED
/// when the queue is full (the client should retry after about that long).
struct CompileReply {
  CompileReply() = default;
  CompileReply(grpc::Status s) : status(std::move(s)) {} // an error
  grpc::Status status;
  msl::v1::CompileResponse response;
  int64_t retryAfterMs = 0;
};

class CompileService {
public:
  using Done = std::function<void(CompileReply)>;
  /// A compile a caller waits for; pass it to cancel().
  class Call;

  CompileService(cache::ContentStore &store, WorkerPool &workers, ServiceMetrics &metrics,
                 int dispatchers, CompileServiceOptions options = {});
  ~CompileService();

  /// Answers `request` through `done`, exactly once, from this thread (a
  /// cache hit, a bad request) or later from a dispatcher. `client` names
  /// the caller for fair queueing.
  std::shared_ptr<Call> compile(const msl::v1::CompileRequest &request, const std::string &client,
                                Done done);
  /// The caller is gone: `done` is called with CANCELLED now (unless it was
  /// called already), and a compile no caller waits for any more stops.
  void cancel(const std::shared_ptr<Call> &call);
  /// compile() for callers that can wait (tests, tools).
  CompileReply compileAndWait(const msl::v1::CompileRequest &request, const std::string &client);

  /// Answers what is queued UNAVAILABLE, waits for running compiles, stops
  /// the dispatchers. Idempotent.
  void shutdown();

  grpc::Status findMissingBlobs(const msl::v1::FindMissingBlobsRequest &request,
                                msl::v1::FindMissingBlobsResponse &response);
  grpc::Status batchUpdateBlobs(const msl::v1::BatchUpdateBlobsRequest &request,
                                msl::v1::BatchUpdateBlobsResponse &response);
  grpc::Status batchReadBlobs(const msl::v1::BatchReadBlobsRequest &request,
                              msl::v1::BatchReadBlobsResponse &response);
  /// Read: the verified blob and the range [begin, end) of it to stream,
  /// in chunks of readChunkBytes().
  grpc::Status readBlob(const msl::v1::ReadBlobRequest &request, std::string &blob, size_t &begin,
                        size_t &end);
  size_t readChunkBytes() const { return options_.readChunkBytes; }

  /// Mirrors the corruption the store has counted (reads, scrubs) into
  /// msld_cas_corrupt_blobs_total; msld's online scrub calls it when done.
  void countCorruption();

private:
  struct Flight;
  /// Validates the request and builds the worker's job and the action key.
  grpc::Status prepare(const msl::v1::CompileRequest &request, msl::internal::WorkerRequest &job,
                       std::string &actionKey);
  void dispatch();
  CompileReply runWorker(Flight &flight);
  /// The cached result for `key`, if it and every artifact it names are intact.
  std::optional<msl::v1::CompileResponse> lookup(const std::string &key);
  void inlineSmallArtifacts(msl::v1::CompileResponse &response);
  int64_t retryHintMs() const;

  cache::ContentStore &store_;
  WorkerPool &workers_;
  ServiceMetrics &metrics_;
  CompileServiceOptions options_;
  FairQueue<Flight> queue_;
  const int dispatcherCount_;
  std::mutex mu_; // guards inFlight_, the flights' waiters, corruptionSeen_
  std::map<std::string, std::shared_ptr<Flight>> inFlight_;
  uint64_t corruptionSeen_ = 0;
  std::atomic<int64_t> averageCompileMs_{100};
  std::vector<std::thread> dispatchers_;
  bool stopped_ = false;
};

} // namespace msl::service
