//===- Server.h - msld: the daemon's wiring -------------------------------===//
//
// Opens the store, starts the compile workers, the gRPC services (Compiler,
// ContentAddressableStorage, grpc.health.v1) and the metrics endpoint. All
// request logic is in CompileService.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <memory>
#include <string>

namespace msl::service {

struct ServerOptions {
  /// gRPC address. Port 0 picks a free port (see Server::grpcPort).
  std::string listen = "127.0.0.1:8980";
  /// RocksDB directory (created if missing).
  std::string dataDir = "msld-data";
  /// Prometheus endpoint address; empty disables it.
  std::string metricsListen = "127.0.0.1:9464";
  int compileWorkers = 2;
  std::chrono::milliseconds compileTimeout{60000};
  uint64_t compileMemoryBytes = 4ull << 30;
  /// The msld-compile-worker binary; empty means next to this executable.
  std::string workerPath;
  /// How long SIGTERM waits for in-flight requests before cancelling them.
  std::chrono::seconds drainTimeout{30};
  /// Largest gRPC message accepted or sent. 64 MiB.
  int maxMessageBytes = 64 << 20;
};

class Server {
public:
  /// Starts everything; null (with `error` set) if any part cannot start.
  static std::unique_ptr<Server> start(const ServerOptions &options, std::string &error);
  ~Server();
  int grpcPort() const;
  int metricsPort() const;
  /// Stops accepting, drains in-flight requests (up to the drain timeout),
  /// stops the workers and closes the store.
  void shutdown();

  struct Impl;

private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace msl::service
