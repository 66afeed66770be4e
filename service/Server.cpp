#include "Server.h"

#include "AdminService.h"
#include "CompileService.h"
#include "DigestProto.h"
#include "Metrics.h"
#include "RequestLog.h"
#include "LocalCalls.h"
#include "RpcLog.h"
#include "UnixSocketPath.h"
#include "WorkerPool.h"
#include "msl/v1/admin.grpc.pb.h"
#include "msl/v1/cas.grpc.pb.h"
#include "msl/v1/compiler.grpc.pb.h"
#include "msl/v1/execute.grpc.pb.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/security/server_credentials.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/support/proto_buffer_reader.h>

#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace msl::service {
namespace {

// Requests arrive as bytes and are parsed here, so that a malformed message
// is INVALID_ARGUMENT naming the problem (gRPC's own parse says INTERNAL).
template <typename Message>
grpc::Status parseRequest(const grpc::ByteBuffer *bytes, Message &message) {
  // Parsed from gRPC's slices in place (a request may be tens of MiB).
  bool parsed = false;
  if (bytes) {
    grpc::ProtoBufferReader reader(const_cast<grpc::ByteBuffer *>(bytes)); // reads only
    parsed = message.ParseFromZeroCopyStream(&reader);
  }
  if (!parsed)
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                        "the request is not a valid " + message.GetTypeName() + " protobuf message");
  return grpc::Status::OK;
}

// Straight into one uninitialized slice: one copy of each payload (a string
// first would zero-fill, and grpc::Slice(const std::string &) copies again).
void serialize(const google::protobuf::Message &message, grpc::ByteBuffer &out) {
  const size_t size = message.ByteSizeLong();
  grpc::Slice slice(size);
  message.SerializeWithCachedSizesToArray(const_cast<uint8_t *>(slice.begin()));
  out = grpc::ByteBuffer(&slice, 1);
}

// The client a request counts against for fair queueing: its host, and the
// msld-client-id it may send (many clients behind one address, e.g. the
// jobs of one build machine). See README "Limits".
std::string clientOf(const grpc::CallbackServerContext &ctx) {
  std::string peer = ctx.peer(); // "ipv4:10.0.0.7:51234", "ipv6:[::1]:51234"
  std::string host = peer.substr(0, std::min(peer.size(), peer.rfind(':')));
  auto id = ctx.client_metadata().find("msld-client-id");
  if (id != ctx.client_metadata().end())
    host += "#" + std::string(id->second.data(), std::min<size_t>(id->second.size(), 64));
  return host;
}

// One RPC's log lines, its request id returned in the response's initial
// metadata (RpcLog.h).
RpcLog startRpcLog(grpc::CallbackServerContext *ctx, const char *method) {
  const auto &metadata = ctx->client_metadata();
  auto header = [&](const char *name) {
    auto it = metadata.find(name);
    return it == metadata.end() ? std::string_view() : std::string_view(it->second.data(), it->second.size());
  };
  RpcLog log(method, ctx->peer(), header(log::kRequestIdHeader), header("msld-client-id"));
  ctx->AddInitialMetadata(log::kRequestIdHeader, log.id());
  return log;
}

// Authentication and roles of every RPC (Auth.h): each handler asks first.
class Gate {
public:
  Gate(const Authorizer *auth, ServiceMetrics &metrics) : auth_(auth), metrics_(metrics) {}
  /// OK, or the UNAUTHENTICATED / PERMISSION_DENIED to answer (counted in
  /// msld_auth_failures_total).
  grpc::Status check(const grpc::CallbackServerContext &ctx, const char *method) const {
    if (!auth_)
      return grpc::Status::OK;
    PeerIdentity peer;
    if (auto context = ctx.auth_context()) {
      // Present only for a client certificate that the handshake verified
      // against --tls-client-ca.
      peer.hasClientCert = !context->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME).empty();
      auto cn = context->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
      if (!cn.empty())
        peer.commonName.assign(cn.front().data(), std::min<size_t>(cn.front().size(), 1024));
    }
    AuthDecision decision = auth_->check(method, ctx.client_metadata(), peer);
    if (!decision.ok())
      metrics_.countAuthFailure(decision.failure);
    return decision.status;
  }

private:
  const Authorizer *auth_;
  ServiceMetrics &metrics_;
};

