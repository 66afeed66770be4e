#include "msl/client/Client.h"

#include "LocalChannel.h"

#include "msl/cache/Digest.h"

#include <algorithm>
#include <fstream>
#include <future>
#include <set>
#include <thread>

#include <grpcpp/generic/generic_stub.h>
#include <openssl/evp.h>

namespace msl::client {
namespace {

using msl::v1::Digest;
using Clock = std::chrono::system_clock;

constexpr std::size_t kPerBlobOverhead = 160;  // digest + framing, generous

std::string digestKey(const Digest& d) { return d.hash() + "/" + std::to_string(d.size_bytes()); }

grpc::Status perBlobStatus(const msl::v1::Status& s, const Digest& d, const char* what) {
  auto code = static_cast<grpc::StatusCode>(s.code());
  return grpc::Status(code, std::string(what) + " blob " + d.hash() + "/" +
                                std::to_string(d.size_bytes()) + ": " + s.message());
}

// --- grpc.health.v1 without generated code -------------------------------
// HealthCheckRequest { string service = 1; }
// HealthCheckResponse { ServingStatus status = 1; }  SERVING = 1

std::string encodeHealthRequest(const std::string& service) {
  std::string out;
  if (service.empty()) return out;
  out.push_back('\x0a');
  std::size_t n = service.size();
  while (n >= 0x80) {
    out.push_back(static_cast<char>((n & 0x7f) | 0x80));
    n >>= 7;
  }
  out.push_back(static_cast<char>(n));
  out += service;
  return out;
}

bool readVarint(std::string_view& s, std::uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 64 && !s.empty(); shift += 7) {
    auto b = static_cast<unsigned char>(s.front());
    s.remove_prefix(1);
    *v |= std::uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Returns the ServingStatus, or -1 when the bytes do not parse.
int decodeHealthResponse(std::string_view s) {
  int status = 0;
  while (!s.empty()) {
    std::uint64_t key;
    if (!readVarint(s, &key)) return -1;
    switch (key & 7) {
      case 0: {
        std::uint64_t v;
        if (!readVarint(s, &v)) return -1;
        if ((key >> 3) == 1) status = static_cast<int>(v);
        break;
      }
      case 1:
        if (s.size() < 8) return -1;
        s.remove_prefix(8);
        break;
      case 2: {
        std::uint64_t len;
        if (!readVarint(s, &len) || len > s.size()) return -1;
        s.remove_prefix(len);
        break;
      }
      case 5:
        if (s.size() < 4) return -1;
        s.remove_prefix(4);
        break;
      default:
        return -1;
    }
  }
  return status;
}

}  // namespace

std::string sha256Hex(std::string_view bytes) { return msl::cache::Digest::of(bytes).hash; }

Digest digestOf(std::string_view bytes) {
  Digest d;
  d.set_hash(sha256Hex(bytes));
  d.set_size_bytes(static_cast<std::int64_t>(bytes.size()));
  return d;
}

std::string_view statusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN_CODE";
  }
}

std::string describeStatus(const grpc::Status& status) {
  std::string out(statusCodeName(status.error_code()));
  if (!status.error_message().empty()) out += ": " + status.error_message();
  return out;
}

