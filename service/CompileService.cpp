#include "CompileService.h"

#include "msl/cache/ActionKey.h"
#include "msl/compiler/Options.h"

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>

namespace msl::service {
namespace {

using grpc::Status;
using grpc::StatusCode;

cache::Digest fromProto(const msl::v1::Digest &d) { return {d.hash(), d.size_bytes()}; }

void toProto(const cache::Digest &d, msl::v1::Digest &out) {
  out.set_hash(d.hash);
  out.set_size_bytes(d.size_bytes);
}

std::string describe(const msl::v1::Digest &d) {
  return d.hash() + "/" + std::to_string(d.size_bytes());
}

Status invalid(std::string message) { return Status(StatusCode::INVALID_ARGUMENT, message); }

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

CompileService::CompileService(cache::ContentStore &store, WorkerPool &workers,
                               ServiceMetrics &metrics, CompileServiceOptions options)
    : store_(store), workers_(workers), metrics_(metrics), options_(options) {}

void CompileService::countCorruption() {
  // The store counts corruption it finds; mirror the total into the metric.
  uint64_t total = store_.corruptBlobsFound() + store_.actionCache().corruptEntriesFound();
  std::lock_guard lock(inFlightMu_);
  if (total > corruptionSeen_) {
    metrics_.corruptBlobs.add(double(total - corruptionSeen_));
    corruptionSeen_ = total;
  }
}

Status CompileService::compile(const msl::v1::CompileRequest &request,
                               msl::v1::CompileResponse &response) {
  msl::internal::WorkerRequest job;
  cache::ActionKeyBuilder key;

  // The main source and every file: bytes for the worker, digests for the key.
  auto resolve = [&](const std::string &path, const msl::v1::FileContent &content,
                     std::string &bytes, cache::Digest &digest) -> Status {
    switch (content.content_case()) {
    case msl::v1::FileContent::kInline:
      bytes = content.inline_();
      digest = cache::Digest::of(bytes);
      return Status::OK;
    case msl::v1::FileContent::kDigest: {
      digest = fromProto(content.digest());
      if (!cache::isValidHash(digest.hash) || digest.size_bytes < 0)
        return invalid("the digest of '" + path + "' is malformed: hash must be 64 lowercase hex "
                       "characters of SHA-256 and size_bytes non-negative");
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
  if (!compiler::isCanonicalRelativePath(mainPath))
    return invalid("main_path '" + mainPath + "' must be a relative path without '.', '..' or empty parts");
  if (request.main_source().content_case() == msl::v1::FileContent::CONTENT_NOT_SET)
    return invalid("CompileRequest.main_source is required: the MSL source, inline or by digest");
  cache::Digest digest;
  job.set_main_path(mainPath);
  if (Status s = resolve(mainPath, request.main_source(), *job.mutable_main_source(), digest); !s.ok())
    return s;
  key.setMainSource(mainPath, digest);

  std::set<std::string> seen{mainPath};
  for (const auto &file : request.files()) {
    if (!compiler::isCanonicalRelativePath(file.path()))
      return invalid("file path '" + file.path() +
                     "' must be a relative path without '.', '..' or empty parts");
    if (!seen.insert(file.path()).second)
      return invalid("file '" + file.path() + "' is given twice");
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
    if (!std::regex_match(cpu, std::regex("sm_[0-9]{2,3}a?")))
      return invalid("target cpu '" + cpu + "' is not an NVPTX SM such as sm_90");
  } else if (!cpu.empty()) {
    return invalid("target cpu '" + cpu + "' is only meaningful for NVPTX64");
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
  static const std::regex kConstantKey("[0-9]{1,5}|[A-Za-z_][A-Za-z0-9_]*");
  for (const auto &[k, v] : request.function_constants()) {
    if (!std::regex_match(k, kConstantKey) || v.empty())
      return invalid("function constant '" + k + "'='" + v +
                     "': the key must be an index or a name and the value a literal");
    constants[k] = v;
  }
  job.mutable_function_constants()->insert(request.function_constants().begin(),
                                            request.function_constants().end());
  key.setFunctionConstants(std::move(constants));
  key.setCompilerIdentity(workers_.compilerIdentity());
  const std::string actionKey = key.build();

  if (auto cached = lookup(actionKey)) {
    metrics_.actionCacheHits.add(1);
    response = std::move(*cached);
    response.set_cache_hit(true);
    inlineSmallArtifacts(response);
    return Status::OK;
  }
  metrics_.actionCacheMisses.add(1);
  Result result = compileOnce(actionKey, job);
  if (!result.status.ok())
    return result.status;
  response = std::move(result.response);
  response.set_cache_hit(false);
  inlineSmallArtifacts(response);
  return Status::OK;
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
  for (auto &a : *response.mutable_artifacts()) {
    if (size_t(a.digest().size_bytes()) > options_.inlineArtifactBytes)
      continue;
    auto blob = store_.get(fromProto(a.digest()));
    if (blob)
      a.set_inline_data(blob.take());
  }
  countCorruption();
}

CompileService::Result CompileService::compileOnce(const std::string &key,
                                                   const msl::internal::WorkerRequest &job) {
  std::promise<Result> promise;
  std::shared_future<Result> future;
  bool leader = false;
  {
    std::lock_guard lock(inFlightMu_);
    auto it = inFlight_.find(key);
    if (it != inFlight_.end()) {
      future = it->second;
    } else {
      future = promise.get_future().share();
      inFlight_.emplace(key, future);
      leader = true;
    }
  }
  if (!leader) {
    metrics_.compilesShared.add(1);
    return future.get();
  }
  Result result = runWorker(key, job);
  promise.set_value(result);
  std::lock_guard lock(inFlightMu_);
  inFlight_.erase(key);
  return result;
}

CompileService::Result CompileService::runWorker(const std::string &key,
                                                 const msl::internal::WorkerRequest &job) {
  metrics_.compilesInFlight.add(1);
  WorkerPool::Outcome outcome = workers_.run(job);
  metrics_.compilesInFlight.add(-1);
  Result result;
  switch (outcome.kind) {
  case WorkerPool::Outcome::Kind::Ok:
    break;
  case WorkerPool::Outcome::Kind::Crashed:
    metrics_.workerCrashes.add(1);
    result.status = Status(StatusCode::INTERNAL,
                           "compiling '" + job.main_path() + "' crashed the compiler: " +
                               outcome.detail + "; the worker was replaced and nothing was cached");
    return result;
  case WorkerPool::Outcome::Kind::TimedOut:
    metrics_.workerTimeouts.add(1);
    result.status = Status(StatusCode::DEADLINE_EXCEEDED,
                           "compiling '" + job.main_path() + "': " + outcome.detail);
    return result;
  case WorkerPool::Outcome::Kind::Unavailable:
    result.status = Status(StatusCode::UNAVAILABLE, outcome.detail);
    return result;
  }

  const auto &w = outcome.response;
  msl::v1::CompileResponse &r = result.response;
  r.set_success(w.success());
  r.set_compile_time_us(w.compile_time_us());
  r.set_action_key(key);
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
  if (auto s = store_.actionCache().put(key, r.SerializeAsString()); !s.isOk())
    result.status = Status(StatusCode::INTERNAL, "storing the result failed: " + s.toString());
  return result;
}

Status CompileService::findMissingBlobs(const msl::v1::FindMissingBlobsRequest &request,
                                        msl::v1::FindMissingBlobsResponse &response) {
  std::vector<cache::Digest> digests;
  for (const auto &d : request.blob_digests()) {
    if (!cache::isValidHash(d.hash()) || d.size_bytes() < 0)
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
  for (const auto &r : request.requests()) {
    auto *out = response.add_responses();
    *out->mutable_digest() = r.digest();
    if (!cache::isValidHash(r.digest().hash())) {
      out->mutable_status()->set_code(int(StatusCode::INVALID_ARGUMENT));
      out->mutable_status()->set_message("malformed digest " + describe(r.digest()));
      continue;
    }
    auto s = store_.put(fromProto(r.digest()), r.data());
    if (!s.isOk()) {
      bool mismatch = s.code() == cache::Status::Code::InvalidArgument;
      out->mutable_status()->set_code(
          int(mismatch ? StatusCode::INVALID_ARGUMENT : StatusCode::INTERNAL));
      out->mutable_status()->set_message(s.message());
    }
  }
  return Status::OK;
}

Status CompileService::batchReadBlobs(const msl::v1::BatchReadBlobsRequest &request,
                                      msl::v1::BatchReadBlobsResponse &response) {
  for (const auto &d : request.digests()) {
    auto *out = response.add_responses();
    *out->mutable_digest() = d;
    if (!cache::isValidHash(d.hash())) {
      out->mutable_status()->set_code(int(StatusCode::INVALID_ARGUMENT));
      out->mutable_status()->set_message("malformed digest " + describe(d));
      continue;
    }
    auto blob = store_.get(fromProto(d));
    if (blob) {
      out->set_data(blob.take());
    } else {
      out->mutable_status()->set_code(int(StatusCode::NOT_FOUND));
      out->mutable_status()->set_message("blob " + describe(d) + " is not in the store");
    }
  }
  countCorruption();
  return Status::OK;
}

} // namespace msl::service