// Answers a unary call that the Gate refused.
grpc::ServerUnaryReactor *refuse(grpc::CallbackServerContext *ctx, const grpc::Status &status,
                                 ServiceMetrics &metrics, const char *method, RpcLog &rpcLog) {
  metrics.countRequest(method, int(status.error_code()));
  rpcLog.finish(status);
  auto *reactor = ctx->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

// A unary RPC that a logic class (CompileService, ExecuteService) answers now
// or later from a dispatcher, and that stops its work when the client goes
// away: OnCancel hands the logic's call back to `Logic::cancel`.
template <typename Logic> class CancellableReactor : public grpc::ServerUnaryReactor {
public:
  CancellableReactor(grpc::CallbackServerContext *ctx, grpc::ByteBuffer *response, Logic &logic,
                     ServiceMetrics &metrics, RpcLog rpc)
      : ctx_(ctx), response_(response), logic_(logic), metrics_(metrics), rpc_(std::move(rpc)) {}

  void OnCancel() override {
    std::shared_ptr<typename Logic::Call> call;
    {
      std::lock_guard lock(mu_);
      cancelled_ = true;
      call = call_;
    }
    if (call)
      logic_.cancel(call);
  }
  void OnDone() override { delete this; }

protected:
  /// The logic's handle of this RPC's work (cancelled at once if the client
  /// went away before the logic returned it).
  void track(std::shared_ptr<typename Logic::Call> call) {
    std::lock_guard lock(mu_);
    call_ = std::move(call);
    if (cancelled_)
      logic_.cancel(call_);
  }

  grpc::CallbackServerContext *ctx_;
  grpc::ByteBuffer *response_;
  Logic &logic_;
  ServiceMetrics &metrics_;
  RpcLog rpc_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();

private:
  std::mutex mu_;
  std::shared_ptr<typename Logic::Call> call_;
  bool cancelled_ = false;
};

class CompileReactor final : public CancellableReactor<CompileService> {
public:
  using CancellableReactor::CancellableReactor;
  void start(const grpc::ByteBuffer *bytes) {
    msl::v1::CompileRequest request;
    if (grpc::Status s = parseRequest(bytes, request); !s.ok()) {
      metrics_.rejectedInvalid.Increment();
      finish({s});
      return;
    }
    track(logic_.compile(request, clientOf(*ctx_), [this](CompileReply r) { finish(std::move(r)); }));
  }

private:
  void finish(CompileReply reply) {
    if (reply.status.ok()) {
      serialize(reply.response, *response_);
      (reply.response.cache_hit() ? metrics_.compileLatencyHit : metrics_.compileLatencyMiss)
          .Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
    }
    if (reply.retryAfterMs > 0) // gRPC's retry throttling trailer
      ctx_->AddTrailingMetadata("grpc-retry-pushback-ms", std::to_string(reply.retryAfterMs));
    metrics_.countRequest("Compile", int(reply.status.error_code()));
    rpc_.finish(reply.status, reply.status.ok() ? log::Fields{{"cache_hit", reply.response.cache_hit()}}
                                                : log::Fields{});
    Finish(reply.status);
  }
};

class CompilerGrpc final : public msl::v1::Compiler::WithRawCallbackMethod_Compile<msl::v1::Compiler::Service> {
public:
  CompilerGrpc(CompileService &logic, ServiceMetrics &metrics, const Gate &gate)
      : logic_(logic), metrics_(metrics), gate_(gate) {}
  grpc::ServerUnaryReactor *Compile(grpc::CallbackServerContext *ctx, const grpc::ByteBuffer *request,
                                    grpc::ByteBuffer *response) override {
    RpcLog rpcLog = startRpcLog(ctx, "Compile");
    if (grpc::Status s = gate_.check(*ctx, rpc::kCompile); !s.ok())
      return refuse(ctx, s, metrics_, "Compile", rpcLog);
    auto *reactor = new CompileReactor(ctx, response, logic_, metrics_, std::move(rpcLog));
    reactor->start(request);
    return reactor;
  }

private:
  CompileService &logic_;
  ServiceMetrics &metrics_;
  const Gate &gate_;
};

// A unary CAS call: parse, run `fn` (quick: store reads and writes), answer.
// `fullMethod` is its name in the role table (Auth.cpp), `method` in metrics.
template <typename Request, typename Response, typename Fn>
grpc::ServerUnaryReactor *unaryCall(grpc::CallbackServerContext *ctx, const grpc::ByteBuffer *bytes,
                                    grpc::ByteBuffer *out, ServiceMetrics &metrics, const Gate &gate,
                                    const char *fullMethod, const char *method, Fn &&fn) {
  RpcLog rpcLog = startRpcLog(ctx, method);
  Request request;
  Response response;
  grpc::Status status = gate.check(*ctx, fullMethod);
  if (status.ok())
    status = parseRequest(bytes, request);
  if (status.ok())
    status = fn(request, response);
  if (status.ok())
    serialize(response, *out);
  metrics.countRequest(method, int(status.error_code()));
  rpcLog.finish(status);
  auto *reactor = ctx->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

// Read: one blob as a stream of chunks, each serialized as it is sent.
class BlobReader final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
public:
  /// `refused`: the Gate's answer (the blob is read only when it is OK).
  BlobReader(CompileService &logic, ServiceMetrics &metrics, const grpc::ByteBuffer *bytes, grpc::Status refused,
             RpcLog rpc)
      : chunkBytes_(logic.readChunkBytes()), metrics_(metrics), rpc_(std::move(rpc)) {
    msl::v1::ReadBlobRequest request;
    grpc::Status status = std::move(refused);
    if (status.ok())
      status = parseRequest(bytes, request);
    if (status.ok())
      status = logic.readBlob(request, blob_, next_, end_);
    if (!status.ok()) {
      finish(status);
      return;
    }
    writeNext(); // an empty blob is one empty chunk
  }
  void OnWriteDone(bool ok) override {
    if (!ok)
      finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client stopped reading"));
    else if (next_ >= end_)
      finish(grpc::Status::OK);
    else
      writeNext();
  }
  void OnDone() override { delete this; }

private:
  void writeNext() {
    size_t n = std::min(chunkBytes_, end_ - next_);
    msl::v1::ReadBlobResponse chunk;
    chunk.set_data(blob_.data() + next_, n);
    next_ += n;
    serialize(chunk, buffer_);
    StartWrite(&buffer_);
  }
  void finish(const grpc::Status &status) {
    metrics_.countRequest("Read", int(status.error_code()));
    rpc_.finish(status, {{"bytes", int64_t(next_)}});
    Finish(status);
  }
  size_t chunkBytes_;
  ServiceMetrics &metrics_;
  RpcLog rpc_;
  std::string blob_;
  size_t next_ = 0, end_ = 0;
  grpc::ByteBuffer buffer_;
};

using CasBase = msl::v1::ContentAddressableStorage::WithRawCallbackMethod_FindMissingBlobs<
    msl::v1::ContentAddressableStorage::WithRawCallbackMethod_BatchUpdateBlobs<
        msl::v1::ContentAddressableStorage::WithRawCallbackMethod_BatchReadBlobs<
            msl::v1::ContentAddressableStorage::WithRawCallbackMethod_Read<
                msl::v1::ContentAddressableStorage::Service>>>>;

class CasGrpc final : public CasBase {
public:
  CasGrpc(CompileService &logic, ServiceMetrics &metrics, const Gate &gate)
      : logic_(logic), metrics_(metrics), gate_(gate) {}
  grpc::ServerUnaryReactor *FindMissingBlobs(grpc::CallbackServerContext *ctx, const grpc::ByteBuffer *req,
                                             grpc::ByteBuffer *resp) override {
    return unaryCall<msl::v1::FindMissingBlobsRequest, msl::v1::FindMissingBlobsResponse>(
        ctx, req, resp, metrics_, gate_, rpc::kFindMissingBlobs, "FindMissingBlobs",
        [&](const auto &r, auto &out) { return logic_.findMissingBlobs(r, out); });
  }
  grpc::ServerUnaryReactor *BatchUpdateBlobs(grpc::CallbackServerContext *ctx, const grpc::ByteBuffer *req,
                                             grpc::ByteBuffer *resp) override {
    return unaryCall<msl::v1::BatchUpdateBlobsRequest, msl::v1::BatchUpdateBlobsResponse>(
        ctx, req, resp, metrics_, gate_, rpc::kBatchUpdateBlobs, "BatchUpdateBlobs",
        [&](const auto &r, auto &out) { return logic_.batchUpdateBlobs(r, out); });
  }
  grpc::ServerUnaryReactor *BatchReadBlobs(grpc::CallbackServerContext *ctx, const grpc::ByteBuffer *req,
                                           grpc::ByteBuffer *resp) override {
    return unaryCall<msl::v1::BatchReadBlobsRequest, msl::v1::BatchReadBlobsResponse>(
        ctx, req, resp, metrics_, gate_, rpc::kBatchReadBlobs, "BatchReadBlobs",
        [&](const auto &r, auto &out) { return logic_.batchReadBlobs(r, out); });
  }
  grpc::ServerWriteReactor<grpc::ByteBuffer> *Read(grpc::CallbackServerContext *ctx,
                                                  const grpc::ByteBuffer *req) override {
    RpcLog rpcLog = startRpcLog(ctx, "Read"); // before the Gate: a refused call is logged with its id too
    grpc::Status gate = gate_.check(*ctx, rpc::kRead);
    return new BlobReader(logic_, metrics_, req, std::move(gate), std::move(rpcLog));
  }

private:
  CompileService &logic_;
  ServiceMetrics &metrics_;
  const Gate &gate_;
};

class ExecuteReactor final : public CancellableReactor<ExecuteService> {
public:
  using CancellableReactor::CancellableReactor;
  void start(const grpc::ByteBuffer *bytes) {
    msl::v1::ExecuteRequest request;
    if (grpc::Status s = parseRequest(bytes, request); !s.ok()) {
      finish(s, {});
      return;
    }
    device_ = executionDeviceLabel(request.device());
    track(logic_.execute(
        std::move(request), clientOf(*ctx_), [this](grpc::Status s, msl::v1::ExecuteResponse r) { finish(s, r); },
        start_));
  }

private:
  void finish(const grpc::Status &status, const msl::v1::ExecuteResponse &response) {
    if (status.ok())
      serialize(response, *response_);
    metrics_.countRequest("Execute", int(status.error_code()));
    metrics_.countExecution(device_, int(status.error_code()));
    rpc_.finish(status, {{"device", device_}});
    Finish(status);
  }
  std::string device_ = "cpu";
};

using ExecutorBase = msl::v1::Executor::WithRawCallbackMethod_ListDevices<
    msl::v1::Executor::WithRawCallbackMethod_Execute<msl::v1::Executor::Service>>;

class ExecutorGrpc final : public ExecutorBase {
public:
  ExecutorGrpc(ExecuteService &logic, ServiceMetrics &metrics, const Gate &gate)
      : logic_(logic), metrics_(metrics), gate_(gate) {}
  grpc::ServerUnaryReactor *ListDevices(grpc::CallbackServerContext *ctx, const grpc::ByteBuffer *req,
                                        grpc::ByteBuffer *resp) override {
    return unaryCall<msl::v1::ListDevicesRequest, msl::v1::ListDevicesResponse>(
        ctx, req, resp, metrics_, gate_, rpc::kListDevices, "ListDevices",
        [&](const auto &r, auto &out) { return logic_.listDevices(r, out); });
  }
  grpc::ServerUnaryReactor *Execute(grpc::CallbackServerContext *ctx, const grpc::ByteBuffer *request,
                                    grpc::ByteBuffer *response) override {
    RpcLog rpcLog = startRpcLog(ctx, "Execute");
    if (grpc::Status s = gate_.check(*ctx, rpc::kExecute); !s.ok())
      return refuse(ctx, s, metrics_, "Execute", rpcLog);
    auto *reactor = new ExecuteReactor(ctx, response, logic_, metrics_, std::move(rpcLog));
    reactor->start(request);
    return reactor;
  }

private:
  ExecuteService &logic_;
  ServiceMetrics &metrics_;
  const Gate &gate_;
};

// Scrub: answered from the scrub's own thread (AdminService) when it ends,
// minutes later on a large store; a client that goes away stops it.
class ScrubReactor final : public grpc::ServerUnaryReactor {
public:
  ScrubReactor(grpc::ByteBuffer *response, AdminService &logic, ServiceMetrics &metrics, RpcLog rpc)
      : response_(response), logic_(logic), metrics_(metrics), rpc_(std::move(rpc)) {}
  void start(const grpc::ByteBuffer *bytes) {
    msl::v1::ScrubRequest request;
    if (grpc::Status s = parseRequest(bytes, request); !s.ok()) {
      finish({s, {}});
      return;
    }
    logic_.scrub(request, cancel_, [this](ScrubReply reply) { finish(std::move(reply)); });
  }
  void OnCancel() override { *cancel_ = true; }
  void OnDone() override { delete this; }

private:
  void finish(ScrubReply reply) {
    if (reply.status.ok())
      serialize(reply.response, *response_);
    metrics_.countRequest("Scrub", int(reply.status.error_code()));
    rpc_.finish(reply.status, reply.status.ok() ? log::Fields{{"report", reply.response.report()}} : log::Fields{});
    Finish(reply.status);
  }
  grpc::ByteBuffer *response_;
  AdminService &logic_;
  ServiceMetrics &metrics_;
  RpcLog rpc_;
  // Shared with the scrub's thread, which may outlive this reactor by the
  // moment between its answer and its exit.
  std::shared_ptr<std::atomic<bool>> cancel_ = std::make_shared<std::atomic<bool>>(false);
};

using AdminBase = msl::v1::Admin::WithRawCallbackMethod_Scrub<msl::v1::Admin::Service>;

class AdminGrpc final : public AdminBase {
public:
  AdminGrpc(AdminService &logic, ServiceMetrics &metrics, const Gate &gate)
      : logic_(logic), metrics_(metrics), gate_(gate) {}
  grpc::ServerUnaryReactor *Scrub(grpc::CallbackServerContext *ctx, const grpc::ByteBuffer *request,
                                  grpc::ByteBuffer *response) override {
    RpcLog rpcLog = startRpcLog(ctx, "Scrub");
    if (grpc::Status s = gate_.check(*ctx, rpc::kScrub); !s.ok())
      return refuse(ctx, s, metrics_, "Scrub", rpcLog);
    auto *reactor = new ScrubReactor(response, logic_, metrics_, std::move(rpcLog));
    reactor->start(request);
    return reactor;
  }

private:
  AdminService &logic_;
  ServiceMetrics &metrics_;
  const Gate &gate_;
};

std::filesystem::path selfDirectory() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::filesystem::path(".") : self.parent_path();
}

