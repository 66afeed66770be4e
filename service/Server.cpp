#include "Server.h"

#include "CompileService.h"
#include "Metrics.h"
#include "WorkerPool.h"
#include "msl/v1/cas.grpc.pb.h"
#include "msl/v1/compiler.grpc.pb.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <filesystem>
#include <unistd.h>

namespace msl::service {
namespace {

// Counts every RPC by method and final status.
template <typename Fn>
grpc::Status counted(ServiceMetrics &metrics, const char *method, Fn &&fn) {
  grpc::Status status = fn();
  static const char *kCodes[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
                                 "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS",
                                 "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
                                 "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                                 "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  int code = int(status.error_code());
  metrics.requests.add(1, {{"method", method},
                           {"code", code >= 0 && code <= 16 ? kCodes[code] : "UNKNOWN"}});
  return status;
}

class CompilerGrpc final : public msl::v1::Compiler::Service {
public:
  CompilerGrpc(CompileService &logic, ServiceMetrics &metrics) : logic_(logic), metrics_(metrics) {}
  grpc::Status Compile(grpc::ServerContext *, const msl::v1::CompileRequest *request,
                       msl::v1::CompileResponse *response) override {
    auto start = std::chrono::steady_clock::now();
    grpc::Status s = counted(metrics_, "Compile", [&] { return logic_.compile(*request, *response); });
    if (s.ok())
      metrics_.compileLatency.observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
          {{"cache", response->cache_hit() ? "hit" : "miss"}});
    return s;
  }

private:
  CompileService &logic_;
  ServiceMetrics &metrics_;
};

class CasGrpc final : public msl::v1::ContentAddressableStorage::Service {
public:
  CasGrpc(CompileService &logic, ServiceMetrics &metrics) : logic_(logic), metrics_(metrics) {}
  grpc::Status FindMissingBlobs(grpc::ServerContext *, const msl::v1::FindMissingBlobsRequest *req,
                                msl::v1::FindMissingBlobsResponse *resp) override {
    return counted(metrics_, "FindMissingBlobs", [&] { return logic_.findMissingBlobs(*req, *resp); });
  }
  grpc::Status BatchUpdateBlobs(grpc::ServerContext *, const msl::v1::BatchUpdateBlobsRequest *req,
                                msl::v1::BatchUpdateBlobsResponse *resp) override {
    return counted(metrics_, "BatchUpdateBlobs", [&] { return logic_.batchUpdateBlobs(*req, *resp); });
  }
  grpc::Status BatchReadBlobs(grpc::ServerContext *, const msl::v1::BatchReadBlobsRequest *req,
                              msl::v1::BatchReadBlobsResponse *resp) override {
    return counted(metrics_, "BatchReadBlobs", [&] { return logic_.batchReadBlobs(*req, *resp); });
  }

private:
  CompileService &logic_;
  ServiceMetrics &metrics_;
};

std::string defaultWorkerPath() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(".") : self.parent_path()) / "msld-compile-worker";
}

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

} // namespace

struct Server::Impl {
  ServerOptions options;
  MetricsRegistry registry;
  ServiceMetrics metrics{registry};
  std::unique_ptr<cache::ContentStore> store;
  std::unique_ptr<WorkerPool> workers;
  std::unique_ptr<CompileService> logic;
  std::unique_ptr<CompilerGrpc> compilerService;
  std::unique_ptr<CasGrpc> casService;
  std::unique_ptr<grpc::Server> grpcServer;
  std::unique_ptr<MetricsServer> metricsServer;
  int grpcPort = 0, metricsPort = 0;
  bool stopped = false;
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { shutdown(); }
int Server::grpcPort() const { return impl_->grpcPort; }
int Server::metricsPort() const { return impl_->metricsPort; }

std::unique_ptr<Server> Server::start(const ServerOptions &options, std::string &error) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;

  cache::StoreOptions storeOptions;
  storeOptions.path = options.dataDir;
  auto store = cache::ContentStore::open(storeOptions);
  if (!store) {
    error = "cannot open the store at " + options.dataDir + ": " + store.status().toString();
    return nullptr;
  }
  impl->store = store.take();

  WorkerPoolOptions poolOptions;
  poolOptions.workerPath = options.workerPath.empty() ? defaultWorkerPath() : options.workerPath;
  poolOptions.workers = options.compileWorkers;
  poolOptions.timeout = options.compileTimeout;
  poolOptions.memoryLimitBytes = options.compileMemoryBytes;
  impl->workers = WorkerPool::start(poolOptions, error);
  if (!impl->workers)
    return nullptr;

  impl->logic = std::make_unique<CompileService>(*impl->store, *impl->workers, impl->metrics);
  impl->compilerService = std::make_unique<CompilerGrpc>(*impl->logic, impl->metrics);
  impl->casService = std::make_unique<CasGrpc>(*impl->logic, impl->metrics);

  Impl *raw = impl.get();
  impl->registry.onCollect([raw] {
    raw->metrics.casBytes.set(double(raw->store->totalBytes()));
    raw->metrics.casBlobs.set(double(raw->store->blobCount()));
  });

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &impl->grpcPort);
  builder.SetMaxReceiveMessageSize(options.maxMessageBytes);
  builder.SetMaxSendMessageSize(options.maxMessageBytes);
  builder.RegisterService(impl->compilerService.get());
  builder.RegisterService(impl->casService.get());
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
    impl->metricsServer = std::make_unique<MetricsServer>(impl->registry);
    impl->metricsPort = impl->metricsServer->start(host, port);
    if (impl->metricsPort < 0) {
      error = "cannot serve metrics on " + options.metricsListen;
      return nullptr;
    }
  }
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

void Server::shutdown() {
  if (!impl_ || impl_->stopped)
    return;
  impl_->stopped = true;
  if (auto *health = impl_->grpcServer->GetHealthCheckService())
    health->Shutdown(); // report NOT_SERVING while draining
  impl_->grpcServer->Shutdown(std::chrono::system_clock::now() + impl_->options.drainTimeout);
  impl_->grpcServer->Wait();
  impl_->workers->shutdown();
  if (impl_->metricsServer)
    impl_->metricsServer->stop();
  impl_->store.reset();
}

} // namespace msl::service
