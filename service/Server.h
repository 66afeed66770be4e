//===- Server.h - msld: the daemon's wiring -------------------------------===//
//
// Opens the store, starts the compile workers, the gRPC services (Compiler,
// ContentAddressableStorage, Executor, Admin, grpc.health.v1) and the
// metrics endpoint. The request logic is in CompileService, ExecuteService
// and AdminService.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "Auth.h"
#include "SharedRegions.h"
#include "CompileService.h"
#include "ExecuteService.h"
#include "WorkerPool.h"

#include <chrono>
#include <iosfwd>
#include <memory>
#include <string>

namespace msl::service {

/// The execution workers' defaults (see ServerOptions::execWorkers), and
/// the CUDA workers' (ServerOptions::cuda).
WorkerPoolOptions defaultExecWorkers();
CudaDevicesOptions defaultCudaDevices();

/// gRPC over TLS (README "Security"): all three are PEM files.
struct TlsOptions {
  std::string certFile;     // --tls-cert: the server's certificate chain; empty: plaintext
  std::string keyFile;      // --tls-key: its private key
  std::string clientCaFile; // --tls-client-ca: verify client certificates against it (mTLS)
  /// With a client CA: refuse connections without a client certificate
  /// (true), or accept them and verify the certificates that are sent.
  bool requireClientCert = true;
  bool enabled() const { return !certFile.empty() || !keyFile.empty(); }
};

struct ServerOptions {
  /// gRPC address. Port 0 picks a free port (see Server::grpcPort).
  std::string listen = "127.0.0.1:8980";
  /// Also serve on this Unix socket (local clients: no TCP stack, about
  /// half an Execute's transfer time; bench/RESULTS.md). Same services,
  /// credentials and auth; who may connect is the socket file's mode (the
  /// umask's). Empty: none.
  std::string listenUnix;
  /// Shared regions for clients on this host (SharedRegions.h): buffers
  /// through memory both map instead of through gRPC. socketPath empty
  /// (the default): none.
  SharedRegionsOptions sharedRegions;
  /// After answering a local call (LocalCalls.h), how long the connection's
  /// thread polls for the next before it sleeps, in microseconds; -1: 1000
  /// where the machine has 8 or more hardware threads, else 0 (on a small
  /// machine the poll takes a core from the kernel it waits for).
  int localCallSpinUs = -1;
  /// RocksDB directory (created if missing).
  std::string dataDir = "msld-data";
  /// Prometheus endpoint address; empty disables it.
  std::string metricsListen = "127.0.0.1:9464";
  /// The compile workers: count, limits, binary (workerPath empty means
  /// next to this executable). See WorkerPoolOptions for the defaults.
  WorkerPoolOptions workers;
  /// Request bounds, the queue, inline and batch sizes (CompileServiceOptions).
  CompileServiceOptions service;
  /// The execution workers (msld-exec-worker): the CPU device. workers = 0
  /// runs none (no device). Defaults: 1 worker (it uses every core), 8 GiB
  /// of written memory (RLIMIT_DATA: guard regions reserve address space).
  WorkerPoolOptions execWorkers = defaultExecWorkers();
  /// The CUDA devices: one msld-cuda-worker per GPU the probe finds
  /// (workerPath empty means next to this executable). `cudaEnabled` false
  /// runs none.
  bool cudaEnabled = true;
  CudaDevicesOptions cuda = defaultCudaDevices();
  ExecuteServiceOptions execute;
  /// How long SIGTERM waits for in-flight requests before cancelling them.
  std::chrono::seconds drainTimeout{30};
  /// Largest gRPC message accepted. 80 MiB (a compile's inputs, 64 MiB, and
  /// framing); larger ones are refused by gRPC as RESOURCE_EXHAUSTED.
  int maxReceiveBytes = 80 << 20;
  /// Largest gRPC message sent. 64 MiB (BatchReadBlobs and inline
  /// artifacts are bounded below it; large blobs stream with Read).
  int maxSendBytes = 64 << 20;
  /// Memory gRPC may use for requests in flight (its ResourceQuota). Past
  /// it gRPC resets the largest streams (RESOURCE_EXHAUSTED to the client):
  /// gRPC 1.51 buffers a message in full before it checks maxReceiveBytes
  /// (grpc/grpc#43012), so this, not that, bounds msld's memory. 256 MiB.
  int64_t grpcMemoryBytes = 256ll << 20;
  /// Threads of gRPC's synchronous services (health). 16.
  int grpcMaxThreads = 16;
  /// TLS of the gRPC port (the metrics endpoint has its own, metricsTls).
  TlsOptions tls;
  /// TLS of the metrics endpoint (--metrics-tls-*); plain HTTP without it.
  MetricsTlsOptions metricsTls;
  /// Tokens and certificate subjects, and their roles; off when both
  /// files are empty.
  AuthOptions auth;
  /// The cache (cache/README.md): its bound in bytes, blobs plus action
  /// entries, kept by LRU eviction (--cache-max-bytes; 0: unbounded), and
  /// whether every write is fsynced before it is acknowledged (--sync-writes).
  uint64_t cacheMaxBytes = 0;
  bool syncWrites = false;
};

/// msld --scrub: opens the store at options.dataDir (no msld may be serving
/// it: RocksDB locks it), re-hashes every blob and checks every action entry,
/// drops what is corrupt and the entries referencing dropped blobs, and
/// writes a one-line report to `out`. 0 when the scrub read everything, 1
/// when the store could not be opened or read through.
int scrubStore(const ServerOptions &options, std::ostream &out);

class Server {
public:
  /// Starts everything; null (with `error` set) if any part cannot start.
  static std::unique_ptr<Server> start(const ServerOptions &options, std::string &error);
  ~Server();
  int grpcPort() const;
  int metricsPort() const;
  /// Re-reads the --auth-tokens/--auth-subjects files (SIGHUP). On an error
  /// the credentials in use stay; false with `error`. `summary` says what is
  /// loaded ("3 tokens"); false with an empty error when auth is off.
  bool reloadAuth(std::string &error, std::string &summary);
  /// What auth has loaded ("3 tokens, 1 certificate subjects"); "" when off.
  std::string authSummary() const;
  /// Stops accepting, drains in-flight requests (up to the drain timeout),
  /// stops the workers and closes the store.
  void shutdown();

  struct Impl;

private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace msl::service