std::string defaultWorkerPath(const char *name) { return selfDirectory() / name; }

bool splitHostPort(const std::string &address, std::string &host, int &port) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos)
    return false;
  host = address.substr(0, colon);
  try {
    port = std::stoi(address.substr(colon + 1));
  } catch (...) {
    return false;
  }
  return port >= 0 && port < 65536;
}

// The PEM files of --tls-*, checked here so that a bad one is a clear error
// at start rather than a failed handshake later.
bool readPem(const std::string &path, const char *flag, std::string &out, std::string &error) {
  if (!readBoundedFile(path, 1 << 20, out, error)) {
    error = std::string(flag) + " " + error;
    return false;
  }
  return true;
}

// The PEM contents of a certificate, its key and a CA (`ca` empty: none),
// checked: each holds what it should and the key is the certificate's.
// `flags` names them in errors: "--tls" for --tls-cert, --tls-key,
// --tls-client-ca.
bool checkTlsFiles(const char *flags, const std::string &certFile, const std::string &keyFile,
                   const std::string &caFile, const std::string &cert, const std::string &key,
                   const std::string &ca, std::string &error) {
  std::string certFlag = std::string(flags) + "-cert ", keyFlag = std::string(flags) + "-key ";
  auto bio = [](const std::string &pem) { return BIO_new_mem_buf(pem.data(), int(pem.size())); };
  BIO *certBio = bio(cert), *keyBio = bio(key);
  X509 *x509 = PEM_read_bio_X509(certBio, nullptr, nullptr, nullptr);
  EVP_PKEY *pkey = PEM_read_bio_PrivateKey(keyBio, nullptr, nullptr, nullptr);
  bool ok = true;
  if (!x509) {
    error = certFlag + certFile + ": no PEM certificate in it";
    ok = false;
  } else if (!pkey) {
    error = keyFlag + keyFile + ": no PEM private key in it (or it is encrypted)";
    ok = false;
  } else if (X509_check_private_key(x509, pkey) != 1) {
    error = keyFlag + keyFile + " is not the key of " + certFlag + certFile;
    ok = false;
  }
  X509_free(x509);
  EVP_PKEY_free(pkey);
  BIO_free(certBio);
  BIO_free(keyBio);
  if (ok && !ca.empty()) {
    BIO *caBio = bio(ca);
    X509 *caCert = PEM_read_bio_X509(caBio, nullptr, nullptr, nullptr);
    if (!caCert) {
      error = std::string(flags) + "-client-ca " + caFile + ": no PEM certificate in it";
      ok = false;
    }
    X509_free(caCert);
    BIO_free(caBio);
  }
  ERR_clear_error();
  return ok;
}