bool loadTlsFiles(const std::string& ca_file, const std::string& cert_file, const std::string& key_file,
                  ClientOptions* options, std::string* error) {
  auto read = [&](const std::string& path, const char* what, std::string* out) {
    std::ifstream in(path, std::ios::binary);
    std::string text;
    if (in) {
      constexpr std::size_t kMax = 1 << 20;  // a PEM file, not an arbitrary one
      text.resize(kMax + 1);
      in.read(text.data(), static_cast<std::streamsize>(text.size()));
      text.resize(static_cast<std::size_t>(in.gcount()));
      if (text.size() > kMax) return *error = std::string(what) + " " + path + ": larger than 1 MiB", false;
    }
    if (!in && !in.eof()) return *error = std::string(what) + " " + path + ": cannot read", false;
    if (text.find("-----BEGIN ") == std::string::npos)
      return *error = std::string(what) + " " + path + ": not a PEM file", false;
    *out = std::move(text);
    return true;
  };
  if (cert_file.empty() != key_file.empty()) {
    *error = "a client certificate needs both --tls-cert and --tls-key";
    return false;
  }
  ClientOptions::Tls tls;
  tls.enabled = true;
  if (!ca_file.empty() && !read(ca_file, "--tls-ca", &tls.root_certs_pem)) return false;
  if (!cert_file.empty() && (!read(cert_file, "--tls-cert", &tls.cert_chain_pem) ||
                             !read(key_file, "--tls-key", &tls.private_key_pem)))
    return false;
  options->tls = std::move(tls);
  return true;
}

Client::Client(const std::string& address) : Client([&] {
  ClientOptions o;
  o.address = address;
  return o;
}()) {}

Client::Client(ClientOptions options) : options_(std::move(options)) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              static_cast<int>(options_.initial_reconnect_backoff.count()));
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(options_.max_reconnect_backoff.count()));
  std::shared_ptr<grpc::ChannelCredentials> creds = options_.credentials;
  if (!creds && options_.tls.enabled) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options_.tls.root_certs_pem;
    ssl.pem_cert_chain = options_.tls.cert_chain_pem;
    ssl.pem_private_key = options_.tls.private_key_pem;
    creds = grpc::SslCredentials(ssl);
  }
  if (!creds) creds = grpc::InsecureChannelCredentials();
  channel_ = grpc::CreateCustomChannel(options_.address, creds, args);
  cas_ = msl::v1::ContentAddressableStorage::NewStub(channel_);
  compiler_ = msl::v1::Compiler::NewStub(channel_);
  executor_ = msl::v1::Executor::NewStub(channel_);
  if (!options_.local_socket.empty()) local_ = std::make_shared<LocalChannel>(options_.local_socket);
}

void Client::prepare(grpc::ClientContext& context) const {
  context.set_deadline(Clock::now() + options_.call_deadline);
  addToken(context);
}

void Client::addToken(grpc::ClientContext& context) const {
  if (!options_.auth_token.empty()) context.AddMetadata("authorization", "Bearer " + options_.auth_token);
  if (!options_.request_id.empty()) context.AddMetadata("x-request-id", options_.request_id);
}

std::size_t Client::batchBudget() const {
  auto max = static_cast<std::size_t>(std::max(options_.max_message_bytes, 1 << 20));
  // Keep 1/16 (at least 64 KiB) of headroom for framing.
  return max - std::max<std::size_t>(max / 16, 64 * 1024);
}

Result<HealthCheck> Client::waitUntilHealthy(std::chrono::milliseconds timeout) const {
  return waitUntilHealthy(Clock::now() + timeout);
}

