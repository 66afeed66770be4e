#include "CompileService.h"

#include "DigestProto.h"

#include "msl/cache/ActionKey.h"
#include "msl/compiler/Options.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <set>

namespace msl::service {
namespace {

using grpc::Status;
using grpc::StatusCode;
using compiler::quoteForMessage;

Status invalid(std::string message) { return Status(StatusCode::INVALID_ARGUMENT, message); }

void setStatus(msl::v1::Status &out, StatusCode code, std::string message) {
  out.set_code(int(code));
  out.set_message(std::move(message));
}

const char *outputName(int kind) {
  switch (kind) {
  case msl::v1::LLVM_BITCODE:
    return "llvm-bc";
  case msl::v1::LLVM_IR:
    return "llvm-ir";
  case msl::v1::PTX:
    return "ptx";
  case msl::v1::REFLECTION:
    return "reflection";
  }
  return "?";
}

} // namespace

/// One caller waiting for a compile.
class CompileService::Call {
public:
  explicit Call(Done done) : done_(std::move(done)) {}
  /// Calls `done` unless it was called already; true if this call did.
  bool answer(CompileReply reply) {
    if (answered_.exchange(true))
      return false;
    done_(std::move(reply));
    return true;
  }
  std::shared_ptr<Flight> flight; // guarded by CompileService::mu_

private:
  Done done_;
  std::atomic<bool> answered_{false};
};

/// One compile (one action key) that callers wait for: queued, then running.
struct CompileService::Flight {
  std::string key;
  std::string client;
  msl::internal::WorkerRequest job;
  std::vector<std::shared_ptr<Call>> callers; // guarded by mu_
  bool running = false;                       // guarded by mu_
  bool cancelCounted = false;                 // guarded by mu_
  CancelFlag cancel{false};
};

CompileService::CompileService(cache::ContentStore &store, WorkerPool &workers,
                               ServiceMetrics &metrics, int dispatchers, CompileServiceOptions options)
    : store_(store), workers_(workers), metrics_(metrics), options_(options), queue_(options.queue),
      dispatcherCount_(std::max(1, dispatchers)) {
  // One dispatcher per worker: a dispatcher never waits for a worker, and a
  // queued compile waits in the fair queue, not in the pool.
  for (int i = 0; i < dispatcherCount_; ++i)
    dispatchers_.emplace_back([this] { dispatch(); });
}

CompileService::~CompileService() { shutdown(); }

void CompileService::shutdown() {
  {
    std::lock_guard lock(mu_);
    if (stopped_)
      return;
    stopped_ = true;
  }
  for (auto &flight : queue_.close()) {
    std::vector<std::shared_ptr<Call>> callers;
    {
      std::lock_guard lock(mu_);
      callers.swap(flight->callers);
      inFlight_.erase(flight->key);
    }
    for (auto &c : callers)
      c->answer({Status(StatusCode::UNAVAILABLE, "msld is shutting down; the compile did not start")});
  }
  metrics_.compileQueueDepth.Set(0);
  for (auto &t : dispatchers_)
    t.join();
  dispatchers_.clear();
}

void CompileService::countCorruption() {
  // The store counts corruption it finds; mirror the total into the metric.
  uint64_t total = store_.corruptBlobsFound() + store_.actionCache().corruptEntriesFound();
  std::lock_guard lock(mu_);
  if (total > corruptionSeen_) {
    metrics_.corruptBlobs.Increment(double(total - corruptionSeen_));
    corruptionSeen_ = total;
  }
}

Status CompileService::prepare(const msl::v1::CompileRequest &request,
                               msl::internal::WorkerRequest &job, std::string &actionKey) {
  const compiler::RequestLimits &limits = options_.requestLimits;
  cache::ActionKeyBuilder key;

  // Bounded before anything is read: counts, then the bytes the digests name.
  if (std::string e = compiler::checkRequestCounts(size_t(request.files_size()),
                                                   size_t(request.function_constants_size()), limits);
      !e.empty())
    return invalid(e);
  int64_t inputBytes = 0;
  auto countBytes = [&](const msl::v1::FileContent &c) {
    inputBytes += c.has_digest() ? std::max<int64_t>(0, c.digest().size_bytes()) : int64_t(c.inline_().size());
  };
  countBytes(request.main_source());
  for (const auto &file : request.files())
    countBytes(file.content());
  if (inputBytes > options_.maxCompileInputBytes)
    return Status(StatusCode::RESOURCE_EXHAUSTED,
                  "the compile's sources and headers total " + std::to_string(inputBytes) +
                      " bytes; at most " + std::to_string(options_.maxCompileInputBytes) +
                      " are allowed (msld --max-compile-input-bytes)");

  // The main source and every file: bytes for the worker, digests for the key.
  auto resolve = [&](const std::string &path, const msl::v1::FileContent &content,
                     std::string &bytes, cache::Digest &digest) -> Status {
    switch (content.content_case()) {
    case msl::v1::FileContent::kInline:
      bytes = content.inline_();
      digest = cache::Digest::of(bytes);
      return Status::OK;
    case msl::v1::FileContent::kDigest: {
      if (!isValidDigest(content.digest()))
        return invalid("the digest of '" + path + "' is malformed: hash must be 64 lowercase hex "
                       "characters of SHA-256 and size_bytes non-negative");
      digest = fromProto(content.digest());
      auto blob = store_.get(digest);
      countCorruption();
      if (!blob)
        return Status(StatusCode::FAILED_PRECONDITION,
                      "blob " + describe(content.digest()) + " for '" + path +
                          "' is not in the store: upload it with BatchUpdateBlobs first");
      bytes = blob.take();
      return Status::OK;
    }
    default:
      return invalid("no content for '" + path + "': set inline bytes or a digest");
    }
  };

  std::string mainPath = request.main_path().empty() ? "main.metal" : request.main_path();
  if (std::string e = compiler::checkRequestPath("main_path", mainPath, limits); !e.empty())
    return invalid(e);
  if (request.main_source().content_case() == msl::v1::FileContent::CONTENT_NOT_SET)
    return invalid("CompileRequest.main_source is required: the MSL source, inline or by digest");
  cache::Digest digest;
  job.set_main_path(mainPath);
  if (Status s = resolve(mainPath, request.main_source(), *job.mutable_main_source(), digest); !s.ok())
    return s;
  key.setMainSource(mainPath, digest);

  std::set<std::string> seen{mainPath};
  for (const auto &file : request.files()) {
    if (std::string e = compiler::checkRequestPath("file path", file.path(), limits); !e.empty())
      return invalid(e);
    if (!seen.insert(file.path()).second)
      return invalid("file '" + file.path() + "' is given twice (or is also the main source)");
    auto *f = job.add_files();
    f->set_path(file.path());
    if (Status s = resolve(file.path(), file.content(), *f->mutable_data(), digest); !s.ok())
      return s;
    key.addFile(file.path(), digest);
  }

  std::vector<std::string> options(request.options().begin(), request.options().end());
  std::string optionError;
  auto parsed = compiler::parseMetalOptions(options, optionError);
  if (!parsed)
    return invalid(optionError);
  // The worker compiles exactly the normalized options the key names.
  std::vector<std::string> normalized = parsed->normalized();
  key.setOptions(normalized);
  job.mutable_options()->Assign(normalized.begin(), normalized.end());

  const bool nvptx = request.target().arch() == msl::v1::Target::NVPTX64;
  std::string cpu = request.target().cpu();
  if (nvptx) {
    if (cpu.empty())
      cpu = "sm_90";
    if (std::string e = compiler::checkNvptxCpu(cpu); !e.empty())
      return invalid(e);
  } else if (!cpu.empty()) {
    return invalid("target cpu " + quoteForMessage(cpu) + " is only meaningful for NVPTX64");
  }
  *job.mutable_target() = request.target();
  job.mutable_target()->set_cpu(cpu);
  key.setTarget(nvptx ? "nvptx64" : "x86_64", cpu);

  std::set<int> outputs(request.outputs().begin(), request.outputs().end());
  if (outputs.empty())
    outputs = nvptx ? std::set<int>{msl::v1::PTX, msl::v1::REFLECTION}
                    : std::set<int>{msl::v1::LLVM_BITCODE, msl::v1::REFLECTION};
  std::vector<std::string> outputNames;
  for (int o : outputs) {
    if (!msl::v1::ArtifactKind_IsValid(o) || o == msl::v1::ARTIFACT_KIND_UNSPECIFIED)
      return invalid("unknown output kind " + std::to_string(o));
    if (o == msl::v1::PTX && !nvptx)
      return invalid("PTX output needs target NVPTX64");
    job.add_outputs(msl::v1::ArtifactKind(o));
    outputNames.push_back(outputName(o));
  }
  key.setOutputs(outputNames);
  std::map<std::string, std::string> constants;
  for (const auto &[k, v] : request.function_constants()) {
    if (std::string e = compiler::checkFunctionConstant(k, v, limits); !e.empty())
      return invalid(e);
    constants[k] = v;
  }
  job.mutable_function_constants()->insert(request.function_constants().begin(),
                                            request.function_constants().end());
  key.setFunctionConstants(std::move(constants));
  key.setCompilerIdentity(workers_.compilerIdentity());
  actionKey = key.build();
  return Status::OK;
}

std::shared_ptr<CompileService::Call> CompileService::compile(const msl::v1::CompileRequest &request,
                                                              const std::string &client, Done done) {
  auto call = std::make_shared<Call>(std::move(done));
  msl::internal::WorkerRequest job;
  std::string actionKey;
  if (Status s = prepare(request, job, actionKey); !s.ok()) {
    if (s.error_code() == StatusCode::INVALID_ARGUMENT)
      metrics_.rejectedInvalid.Increment();
    else if (s.error_code() == StatusCode::RESOURCE_EXHAUSTED)
      metrics_.rejectedTooLarge.Increment();
    call->answer({s});
    return call;
  }
  if (auto cached = lookup(actionKey)) {
    metrics_.actionCacheHits.Increment();
    CompileReply reply;
    reply.response = std::move(*cached);
    reply.response.set_cache_hit(true);
    inlineSmallArtifacts(reply.response);
    call->answer(std::move(reply));
    return call;
  }
  metrics_.actionCacheMisses.Increment();

  std::shared_ptr<Flight> flight;
  {
    std::lock_guard lock(mu_);
    if (stopped_) {
      call->answer({Status(StatusCode::UNAVAILABLE, "msld is shutting down")});
      return call;
    }
    if (auto it = inFlight_.find(actionKey); it != inFlight_.end()) {
      // An identical compile is queued or running: wait for its result.
      metrics_.compilesShared.Increment();
      it->second->callers.push_back(call);
      call->flight = it->second;
      return call;
    }
    flight = std::make_shared<Flight>();
    flight->key = actionKey;
    flight->client = client;
    flight->job = std::move(job);
    flight->callers.push_back(call);
    call->flight = flight;
    inFlight_.emplace(actionKey, flight);
  }
  auto pushed = queue_.push(client, flight);
  if (pushed == FairQueue<Flight>::Push::Ok) {
    metrics_.compileQueueDepth.Set(double(queue_.size()));
    return call;
  }
  // Full: refuse now (never wait), with a hint of when to retry.
  std::vector<std::shared_ptr<Call>> callers;
  {
    std::lock_guard lock(mu_);
    callers.swap(flight->callers);
    inFlight_.erase(actionKey);
  }
  metrics_.rejectedQueueFull.Increment();
  CompileReply reply;
  reply.retryAfterMs = retryHintMs();
  std::string why = pushed == FairQueue<Flight>::Push::ClientFull
                        ? "this client already has " + std::to_string(options_.queue.maxQueuedPerClient) +
                              " compiles waiting (msld --max-queued-per-client)"
                        : "the compile queue is full (" + std::to_string(options_.queue.maxQueued) +
                              " waiting; msld --max-queued-compiles)";
  reply.status = Status(StatusCode::RESOURCE_EXHAUSTED,
                        why + "; retry in about " + std::to_string(reply.retryAfterMs) + " ms");
  for (auto &c : callers)
    c->answer(reply);
  return call;
}

void CompileService::cancel(const std::shared_ptr<Call> &call) {
  std::shared_ptr<Flight> queued;
  {
    std::lock_guard lock(mu_);
    std::shared_ptr<Flight> flight = call->flight;
    if (flight) {
      auto &callers = flight->callers;
      callers.erase(std::remove(callers.begin(), callers.end(), call), callers.end());
      if (callers.empty() && !flight->cancelCounted) {
        // Nobody waits for this compile any more: stop it.
        if (auto it = inFlight_.find(flight->key); it != inFlight_.end() && it->second == flight)
          inFlight_.erase(it);
        if (flight->running) {
          flight->cancel = true; // the pool kills its worker
          flight->cancelCounted = true;
          metrics_.compilesCancelled.Increment();
        } else {
          queued = flight;
        }
      }
    }
  }
  if (queued && queue_.remove(queued->client, queued)) {
    metrics_.compileQueueDepth.Set(double(queue_.size()));
    std::lock_guard lock(mu_);
    queued->cancelCounted = true;
    metrics_.compilesCancelled.Increment();
  } // else a dispatcher took it and sees that no caller is left
  call->answer({Status(StatusCode::CANCELLED, "the client cancelled the compile or its deadline passed")});
}

CompileReply CompileService::compileAndWait(const msl::v1::CompileRequest &request,
                                            const std::string &client) {
  std::promise<CompileReply> promise;
  auto answer = promise.get_future();
  compile(request, client, [&](CompileReply r) { promise.set_value(std::move(r)); });
  return answer.get();
}

void CompileService::dispatch() {
  while (std::shared_ptr<Flight> flight = queue_.pop()) {
    metrics_.compileQueueDepth.Set(double(queue_.size()));
    {
      std::lock_guard lock(mu_);
      if (flight->callers.empty()) { // cancelled while it waited
        if (!flight->cancelCounted) {
          flight->cancelCounted = true;
          metrics_.compilesCancelled.Increment();
        }
        continue;
      }
      flight->running = true;
    }
    CompileReply reply = runWorker(*flight);
    std::vector<std::shared_ptr<Call>> callers;
    {
      std::lock_guard lock(mu_);
      callers.swap(flight->callers);
      if (auto it = inFlight_.find(flight->key); it != inFlight_.end() && it->second == flight)
        inFlight_.erase(it);
    }
    for (auto &c : callers)
      c->answer(reply);
  }
}

int64_t CompileService::retryHintMs() const {
  size_t waiting = queue_.size();
  size_t workers = size_t(dispatcherCount_);
  return std::max<int64_t>(100, averageCompileMs_.load() * int64_t(1 + waiting / workers));
}

std::optional<msl::v1::CompileResponse> CompileService::lookup(const std::string &key) {
  auto entry = store_.actionCache().get(key);
  countCorruption();
  if (!entry)
    return std::nullopt;
  msl::v1::CompileResponse response;
  if (!response.ParseFromString(*entry))
    return std::nullopt;
  // A result is only as good as its artifacts: all must be present.
  for (const auto &a : response.artifacts())
    if (!store_.contains(fromProto(a.digest())))
      return std::nullopt;
  return response;
}

void CompileService::inlineSmallArtifacts(msl::v1::CompileResponse &response) {
  // Bounded per artifact and per response; the rest is read by digest.
  size_t budget = options_.inlineResponseBytes;
  for (auto &a : *response.mutable_artifacts()) {
    size_t size = size_t(a.digest().size_bytes());
    if (size > options_.inlineArtifactBytes || size > budget)
      continue;
    auto blob = store_.get(fromProto(a.digest()));
    if (blob) {
      budget -= size;
      a.set_inline_data(blob.take());
    }
  }
  countCorruption();
}

CompileReply CompileService::runWorker(Flight &flight) {
  const auto &job = flight.job;
  metrics_.compilesInFlight.Increment();
  msl::internal::WorkerResponse w;
  WorkerPool::Outcome outcome = workers_.run(job, w, &flight.cancel);
  metrics_.compilesInFlight.Decrement();
  CompileReply result;
  const std::string what = "compiling '" + job.main_path() + "'";
  switch (outcome.kind) {
  case WorkerPool::Outcome::Kind::Ok:
    break;
  case WorkerPool::Outcome::Kind::Crashed:
  case WorkerPool::Outcome::Kind::Faulted:
    metrics_.workerCrashes.Increment();
    result.status = Status(StatusCode::INTERNAL, what + " crashed the compiler: " + outcome.detail +
                                                     "; the worker was replaced and nothing was cached");
    return result;
  case WorkerPool::Outcome::Kind::OutOfMemory:
    metrics_.workerMemoryKills.Increment();
    result.status = Status(StatusCode::RESOURCE_EXHAUSTED,
                           what + ": " + outcome.detail +
                               " (msld --compile-memory-mb); the worker was replaced and nothing was cached");
    return result;
  case WorkerPool::Outcome::Kind::TimedOut:
    metrics_.workerTimeouts.Increment();
    result.status = Status(StatusCode::DEADLINE_EXCEEDED, what + ": " + outcome.detail);
    return result;
  case WorkerPool::Outcome::Kind::TooLarge:
    metrics_.rejectedTooLarge.Increment();
    result.status = Status(StatusCode::RESOURCE_EXHAUSTED,
                           what + ": " + outcome.detail + " (msld --max-artifact-bytes); nothing was cached");
    return result;
  case WorkerPool::Outcome::Kind::Cancelled:
    result.status = Status(StatusCode::CANCELLED, what + ": " + outcome.detail);
    return result;
  case WorkerPool::Outcome::Kind::Unavailable:
    result.status = Status(StatusCode::UNAVAILABLE, outcome.detail);
    return result;
  }

  int64_t ms = w.compile_time_us() / 1000;
  averageCompileMs_ = (averageCompileMs_.load() * 7 + ms) / 8;
  msl::v1::CompileResponse &r = result.response;
  r.set_success(w.success());
  r.set_compile_time_us(w.compile_time_us());
  r.set_action_key(flight.key);
  *r.mutable_diagnostics() = w.diagnostics();
  for (const auto &a : w.artifacts()) {
    auto digest = store_.putBytes(a.data());
    if (!digest) {
      result.status = Status(StatusCode::INTERNAL, "storing an artifact failed: " +
                                                       digest.status().toString());
      return result;
    }
    auto *artifact = r.add_artifacts();
    artifact->set_kind(a.kind());
    toProto(*digest, *artifact->mutable_digest());
  }
  // Compiles are deterministic, failed ones included: cache both.
  if (auto s = store_.actionCache().put(flight.key, r.SerializeAsString()); !s.isOk())
    result.status = Status(StatusCode::INTERNAL, "storing the result failed: " + s.toString());
  r.set_cache_hit(false);
  inlineSmallArtifacts(r);
  return result;
}

Status CompileService::findMissingBlobs(const msl::v1::FindMissingBlobsRequest &request,
                                        msl::v1::FindMissingBlobsResponse &response) {
  if (size_t(request.blob_digests_size()) > options_.maxBatchDigests)
    return invalid("FindMissingBlobs names " + std::to_string(request.blob_digests_size()) +
                   " digests; at most " + std::to_string(options_.maxBatchDigests) + " per call");
  std::vector<cache::Digest> digests;
  for (const auto &d : request.blob_digests()) {
    if (!isValidDigest(d))
      return invalid("malformed digest " + describe(d) +
                     ": hash must be 64 lowercase hex characters of SHA-256");
    digests.push_back(fromProto(d));
  }
  for (const auto &d : store_.findMissing(digests))
    toProto(d, *response.add_missing_blob_digests());
  return Status::OK;
}

Status CompileService::batchUpdateBlobs(const msl::v1::BatchUpdateBlobsRequest &request,
                                        msl::v1::BatchUpdateBlobsResponse &response) {
  if (size_t(request.requests_size()) > options_.maxBatchDigests)
    return invalid("BatchUpdateBlobs carries " + std::to_string(request.requests_size()) +
                   " blobs; at most " + std::to_string(options_.maxBatchDigests) + " per call");
  for (const auto &r : request.requests()) {
    auto *out = response.add_responses();
    *out->mutable_digest() = r.digest();
    if (!isValidDigest(r.digest())) {
      setStatus(*out->mutable_status(), StatusCode::INVALID_ARGUMENT, "malformed digest " + describe(r.digest()));
      continue;
    }
    if (int64_t(r.data().size()) > options_.maxBlobBytes) {
      setStatus(*out->mutable_status(), StatusCode::RESOURCE_EXHAUSTED,
                "blob " + describe(r.digest()) + " is larger than the store's " +
                    std::to_string(options_.maxBlobBytes) + "-byte limit");
      continue;
    }
    auto s = store_.put(fromProto(r.digest()), r.data());
    if (!s.isOk()) {
      bool mismatch = s.code() == cache::Status::Code::InvalidArgument;
      setStatus(*out->mutable_status(), mismatch ? StatusCode::INVALID_ARGUMENT : StatusCode::INTERNAL,
                s.message());
    }
  }
  return Status::OK;
}

Status CompileService::batchReadBlobs(const msl::v1::BatchReadBlobsRequest &request,
                                      msl::v1::BatchReadBlobsResponse &response) {
  if (size_t(request.digests_size()) > options_.maxBatchDigests)
    return invalid("BatchReadBlobs names " + std::to_string(request.digests_size()) +
                   " digests; at most " + std::to_string(options_.maxBatchDigests) + " per call");
  // The response is bounded: a blob that would pass the budget is not read
  // (its digest says its size) but answered RESOURCE_EXHAUSTED, as REAPI does.
  size_t budget = options_.maxBatchReadBytes;
  for (const auto &d : request.digests()) {
    auto *out = response.add_responses();
    *out->mutable_digest() = d;
    if (!isValidDigest(d)) {
      setStatus(*out->mutable_status(), StatusCode::INVALID_ARGUMENT, "malformed digest " + describe(d));
      continue;
    }
    if (uint64_t(d.size_bytes()) > budget) {
      setStatus(*out->mutable_status(), StatusCode::RESOURCE_EXHAUSTED,
                "blob " + describe(d) + " does not fit in this response (" +
                    std::to_string(options_.maxBatchReadBytes) + " bytes per BatchReadBlobs): read it with Read");
      continue;
    }
    auto blob = store_.get(fromProto(d));
    if (blob) {
      budget -= blob->size();
      out->set_data(blob.take());
    } else {
      setStatus(*out->mutable_status(), StatusCode::NOT_FOUND, "blob " + describe(d) + " is not in the store");
    }
  }
  countCorruption();
  return Status::OK;
}

Status CompileService::readBlob(const msl::v1::ReadBlobRequest &request, std::string &blob,
                                size_t &begin, size_t &end) {
  const auto &d = request.digest();
  if (!isValidDigest(d))
    return invalid("malformed digest " + describe(d) + ": hash must be 64 lowercase hex characters of SHA-256");
  if (request.offset() < 0 || request.limit() < 0 || request.offset() > d.size_bytes())
    return Status(StatusCode::OUT_OF_RANGE, "offset " + std::to_string(request.offset()) + " and limit " +
                                                std::to_string(request.limit()) + " do not fit blob " +
                                                describe(d));
  auto found = store_.get(fromProto(d));
  countCorruption();
  if (!found)
    return Status(StatusCode::NOT_FOUND, "blob " + describe(d) + " is not in the store");
  blob = found.take();
  begin = size_t(request.offset());
  end = request.limit() ? std::min(blob.size(), begin + size_t(request.limit())) : blob.size();
  return Status::OK;
}

} // namespace msl::service