// Reads and checks the files of --tls-* or --metrics-tls-* (`flags`).
bool readTlsFiles(const char *flags, const std::string &certFile, const std::string &keyFile,
                  const std::string &caFile, std::string &cert, std::string &key, std::string &ca,
                  std::string &error) {
  std::string f = flags;
  return readPem(certFile, (f + "-cert").c_str(), cert, error) && readPem(keyFile, (f + "-key").c_str(), key, error) &&
         (caFile.empty() || readPem(caFile, (f + "-client-ca").c_str(), ca, error)) &&
         checkTlsFiles(flags, certFile, keyFile, caFile, cert, key, ca, error);
}

// The metrics endpoint's TLS files, checked before anything starts (the
// endpoint itself starts last).
bool checkMetricsTls(const ServerOptions &options, std::string &error) {
  const MetricsTlsOptions &tls = options.metricsTls;
  if (!tls.enabled()) {
    if (!tls.clientCaFile.empty()) {
      error = "--metrics-tls-client-ca needs --metrics-tls-cert and --metrics-tls-key";
      return false;
    }
    return true;
  }
  if (tls.certFile.empty() || tls.keyFile.empty()) {
    error = "TLS of the metrics endpoint needs both --metrics-tls-cert and --metrics-tls-key";
    return false;
  }
  if (options.metricsListen.empty()) {
    error = "--metrics-tls-cert with an empty --metrics-listen: the metrics endpoint is off";
    return false;
  }
  std::string cert, key, ca;
  return readTlsFiles("--metrics-tls", tls.certFile, tls.keyFile, tls.clientCaFile, cert, key, ca, error);
}