Result<HealthCheck> Client::waitUntilHealthy(Clock::time_point deadline) const {
  grpc::GenericStub generic(channel_);
  std::string last = "no attempt made";
  bool useHealthService = true;
  while (true) {
    auto now = Clock::now();
    if (now >= deadline) {
      return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                          "server at " + options_.address + " not healthy in time: " + last);
    }
    auto attemptDeadline = std::min(deadline, now + std::chrono::seconds(5));
    grpc::ClientContext ctx;
    ctx.set_deadline(attemptDeadline);
    ctx.set_wait_for_ready(true);  // wait for the connection rather than fail fast
    if (useHealthService) {
      std::string req = encodeHealthRequest("");
      grpc::Slice slice(req);
      grpc::ByteBuffer request(&slice, 1);
      grpc::ByteBuffer response;
      std::promise<grpc::Status> done;
      generic.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request,
                        &response, [&done](grpc::Status s) { done.set_value(std::move(s)); });
      grpc::Status s = done.get_future().get();
      if (s.ok()) {
        std::vector<grpc::Slice> slices;
        std::string bytes;
        if (response.Dump(&slices).ok()) {
          for (const auto& sl : slices) bytes.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
        }
        int serving = decodeHealthResponse(bytes);
        if (serving == 1) return HealthCheck{HealthSource::kHealthService};
        last = serving == 2   ? "health service reports NOT_SERVING"
               : serving < 0 ? "unparsable health response"
                             : "health service reports status " + std::to_string(serving);
      } else if (s.error_code() == grpc::StatusCode::UNIMPLEMENTED) {
        useHealthService = false;  // probe the store instead
        continue;
      } else {
        last = describeStatus(s);
      }
    } else {
      msl::v1::FindMissingBlobsRequest req;
      msl::v1::FindMissingBlobsResponse resp;
      addToken(ctx);
      grpc::Status s = cas_->FindMissingBlobs(&ctx, req, &resp);
      if (s.ok()) return HealthCheck{HealthSource::kCasProbe};
      last = describeStatus(s);
    }
    auto pause = std::min<Clock::duration>(std::chrono::milliseconds(200), deadline - Clock::now());
    if (pause > Clock::duration::zero()) std::this_thread::sleep_for(pause);
  }
}

Result<std::vector<Digest>> Client::findMissingBlobs(const std::vector<Digest>& digests) const {
  std::vector<Digest> missing;
  if (digests.empty()) return missing;
  // ~100 bytes per digest; split very long lists.
  const std::size_t perCall = std::max<std::size_t>(1, batchBudget() / 128);
  for (std::size_t start = 0; start < digests.size(); start += perCall) {
    msl::v1::FindMissingBlobsRequest req;
    for (std::size_t i = start; i < std::min(digests.size(), start + perCall); ++i)
      *req.add_blob_digests() = digests[i];
    msl::v1::FindMissingBlobsResponse resp;
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = cas_->FindMissingBlobs(&ctx, req, &resp);
    if (!s.ok()) return s;
    for (const auto& d : resp.missing_blob_digests()) missing.push_back(d);
  }
  return missing;
}

Result<std::vector<Digest>> Client::uploadBlobs(const std::vector<std::string>& blobs) const {
  std::vector<Digest> digests;
  digests.reserve(blobs.size());
  for (const auto& b : blobs) digests.push_back(digestOf(b));
  const std::size_t budget = batchBudget();
  std::size_t i = 0;
  while (i < blobs.size()) {
    msl::v1::BatchUpdateBlobsRequest req;
    std::size_t used = 0;
    while (i < blobs.size()) {
      std::size_t cost = blobs[i].size() + kPerBlobOverhead;
      if (cost > budget) {
        return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                            "blob of " + std::to_string(blobs[i].size()) +
                                " bytes does not fit in one message (max_message_bytes " +
                                std::to_string(options_.max_message_bytes) + ")");
      }
      if (used + cost > budget && req.requests_size() > 0) break;
      auto* r = req.add_requests();
      *r->mutable_digest() = digests[i];
      r->set_data(blobs[i]);
      used += cost;
      ++i;
    }
    msl::v1::BatchUpdateBlobsResponse resp;
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = cas_->BatchUpdateBlobs(&ctx, req, &resp);
    if (!s.ok()) return s;
    for (const auto& r : resp.responses()) {
      if (r.status().code() != 0) return perBlobStatus(r.status(), r.digest(), "uploading");
    }
  }
  return digests;
}

