// Client library for msld, the Metal Shading Language compile daemon.
//
// Speaks the msl.v1.ContentAddressableStorage, msl.v1.Compiler and
// msl.v1.Executor services
// (proto/msl/v1/*.proto) plus the standard grpc.health.v1.Health service.
// Every method is synchronous and thread-safe (one Client may be shared by
// several threads).
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "msl/v1/cas.grpc.pb.h"
#include "msl/v1/compiler.grpc.pb.h"
#include "msl/v1/digest.pb.h"
#include "msl/v1/execute.grpc.pb.h"

namespace msl::client {

// Either a value or a non-OK grpc::Status (with its message).
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit on purpose
  Result(grpc::Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = grpc::Status(grpc::StatusCode::UNKNOWN, "error without a status");
  }

  bool ok() const { return value_.has_value(); }
  explicit operator bool() const { return ok(); }

  // OK when the result holds a value.
  const grpc::Status& status() const { return status_; }

  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }

 private:
  std::optional<T> value_;
  grpc::Status status_;  // OK iff value_ is set
};

// Connection and call settings. Defaults are what `mslc` uses.
struct ClientOptions {
  // "HOST:PORT" (any gRPC target string works, e.g. "unix:/run/msld.sock").
  std::string address = "127.0.0.1:8980";
  // Channel credentials; null means those of `tls` below: TLS when
  // tls.enabled, else an insecure (plaintext) channel.
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // TLS to an msld started with --tls-cert/--tls-key (README "Security").
  // PEM contents, not paths (loadTlsFiles reads the files).
  struct Tls {
    bool enabled = false;
    // The CA that signed the server's certificate; "" uses gRPC's default
    // roots ($GRPC_DEFAULT_SSL_ROOTS_FILE_PATH or the system's).
    std::string root_certs_pem;
    // This client's certificate chain and private key, for a server that
    // verifies client certificates (--tls-client-ca, mTLS); both or neither.
    std::string cert_chain_pem;
    std::string private_key_pem;
  } tls;
  // Sent as "authorization: Bearer TOKEN" metadata on every RPC when not
  // empty (msld --auth-tokens). Never logged.
  std::string auth_token;
  // Sent as "x-request-id" metadata on every RPC when not empty: msld logs
  // it on the RPC's log lines (and echoes it in the response metadata; it
  // makes one up when none is sent). Printable ASCII, at most 128 bytes
  // (msld replaces other bytes with '_' and cuts longer ids).
  std::string request_id;
  // Deadline applied to every RPC, counted from when the call starts.
  std::chrono::milliseconds call_deadline = std::chrono::seconds(120);
  // Largest message sent or received, in bytes (64 MiB). Batches of blobs
  // are split so that each request and response stays below it.
  int max_message_bytes = 64 * 1024 * 1024;
  // compileFiles sends a file inline when it is at most this large, and by
  // digest (uploading it only when the store lacks it) otherwise.
  std::size_t inline_threshold = 64 * 1024;
  // Reconnect backoff of the channel (gRPC's own defaults are 1 s / 120 s,
  // too slow for a CLI waiting for a daemon that is starting).
  std::chrono::milliseconds initial_reconnect_backoff = std::chrono::milliseconds(250);
  std::chrono::milliseconds max_reconnect_backoff = std::chrono::seconds(5);
  // msld's --shared-regions-socket, for a client on msld's host: execute()
  // sends its calls there, without gRPC (service/LocalCalls.h: the same
  // request, checks, auth, queue, logs and metrics, a fraction of the round
  // trip). Every other call still goes over gRPC to `address`. "" (the
  // default): Execute over gRPC too.
  std::string local_socket;
  // execute() polls for its answer for up to this long before its thread
  // sleeps: a caller that runs short kernels in a loop saves the wake-up of
  // a sleeping thread (tens of microseconds, more on a virtual machine) per
  // call, at the price of a busy core while it waits. 0 (the default):
  // sleep at once.
  std::chrono::microseconds busy_poll{0};
};

// How waitUntilHealthy established that the server is up.
enum class HealthSource {
  kHealthService,  // grpc.health.v1.Health/Check answered SERVING
  kCasProbe,       // no health service; an empty FindMissingBlobs succeeded
};

struct HealthCheck {
  HealthSource source = HealthSource::kHealthService;
};

// Lowercase hex SHA-256 of the bytes (OpenSSL EVP).
std::string sha256Hex(std::string_view bytes);
// The store's digest of the bytes: {sha256Hex(bytes), size}.
msl::v1::Digest digestOf(std::string_view bytes);
// "UNAVAILABLE", "NOT_FOUND", ... for a status code.
std::string_view statusCodeName(grpc::StatusCode code);
// "CODE: message" (or "CODE" when the message is empty).
std::string describeStatus(const grpc::Status& status);

// Fills options->tls from PEM files: the CA to verify the server with
// (`ca_file`, "" for gRPC's default roots) and, for mTLS, the client's
// certificate and key (both or neither). Sets tls.enabled. False with
// *error naming the file on failure.
bool loadTlsFiles(const std::string& ca_file, const std::string& cert_file, const std::string& key_file,
                  ClientOptions* options, std::string* error);

class LocalChannel;