// The gRPC port's credentials: plaintext, TLS, or TLS verifying clients.
std::shared_ptr<grpc::ServerCredentials> serverCredentials(const TlsOptions &tls, std::string &error) {
  if (!tls.enabled()) {
    if (!tls.clientCaFile.empty()) {
      error = "--tls-client-ca needs --tls-cert and --tls-key";
      return nullptr;
    }
    return grpc::InsecureServerCredentials();
  }
  if (tls.certFile.empty() || tls.keyFile.empty()) {
    error = "TLS needs both --tls-cert and --tls-key";
    return nullptr;
  }
  std::string cert, key, ca;
  if (!readTlsFiles("--tls", tls.certFile, tls.keyFile, tls.clientCaFile, cert, key, ca, error))
    return nullptr;
  grpc_ssl_client_certificate_request_type request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  if (!ca.empty())
    request = tls.requireClientCert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                    : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  grpc::SslServerCredentialsOptions ssl(request);
  ssl.pem_root_certs = ca;
  ssl.pem_key_cert_pairs.push_back({key, cert});
  return grpc::SslServerCredentials(ssl);
}

// The store as msld opens it (cache/README.md). An action entry's
// references are the artifacts of a compile result (CompileService) or the
// cubin digest (CubinCache); the two encodings cannot be confused: a
// CompileResponse's field 1 is a varint, a Digest's a string, so parsing
// either as the other yields nothing.
cache::StoreOptions storeOptionsFor(const ServerOptions &options) {
  cache::StoreOptions o;
  o.path = options.dataDir;
  o.max_bytes = options.cacheMaxBytes;
  o.sync_writes = options.syncWrites;
  o.action_references = [](std::string_view value) {
    std::vector<cache::Digest> refs;
    msl::v1::CompileResponse response;
    if (response.ParseFromArray(value.data(), int(value.size())))
      for (const auto &a : response.artifacts())
        if (isValidDigest(a.digest()))
          refs.push_back(fromProto(a.digest()));
    msl::v1::Digest cubin;
    if (cubin.ParseFromArray(value.data(), int(value.size())) && isValidDigest(cubin))
      refs.push_back(fromProto(cubin));
    return refs;
  };
  return o;
}