Result<std::vector<Digest>> Client::uploadMissingBlobs(const std::vector<std::string>& blobs) const {
  std::vector<Digest> digests;
  digests.reserve(blobs.size());
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < blobs.size(); ++i) {
    digests.push_back(digestOf(blobs[i]));
    index.emplace(digestKey(digests.back()), i);
  }
  // Ask once per distinct digest.
  std::vector<Digest> distinct;
  for (const auto& [key, i] : index) distinct.push_back(digests[i]);
  auto missing = findMissingBlobs(distinct);
  if (!missing) return missing.status();
  std::vector<std::string> toUpload;
  std::set<std::string> queued;
  for (const auto& d : *missing) {
    auto it = index.find(digestKey(d));
    if (it == index.end() || !queued.insert(it->first).second) continue;
    toUpload.push_back(blobs[it->second]);
  }
  if (!toUpload.empty()) {
    auto up = uploadBlobs(toUpload);
    if (!up) return up.status();
  }
  return digests;
}

Result<std::string> Client::readBlob(const Digest& digest) const {
  msl::v1::ReadBlobRequest req;
  *req.mutable_digest() = digest;
  grpc::ClientContext ctx;
  prepare(ctx);
  auto reader = cas_->Read(&ctx, req);
  std::string data;
  msl::v1::ReadBlobResponse chunk;
  while (reader->Read(&chunk)) {
    if (data.size() + chunk.data().size() > static_cast<std::size_t>(std::max<std::int64_t>(0, digest.size_bytes())))
      return grpc::Status(grpc::StatusCode::DATA_LOSS, "blob " + digest.hash() + " read back longer than its digest says");
    data += chunk.data();
  }
  grpc::Status s = reader->Finish();
  if (!s.ok()) return s;
  if (static_cast<std::int64_t>(data.size()) != digest.size_bytes() || sha256Hex(data) != digest.hash())
    return grpc::Status(grpc::StatusCode::DATA_LOSS, "blob " + digest.hash() + " read back with different content");
  return data;
}

Result<std::vector<std::string>> Client::readBlobs(const std::vector<Digest>& digests) const {
  std::vector<std::string> out(digests.size());
  const std::size_t budget = batchBudget();
  std::size_t i = 0;
  while (i < digests.size()) {
    msl::v1::BatchReadBlobsRequest req;
    std::vector<std::size_t> positions;
    std::size_t used = 0;
    while (i < digests.size()) {
      std::size_t cost = static_cast<std::size_t>(std::max<std::int64_t>(0, digests[i].size_bytes())) +
                         kPerBlobOverhead;
      if (cost > budget) {  // too large for a batch: stream it
        auto blob = readBlob(digests[i]);
        if (!blob) return blob.status();
        out[i++] = std::move(*blob);
        continue;
      }
      if (used + cost > budget && req.digests_size() > 0) break;
      *req.add_digests() = digests[i];
      positions.push_back(i);
      used += cost;
      ++i;
    }
    msl::v1::BatchReadBlobsResponse resp;
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = cas_->BatchReadBlobs(&ctx, req, &resp);
    if (!s.ok()) return s;
    // Match responses to requests by digest (the server may reorder).
    std::multimap<std::string, std::size_t> pending;
    for (std::size_t p : positions) pending.emplace(digestKey(digests[p]), p);
    for (auto& r : *resp.mutable_responses()) {
      auto it = pending.find(digestKey(r.digest()));
      if (r.status().code() == int(grpc::StatusCode::RESOURCE_EXHAUSTED) && it != pending.end()) {
        // Past the server's batch limit: stream it.
        auto blob = readBlob(digests[it->second]);
        if (!blob) return blob.status();
        out[it->second] = std::move(*blob);
        pending.erase(it);
        continue;
      }
      if (r.status().code() != 0) return perBlobStatus(r.status(), r.digest(), "reading");
      if (it == pending.end()) continue;
      const Digest& want = digests[it->second];
      if (static_cast<std::int64_t>(r.data().size()) != want.size_bytes() ||
          sha256Hex(r.data()) != want.hash()) {
        return grpc::Status(grpc::StatusCode::DATA_LOSS,
                            "blob " + want.hash() + " read back with different content");
      }
      out[it->second] = std::move(*r.mutable_data());
      pending.erase(it);
    }
    if (!pending.empty()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          "server returned no data for blob " + pending.begin()->first);
    }
  }
  return out;
}