class Client {
 public:
  explicit Client(ClientOptions options);
  explicit Client(const std::string& address);  // the other options default

  const ClientOptions& options() const { return options_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

  // Waits (retrying) until the server reports SERVING for the overall
  // service "" of grpc.health.v1.Health or, where that service is not
  // implemented, until an empty FindMissingBlobs succeeds. DEADLINE_EXCEEDED
  // (with the last failure in the message) if that does not happen in time.
  Result<HealthCheck> waitUntilHealthy(std::chrono::system_clock::time_point deadline) const;
  Result<HealthCheck> waitUntilHealthy(std::chrono::milliseconds timeout) const;

  // The digests the store does not hold (in the server's order).
  Result<std::vector<msl::v1::Digest>> findMissingBlobs(
      const std::vector<msl::v1::Digest>& digests) const;

  // Stores the blobs (in as many BatchUpdateBlobs calls as the message size
  // needs) and returns their digests, in order. The first per-blob failure
  // is returned as the status.
  Result<std::vector<msl::v1::Digest>> uploadBlobs(const std::vector<std::string>& blobs) const;

  // Like uploadBlobs, but first asks FindMissingBlobs and uploads only what
  // is missing. Returns every blob's digest, in order.
  Result<std::vector<msl::v1::Digest>> uploadMissingBlobs(
      const std::vector<std::string>& blobs) const;

  // Streams one blob of any size with ContentAddressableStorage.Read,
  // verifying it against its digest (DATA_LOSS on mismatch).
  Result<std::string> readBlob(const msl::v1::Digest& digest) const;
  // Reads the blobs, in order; each is checked against its digest
  // (DATA_LOSS on mismatch). A blob the store lacks fails the whole call
  // with NOT_FOUND. Blobs too large for a batch are streamed with readBlob.
  Result<std::vector<std::string>> readBlobs(const std::vector<msl::v1::Digest>& digests) const;

  // One Compile RPC, as is. Artifacts may come without inline_data; see
  // fetchArtifact.
  Result<msl::v1::CompileResponse> compile(const msl::v1::CompileRequest& request) const;

  // The artifact's bytes: its inline_data, or else read from the store by
  // its digest.
  Result<std::string> fetchArtifact(const msl::v1::Artifact& artifact) const;

  // Builds a CompileRequest from file contents and compiles it. Files (the
  // main source included) larger than options().inline_threshold go by
  // digest, uploaded only where FindMissingBlobs reports them missing; the
  // rest go inline. `files` maps request paths (relative, normalized, e.g.
  // "shaders/common.h") to contents. On return every artifact of a
  // successful compile has its bytes in inline_data (fetched when the
  // server did not inline them). `function_constants` gives values of
  // [[function_constant]] constants by index or name ("use_bias" -> "true").
  Result<msl::v1::CompileResponse> compileFiles(
      const std::string& main_path, const std::string& main_bytes,
      const std::map<std::string, std::string>& files, const std::vector<std::string>& options,
      const msl::v1::Target& target, const std::vector<msl::v1::ArtifactKind>& outputs,
      const std::map<std::string, std::string>& function_constants = {}) const;

  // The CompileRequest compileFiles sends (files inline or by digest, as
  // described there), with every file sent by digest already in the store
  // (uploaded where FindMissingBlobs reports it missing). For requests that
  // embed a compile, such as ExecuteRequest.compile.
  Result<msl::v1::CompileRequest> prepareCompileRequest(
      const std::string& main_path, const std::string& main_bytes,
      const std::map<std::string, std::string>& files, const std::vector<std::string>& options,
      const msl::v1::Target& target, const std::vector<msl::v1::ArtifactKind>& outputs,
      const std::map<std::string, std::string>& function_constants = {}) const;

  // Executor.ListDevices: the devices the server runs kernels on.
  Result<msl::v1::ListDevicesResponse> listDevices() const;

  // One Executor.Execute RPC (with the client's deadline; give the request
  // a timeout_ms below it). On success every BufferResult and TextureResult
  // has its bytes in inline_data: those the server returned by digest are
  // read from the store (readBlobs).
  Result<msl::v1::ExecuteResponse> execute(const msl::v1::ExecuteRequest& request) const;

 private:
  // The deadline and the token.
  void prepare(grpc::ClientContext& context) const;
  void addToken(grpc::ClientContext& context) const;
  // prepareCompileRequest; `by_digest` gets the contents sent by digest.
  Result<msl::v1::CompileRequest> buildCompileRequest(
      const std::string& main_path, const std::string& main_bytes,
      const std::map<std::string, std::string>& files, const std::vector<std::string>& options,
      const msl::v1::Target& target, const std::vector<msl::v1::ArtifactKind>& outputs,
      const std::map<std::string, std::string>& function_constants,
      std::vector<std::string>* by_digest) const;
  // Request payload budget for one batch (below max_message_bytes).
  std::size_t batchBudget() const;

  ClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<msl::v1::ContentAddressableStorage::Stub> cas_;
  std::unique_ptr<msl::v1::Compiler::Stub> compiler_;
  std::unique_ptr<msl::v1::Executor::Stub> executor_;
  std::shared_ptr<LocalChannel> local_;  // options_.local_socket's calls
};

}  // namespace msl::client