void refreshCacheMetrics(cache::ContentStore &store, uint64_t maxBytes, ServiceMetrics &m) {
  cache::StoreStats s = store.stats();
  m.cacheBytes.Set(double(s.cache_bytes));
  m.cacheMaxBytes.Set(double(maxBytes));
  m.actionCacheEntries.Set(double(s.action_entries));
  ServiceMetrics::mirrorCounter(m.cacheEvictionsBlob, double(s.evicted_blobs));
  ServiceMetrics::mirrorCounter(m.cacheEvictionsAction, double(s.evicted_entries));
  ServiceMetrics::mirrorCounter(m.cacheEvictedBytesBlob, double(s.evicted_blob_bytes));
  ServiceMetrics::mirrorCounter(m.cacheEvictedBytesAction, double(s.evicted_entry_bytes));
  ServiceMetrics::mirrorCounter(m.actionCachePutsDropped, double(s.action_puts_dropped));
}

} // namespace

int scrubStore(const ServerOptions &options, std::ostream &out) {
  cache::StoreOptions o = storeOptionsFor(options);
  o.create_if_missing = false;
  o.max_bytes = 0; // a scrub never evicts
  auto store = cache::ContentStore::open(o);
  if (!store) {
    out << "msld --scrub: cannot open the store at " << options.dataDir << ": " << store.status().toString()
        << "\n";
    return 1;
  }
  cache::ScrubReport report = (*store)->scrub();
  cache::StoreStats s = (*store)->stats();
  out << "msld --scrub: " << options.dataDir << ": " << (report.clean() ? "clean" : "repaired") << " "
      << report.toString() << " blobs=" << s.blob_count << " blob_bytes=" << s.total_bytes
      << " action_entries=" << s.action_entries << "\n";
  return report.status.isOk() ? 0 : 1;
}

// The payload region of an execution or CUDA worker (WorkerProtocol.h).
constexpr uint64_t kDefaultSharedPayloadBytes = 64ull << 20;

// How long msld polls an execution worker's pipe before it sleeps
// (WorkerPoolOptions::spinBeforeBlocking): a cached kernel's worker answers
// within ~100 us, and a core woken from idle costs tens of microseconds per
// wake-up, several per call.
constexpr std::chrono::microseconds kExecutionSpin{250};

WorkerPoolOptions defaultExecWorkers() {
  WorkerPoolOptions o;
  o.workers = 1;
  o.timeout = std::chrono::milliseconds(300000); // each request passes its own, at most this
  o.memoryLimitBytes = 8ull << 30;
  o.limitAddressSpace = false;
  o.maxResponseBytes = 512u << 20;
  o.sharedPayloadBytes = kDefaultSharedPayloadBytes;
  o.descriptorSocket = true; // clients' shared regions go to the worker
  o.spinBeforeBlocking = kExecutionSpin;
  o.role = "execution";
  return o;
}

CudaDevicesOptions defaultCudaDevices() {
  CudaDevicesOptions o;
  o.workers.timeout = std::chrono::milliseconds(300000); // each request passes its own, at most this
  o.workers.memoryLimitBytes = 0; // the driver maps far more than it writes; msld bounds the buffers
  o.workers.limitAddressSpace = false;
  o.workers.maxResponseBytes = 512u << 20;
  o.workers.startTimeout = std::chrono::milliseconds(60000); // a context takes a moment
  o.workers.sharedPayloadBytes = kDefaultSharedPayloadBytes; // as the cpu's: one flag sets both
  o.workers.descriptorSocket = true;
  o.workers.spinBeforeBlocking = kExecutionSpin;
  return o;
}

struct Server::Impl {
  ServerOptions options;
  std::shared_ptr<MetricsRegistry> registry = std::make_shared<MetricsRegistry>();
  ServiceMetrics metrics{*registry};
  std::unique_ptr<Authorizer> auth; // null: auth off
  std::unique_ptr<Gate> gate;
  std::unique_ptr<cache::ContentStore> store;
  std::unique_ptr<WorkerPool> workers;
  std::unique_ptr<CompileService> logic;
  std::unique_ptr<CompilerGrpc> compilerService;
  std::unique_ptr<CasGrpc> casService;
  std::unique_ptr<WorkerPool> execWorkers;
  std::unique_ptr<CudaDevices> cudaDevices;
  std::unique_ptr<ExecuteService> executeLogic;
  std::unique_ptr<LocalCalls> localCalls; // before sharedRegions, which hands it connections
  std::unique_ptr<SharedRegions> sharedRegions;
  std::unique_ptr<ExecutorGrpc> executorService;
  std::unique_ptr<AdminService> adminLogic; // after store: destroyed (joined) before it
  std::unique_ptr<AdminGrpc> adminService;
  std::unique_ptr<grpc::Server> grpcServer;
  std::unique_ptr<MetricsServer> metricsServer;
  int grpcPort = 0, metricsPort = 0;
  bool stopped = false;
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { shutdown(); }
int Server::grpcPort() const { return impl_->grpcPort; }
int Server::metricsPort() const { return impl_->metricsPort; }

std::string Server::authSummary() const { return impl_->auth ? impl_->auth->summary() : ""; }

bool Server::reloadAuth(std::string &error, std::string &summary) {
  error.clear();
  if (!impl_->auth) {
    summary = "auth is off";
    return false;
  }
  return impl_->auth->reload(error, &summary);
}

std::unique_ptr<Server> Server::start(const ServerOptions &options, std::string &error) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;