Result<msl::v1::CompileResponse> Client::compile(const msl::v1::CompileRequest& request) const {
  msl::v1::CompileResponse resp;
  grpc::ClientContext ctx;
  prepare(ctx);
  grpc::Status s = compiler_->Compile(&ctx, request, &resp);
  if (!s.ok()) return s;
  return resp;
}

Result<std::string> Client::fetchArtifact(const msl::v1::Artifact& artifact) const {
  if (!artifact.inline_data().empty() || artifact.digest().size_bytes() == 0) {
    return artifact.inline_data();
  }
  auto blobs = readBlobs({artifact.digest()});
  if (!blobs) return blobs.status();
  return std::move(blobs->front());
}

Result<msl::v1::CompileRequest> Client::prepareCompileRequest(
    const std::string& main_path, const std::string& main_bytes,
    const std::map<std::string, std::string>& files, const std::vector<std::string>& options,
    const msl::v1::Target& target, const std::vector<msl::v1::ArtifactKind>& outputs,
    const std::map<std::string, std::string>& function_constants) const {
  std::vector<std::string> byDigest;
  return buildCompileRequest(main_path, main_bytes, files, options, target, outputs,
                             function_constants, &byDigest);
}

Result<msl::v1::CompileRequest> Client::buildCompileRequest(
    const std::string& main_path, const std::string& main_bytes,
    const std::map<std::string, std::string>& files, const std::vector<std::string>& options,
    const msl::v1::Target& target, const std::vector<msl::v1::ArtifactKind>& outputs,
    const std::map<std::string, std::string>& function_constants,
    std::vector<std::string>* by_digest) const {
  msl::v1::CompileRequest req;
  req.set_main_path(main_path);
  for (const auto& o : options) req.add_options(o);
  req.mutable_function_constants()->insert(function_constants.begin(), function_constants.end());
  *req.mutable_target() = target;
  for (auto k : outputs) req.add_outputs(k);

  // Inline small files while the request stays well below the message limit.
  std::size_t inlineBudget = batchBudget() / 2;
  std::vector<std::string>& byDigest = *by_digest;  // contents sent by digest
  auto fill = [&](msl::v1::FileContent* content, const std::string& bytes) {
    if (bytes.size() <= options_.inline_threshold && bytes.size() + kPerBlobOverhead <= inlineBudget) {
      content->set_inline_(bytes);
      inlineBudget -= bytes.size() + kPerBlobOverhead;
    } else {
      *content->mutable_digest() = digestOf(bytes);
      byDigest.push_back(bytes);
    }
  };
  fill(req.mutable_main_source(), main_bytes);
  for (const auto& [path, bytes] : files) {
    auto* f = req.add_files();
    f->set_path(path);
    fill(f->mutable_content(), bytes);
  }

  if (!byDigest.empty()) {
    auto up = uploadMissingBlobs(byDigest);
    if (!up) return up.status();
  }
  return req;
}

Result<msl::v1::CompileResponse> Client::compileFiles(
    const std::string& main_path, const std::string& main_bytes,
    const std::map<std::string, std::string>& files, const std::vector<std::string>& options,
    const msl::v1::Target& target, const std::vector<msl::v1::ArtifactKind>& outputs,
    const std::map<std::string, std::string>& function_constants) const {
  std::vector<std::string> byDigest;
  auto built = buildCompileRequest(main_path, main_bytes, files, options, target, outputs,
                                   function_constants, &byDigest);
  if (!built) return built.status();
  const msl::v1::CompileRequest& req = *built;
  auto resp = compile(req);
  if (!resp && !byDigest.empty() &&
      (resp.status().error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
       resp.status().error_code() == grpc::StatusCode::NOT_FOUND)) {
    // A blob may have been evicted between FindMissingBlobs and Compile:
    // upload everything once more and retry once.
    auto up = uploadBlobs(byDigest);
    if (!up) return up.status();
    resp = compile(req);
  }
  if (!resp) return resp;

  if (resp->success()) {
    std::vector<Digest> wanted;
    std::vector<int> which;
    for (int i = 0; i < resp->artifacts_size(); ++i) {
      const auto& a = resp->artifacts(i);
      if (a.inline_data().empty() && a.digest().size_bytes() > 0) {
        wanted.push_back(a.digest());
        which.push_back(i);
      }
    }
    if (!wanted.empty()) {
      auto blobs = readBlobs(wanted);
      if (!blobs) return blobs.status();
      for (std::size_t j = 0; j < which.size(); ++j)
        resp->mutable_artifacts(which[j])->set_inline_data(std::move((*blobs)[j]));
    }
  }
  return resp;
}

Result<msl::v1::ListDevicesResponse> Client::listDevices() const {
  msl::v1::ListDevicesResponse resp;
  grpc::ClientContext ctx;
  prepare(ctx);
  grpc::Status s = executor_->ListDevices(&ctx, msl::v1::ListDevicesRequest(), &resp);
  if (!s.ok()) return s;
  return resp;
}

namespace {

// A unary Execute whose caller polls its own completion queue (gRPC does the
// transport's reading on the polling thread) until `budget` has passed, then
// waits for it asleep.
grpc::Status executePolling(msl::v1::Executor::Stub& stub, grpc::ClientContext& ctx,
                            const msl::v1::ExecuteRequest& request, msl::v1::ExecuteResponse* response,
                            std::chrono::microseconds budget) {
  grpc::CompletionQueue cq;
  grpc::Status status;
  auto call = stub.AsyncExecute(&ctx, request, &cq);
  call->Finish(response, &status, &status);
  const auto spinUntil = std::chrono::steady_clock::now() + budget;
  void* tag = nullptr;
  bool ok = false;
  for (;;) {
    const bool spinning = std::chrono::steady_clock::now() < spinUntil;
    const gpr_timespec deadline = spinning ? gpr_time_0(GPR_CLOCK_MONOTONIC) : gpr_inf_future(GPR_CLOCK_MONOTONIC);
    if (cq.AsyncNext(&tag, &ok, deadline) == grpc::CompletionQueue::GOT_EVENT) break;
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

}  // namespace

Result<msl::v1::ExecuteResponse> Client::execute(const msl::v1::ExecuteRequest& request) const {
  msl::v1::ExecuteResponse resp;
  {
    grpc::ClientContext ctx;
    prepare(ctx);
    grpc::Status s = local_                           ? local_->execute(request, &resp, options_)
                     : options_.busy_poll.count() > 0 ? executePolling(*executor_, ctx, request, &resp, options_.busy_poll)
                                                      : executor_->Execute(&ctx, request, &resp);
    if (!s.ok()) return s;
  }
  // Results that came by digest (buffers, then textures), fetched inline.
  std::vector<Digest> wanted;
  std::vector<std::string*> into;
  for (auto& b : *resp.mutable_buffers())
    if (b.inline_data().empty() && b.digest().size_bytes() > 0) {
      wanted.push_back(b.digest());
      into.push_back(b.mutable_inline_data());
    }
  for (auto& t : *resp.mutable_textures())
    if (t.inline_data().empty() && t.digest().size_bytes() > 0) {
      wanted.push_back(t.digest());
      into.push_back(t.mutable_inline_data());
    }
  if (!wanted.empty()) {
    auto blobs = readBlobs(wanted);
    if (!blobs) return blobs.status();
    for (std::size_t j = 0; j < into.size(); ++j) *into[j] = std::move((*blobs)[j]);
  }
  return resp;
}

}  // namespace msl::client