  // Credentials first: a bad file is refused before anything starts.
  std::shared_ptr<grpc::ServerCredentials> credentials = serverCredentials(options.tls, error);
  if (!credentials || !checkMetricsTls(options, error))
    return nullptr;
  if (!options.auth.subjectsFile.empty() && options.tls.clientCaFile.empty()) {
    error = "--auth-subjects needs --tls-client-ca (client certificates)";
    return nullptr;
  }
  if (options.auth.enabled()) {
    impl->auth = Authorizer::create(options.auth, error);
    if (!impl->auth)
      return nullptr;
  }
  impl->gate = std::make_unique<Gate>(impl->auth.get(), impl->metrics);

  auto store = cache::ContentStore::open(storeOptionsFor(options));
  if (!store) {
    error = "cannot open the store at " + options.dataDir + ": " + store.status().toString();
    return nullptr;
  }
  impl->store = store.take();

  WorkerPoolOptions poolOptions = options.workers;
  if (poolOptions.workerPath.empty())
    poolOptions.workerPath = defaultWorkerPath("msld-compile-worker");
  ServiceMetrics *metrics = &impl->metrics;
  poolOptions.onIdentityMismatch = [metrics] { metrics->workerIdentityMismatches.Increment(); };
  impl->workers = WorkerPool::start(poolOptions, error);
  if (!impl->workers)
    return nullptr;

  impl->logic = std::make_unique<CompileService>(*impl->store, *impl->workers, impl->metrics,
                                                 poolOptions.workers, options.service);
  impl->compilerService = std::make_unique<CompilerGrpc>(*impl->logic, impl->metrics, *impl->gate);

  if (options.execWorkers.workers > 0) {
    WorkerPoolOptions execOptions = options.execWorkers;
    if (execOptions.workerPath.empty())
      execOptions.workerPath = defaultWorkerPath("msld-exec-worker");
    execOptions.onIdentityMismatch = [metrics] { metrics->workerIdentityMismatches.Increment(); };
    impl->execWorkers = WorkerPool::start(execOptions, error);
    if (!impl->execWorkers)
      return nullptr;
  }
  {
    CudaDevicesOptions cudaOptions = options.cuda;
    if (!options.cudaEnabled)
      cudaOptions.workerPath.clear();
    else if (cudaOptions.workerPath.empty())
      cudaOptions.workerPath = defaultWorkerPath("msld-cuda-worker");
    cudaOptions.workers.onIdentityMismatch = [metrics] { metrics->workerIdentityMismatches.Increment(); };
    auto log = [](const std::string &line) { std::cerr << line << std::flush; };
    impl->cudaDevices = CudaDevices::start(cudaOptions, log);
    for (auto &gpu : impl->cudaDevices->gpus())
      std::cerr << "msld: " << gpu.device.name() << ": " << gpu.device.description() << ", driver "
                << gpu.device.driver_version() << "\n";
    if (impl->cudaDevices->gpus().empty())
      std::cerr << "msld: no CUDA device: " << impl->cudaDevices->unavailable() << "\n";
  }
  impl->executeLogic = std::make_unique<ExecuteService>(*impl->store, *impl->logic, impl->execWorkers.get(),
                                                        impl->metrics, options.execute, impl->cudaDevices.get());
  if (!options.sharedRegions.socketPath.empty()) {
    std::string why;
    // Execute calls without gRPC come in on the same socket (LocalCalls.h).
    LocalCallsOptions localOptions;
    localOptions.maxRequestBytes = size_t(std::max(0, options.maxReceiveBytes));
    localOptions.maxBytesHeld = uint64_t(std::max<int64_t>(0, options.grpcMemoryBytes));
    localOptions.spin = std::chrono::microseconds(
        options.localCallSpinUs >= 0 ? options.localCallSpinUs : std::thread::hardware_concurrency() >= 8 ? 1000 : 0);
    impl->localCalls =
        std::make_unique<LocalCalls>(*impl->executeLogic, impl->auth.get(), impl->metrics, localOptions);
    SharedRegionsOptions regionOptions = options.sharedRegions;
    LocalCalls *localCalls = impl->localCalls.get();
    regionOptions.takeCallConnection = [localCalls](int fd, uint64_t version) { localCalls->adopt(fd, version); };
    impl->sharedRegions = SharedRegions::start(regionOptions, why);
    if (!impl->sharedRegions) {
      error = "--shared-regions-socket: " + why;
      return nullptr;
    }
    impl->executeLogic->setSharedRegions(impl->sharedRegions.get());
    impl->localCalls->open(); // only now: a call may name a region
  }
  impl->executorService = std::make_unique<ExecutorGrpc>(*impl->executeLogic, impl->metrics, *impl->gate);
  impl->casService = std::make_unique<CasGrpc>(*impl->logic, impl->metrics, *impl->gate);
  CompileService *compileLogic = impl->logic.get();
  impl->adminLogic = std::make_unique<AdminService>(*impl->store, &impl->metrics,
                                                    [compileLogic] { compileLogic->countCorruption(); });
  impl->adminService = std::make_unique<AdminGrpc>(*impl->adminLogic, impl->metrics, *impl->gate);

  // What msld logs as "msld: sandbox: ...", for dashboards and alerts: one
  // series per pool that runs.
  impl->metrics.setWorkerSandboxed("compile", impl->workers->sandboxed());
  if (impl->execWorkers)
    impl->metrics.setWorkerSandboxed("execution", impl->execWorkers->sandboxed());
  if (!impl->cudaDevices->gpus().empty())
    impl->metrics.setWorkerSandboxed("cuda", false); // they need /dev/nvidia*: never sandboxed

  Impl *raw = impl.get();
  impl->registry->onCollect([raw] {
    raw->metrics.casBytes.Set(double(raw->store->totalBytes()));
    raw->metrics.casBlobs.Set(double(raw->store->blobCount()));
    refreshCacheMetrics(*raw->store, raw->options.cacheMaxBytes, raw->metrics);
    if (raw->sharedRegions) {
      raw->metrics.sharedRegions.Set(double(raw->sharedRegions->regions()));
      raw->metrics.sharedRegionBytes.Set(double(raw->sharedRegions->bytes()));
    }
  });

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, credentials, &impl->grpcPort);
  if (!options.listenUnix.empty()) {
    if (std::string why = checkUnixSocketPath(options.listenUnix); !why.empty()) {
      error = "--listen-unix " + options.listenUnix + ": " + why;
      return nullptr;
    }
    // The same services and credentials as the TCP port; gRPC replaces a
    // stale socket left by an earlier msld.
    builder.AddListeningPort("unix:" + options.listenUnix, credentials);
  }
  builder.SetMaxReceiveMessageSize(options.maxReceiveBytes);
  builder.SetMaxSendMessageSize(options.maxSendBytes);
  grpc::ResourceQuota quota("msld");
  quota.Resize(size_t(options.grpcMemoryBytes));
  quota.SetMaxThreads(options.grpcMaxThreads);
  builder.SetResourceQuota(quota);
  builder.RegisterService(impl->compilerService.get());
  builder.RegisterService(impl->casService.get());
  builder.RegisterService(impl->executorService.get());
  builder.RegisterService(impl->adminService.get());
  impl->grpcServer = builder.BuildAndStart();
  if (!impl->grpcServer || impl->grpcPort == 0) {
    error = "cannot listen on " + options.listen;
    return nullptr;
  }

  if (!options.metricsListen.empty()) {
    std::string host;
    int port = 0;
    if (!splitHostPort(options.metricsListen, host, port)) {
      error = "bad --metrics-listen address '" + options.metricsListen + "' (want HOST:PORT)";
      return nullptr;
    }
    impl->metricsServer = std::make_unique<MetricsServer>(impl->registry, options.metricsTls);
    std::string why;
    impl->metricsPort = impl->metricsServer->start(host, port, &why);
    if (impl->metricsPort < 0) {
      error = "cannot serve metrics on " + options.metricsListen + ": " + why;
      return nullptr;
    }
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::shutdown() {
  if (!impl_ || impl_->stopped)
    return;
  impl_->stopped = true;
  // A scrub would hold up the drain for as long as it reads: stopped first
  // (its caller gets UNAVAILABLE with what it checked).
  impl_->adminLogic->shutdown();
  if (auto *health = impl_->grpcServer->GetHealthCheckService())
    health->Shutdown(); // report NOT_SERVING while draining
  const auto drainDeadline = std::chrono::steady_clock::now() + impl_->options.drainTimeout;
  if (impl_->localCalls)
    impl_->localCalls->beginStop(drainDeadline);
  impl_->grpcServer->Shutdown(std::chrono::system_clock::now() + impl_->options.drainTimeout);
  impl_->grpcServer->Wait();
  if (impl_->localCalls)
    impl_->localCalls->stop(drainDeadline);
  impl_->executeLogic->shutdown();
  impl_->logic->shutdown();
  if (impl_->execWorkers)
    impl_->execWorkers->shutdown();
  if (impl_->cudaDevices)
    impl_->cudaDevices->shutdown();
  impl_->workers->shutdown();
  if (impl_->metricsServer)
    impl_->metricsServer->stop();
  impl_->sharedRegions.reset(); // after the last scrape, which reads it
  impl_->store.reset();
}

} // namespace msl::service
