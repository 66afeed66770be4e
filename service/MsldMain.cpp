//===- MsldMain.cpp - msld ------------------------------------------------===//
#include "LargeAllocations.h"
#include "RequestLog.h"
#include "Sandbox.h"
#include "Server.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <pthread.h>
#include <unistd.h>

int main(int argc, char **argv) {
  msl::service::reuseLargeAllocations();
  msl::service::ServerOptions options;
  auto &workers = options.workers;
  auto &service = options.service;
  CLI::App app{"msld: Metal Shading Language compiler daemon"};
  int64_t timeoutMs = workers.timeout.count();
  int64_t startTimeoutMs = workers.startTimeout.count();
  uint64_t memoryMb = workers.memoryLimitBytes >> 20;
  int64_t drainS = options.drainTimeout.count();
  std::string readyFile;
  app.add_option("--listen", options.listen, "gRPC HOST:PORT (port 0: any free port)")->capture_default_str();
  app.add_option("--listen-unix", options.listenUnix,
                 "also serve gRPC on this Unix socket path (clients: --server unix:PATH)");
  app.add_option("--shared-regions-socket", options.sharedRegions.socketPath,
                 "hand out shared memory regions on this Unix socket: local clients' buffers then travel through "
                 "memory msld and they both map, not through gRPC (msl::client::SharedRegion)");
  uint64_t sharedRegionMb = options.sharedRegions.maxRegionBytes >> 20;
  app.add_option("--shared-region-max-mb", sharedRegionMb, "largest shared region one client may ask for")
      ->capture_default_str()->check(CLI::Range(1, 1 << 20));
  app.add_option("--local-call-spin-us", options.localCallSpinUs,
                 "after answering a local call, poll this long for the connection's next before sleeping "
                 "(-1: 1000 with 8 or more hardware threads, else 0)")
      ->capture_default_str()->check(CLI::Range(-1, 100000));
  app.add_option("--data-dir", options.dataDir, "RocksDB directory of the cache")->capture_default_str();
  // The cache (cache/README.md): bound, durability, and the --scrub mode.
  app.add_option("--cache-max-bytes", options.cacheMaxBytes,
                 "keep blobs and action entries under this size by LRU eviction (e.g. 10G, 512M); 0: unbounded")
      ->capture_default_str()->transform(CLI::AsSizeValue(false));
  app.add_flag("--sync-writes", options.syncWrites,
               "fsync every cache write before acknowledging it (survives power loss; slower)");
  bool scrub = false;
  app.add_flag("--scrub", scrub,
               "verify every blob and action entry in --data-dir, drop what is corrupt, print a report and exit "
               "(msld must not be running on it)");
  app.add_option("--metrics-listen", options.metricsListen, "Prometheus /metrics HOST:PORT; empty: off")
      ->capture_default_str();
  app.add_option("--compile-workers", workers.workers, "compile worker processes")
      ->capture_default_str()->check(CLI::Range(1, 256));
  app.add_option("--compile-timeout-ms", timeoutMs, "wall-clock limit of one compile")
      ->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(24) * 3600 * 1000));
  app.add_option("--compile-memory-mb", memoryMb, "address-space limit of a worker; 0: none")
      ->capture_default_str();
  app.add_option("--worker-start-timeout-ms", startTimeoutMs,
                 "how long a new worker may take to start before it is killed")
      ->capture_default_str()->check(CLI::Range(int64_t(1), int64_t(600000)));
  app.add_option("--worker-path", workers.workerPath, "msld-compile-worker binary (default: beside msld)");
  app.add_option("--max-artifact-bytes", workers.maxResponseBytes,
                 "largest compile output (artifacts and diagnostics) a worker may return")
      ->capture_default_str()->check(CLI::Range(uint32_t(1) << 20, uint32_t(512) << 20));
  app.add_option("--max-queued-compiles", service.queue.maxQueued, "compiles waiting for a worker, in all")
      ->capture_default_str()->check(CLI::Range(size_t(1), size_t(1) << 20));
  app.add_option("--max-queued-per-client", service.queue.maxQueuedPerClient,
                 "compiles one client may have waiting")
      ->capture_default_str()->check(CLI::Range(size_t(1), size_t(1) << 20));
  app.add_option("--max-compile-input-bytes", service.maxCompileInputBytes,
                 "sources and headers of one compile together")
      ->capture_default_str()->check(CLI::Range(int64_t(1) << 10, int64_t(1) << 30));
  app.add_option("--max-blob-bytes", service.maxBlobBytes, "largest blob the store accepts")
      ->capture_default_str()->check(CLI::Range(int64_t(1) << 10, int64_t(1) << 32));
  app.add_option("--max-batch-read-bytes", service.maxBatchReadBytes, "blob bytes in one BatchReadBlobs response")
      ->capture_default_str()->check(CLI::Range(size_t(1) << 10, size_t(48) << 20));
  app.add_option("--max-receive-bytes", options.maxReceiveBytes, "largest gRPC request message")
      ->capture_default_str()->check(CLI::Range(1 << 16, 1 << 30));
  int64_t grpcMemoryMb = options.grpcMemoryBytes >> 20;
  app.add_option("--grpc-memory-mb", grpcMemoryMb, "memory gRPC may hold for requests in flight")
      ->capture_default_str()->check(CLI::Range(int64_t(16), int64_t(1) << 20));
  auto &exec = options.execWorkers;
  uint64_t execMemoryMb = exec.memoryLimitBytes >> 20;
  app.add_option("--exec-workers", exec.workers, "execution worker processes (the cpu device); 0: none")
      ->capture_default_str()->check(CLI::Range(0, 64));
  app.add_option("--exec-memory-mb", execMemoryMb, "memory an execution worker may write; 0: no limit")
      ->capture_default_str();
  uint64_t sharedPayloadsMb = exec.sharedPayloadBytes >> 20;
  app.add_option("--exec-shared-payloads-mb", sharedPayloadsMb,
                 "shared memory per execution and CUDA worker through which buffers travel (larger ones go "
                 "through its pipe); 0: none")
      ->capture_default_str()->check(CLI::Range(uint64_t(0), uint64_t(4096)));
  app.add_option("--exec-worker-path", exec.workerPath, "msld-exec-worker binary (default: beside msld)");
  std::string cuda = "auto";
  app.add_option("--cuda", cuda, "CUDA devices: auto (every GPU msld-cuda-worker finds) or off")
      ->capture_default_str()->check(CLI::IsMember({"auto", "off"}));
  app.add_option("--cuda-worker-path", options.cuda.workerPath, "msld-cuda-worker binary (default: beside msld)");
  app.add_option("--exec-timeout-ms", options.execute.defaultTimeoutMs,
                 "time limit of an Execute's kernel (from its first dispatch) when the request gives none")
      ->capture_default_str()->check(CLI::Range(1u, 300000u));
  app.add_option("--exec-jit-timeout-ms", options.execute.jitTimeoutMs,
                 "time limit of an Execute's JIT (the request's transfer and compiling the kernel for the "
                 "device), before the kernel's own from its first dispatch")
      ->capture_default_str()->check(CLI::Range(1u, msl::service::ExecuteServiceOptions::kMaxJitTimeoutMs));
  uint64_t execBytesMb = options.execute.maxBytesInFlight >> 20;
  app.add_option("--exec-bytes-in-flight-mb", execBytesMb,
                 "buffer memory msld holds for queued and running executions")
      ->capture_default_str()->check(CLI::Range(uint64_t(1), uint64_t(1) << 20));
  app.add_option("--drain-timeout-s", drainS, "on SIGTERM, how long in-flight requests may finish")
      ->capture_default_str();
  app.add_option("--ready-file", readyFile,
                 "write {\"grpc_port\":N,\"metrics_port\":M} here once serving");
  auto &tls = options.tls;
  app.add_option("--tls-cert", tls.certFile, "serve gRPC over TLS with this PEM certificate (chain)")
      ->check(CLI::ExistingFile);
  app.add_option("--tls-key", tls.keyFile, "the PEM private key of --tls-cert")->check(CLI::ExistingFile);
  app.add_option("--tls-client-ca", tls.clientCaFile,
                 "verify client certificates against this PEM CA (mTLS; needs --tls-cert)")
      ->check(CLI::ExistingFile);
  std::string clientAuth = "require";
  app.add_option("--tls-client-auth", clientAuth,
                 "with --tls-client-ca: require a client certificate, or accept clients without one "
                 "(and verify those that send one)")
      ->capture_default_str()->check(CLI::IsMember({"require", "optional"}));
  auto &metricsTls = options.metricsTls;
  app.add_option("--metrics-tls-cert", metricsTls.certFile,
                 "serve /metrics over HTTPS with this PEM certificate (chain); default: plain HTTP")
      ->check(CLI::ExistingFile);
  app.add_option("--metrics-tls-key", metricsTls.keyFile, "the PEM private key of --metrics-tls-cert")
      ->check(CLI::ExistingFile);
  app.add_option("--metrics-tls-client-ca", metricsTls.clientCaFile,
                 "require client certificates of scrapers, verified against this PEM CA (needs "
                 "--metrics-tls-cert)")
      ->check(CLI::ExistingFile);
  app.add_option("--auth-tokens", options.auth.tokensFile,
                 "require 'authorization: Bearer TOKEN': lines 'TOKEN ROLE[,ROLE...]' (reloaded on SIGHUP)")
      ->check(CLI::ExistingFile);
  app.add_option("--auth-subjects", options.auth.subjectsFile,
                 "roles of client certificates: lines 'CN ROLE[,ROLE...]' (needs --tls-client-ca; reloaded on "
                 "SIGHUP)")
      ->check(CLI::ExistingFile);
  // Logging (service/RequestLog.h): text by default, JSON lines for collectors.
  std::string logFormat = "text", logLevel = "info";
  app.add_option("--log-format", logFormat, "stderr log: text lines, or one JSON object per line")
      ->capture_default_str()->check(CLI::IsMember({"text", "json"}));
  app.add_option("--log-level", logLevel, "lowest level of request log lines (debug adds 'rpc started')")
      ->capture_default_str()->check(CLI::IsMember({"debug", "info", "warn", "error"}));
  // The compile and execution workers' sandbox (service/Sandbox.h).
  std::string sandboxMode = "auto";
  app.add_option("--sandbox", sandboxMode,
                 "compile and execution workers in namespaces with a seccomp filter: auto (where the machine "
                 "allows it, else rlimits only), on (refuse to start without), off")
      ->capture_default_str()->check(CLI::IsMember({"auto", "on", "off"}));
  bool requireSandbox = false;
  app.add_flag("--require-sandbox", requireSandbox, "same as --sandbox on");
  CLI11_PARSE(app, argc, argv);
  if (requireSandbox)
    sandboxMode = "on";
  {
    msl::service::log::Format format;
    msl::service::log::Level level;
    msl::service::log::parseFormat(logFormat, format);
    msl::service::log::parseLevel(logLevel, level);
    msl::service::log::configure(format, level);
  }
  tls.requireClientCert = clientAuth == "require";
  workers.timeout = std::chrono::milliseconds(timeoutMs);
  workers.startTimeout = std::chrono::milliseconds(startTimeoutMs);
  workers.memoryLimitBytes = memoryMb << 20;
  options.sharedRegions.maxRegionBytes = sharedRegionMb << 20;
  options.drainTimeout = std::chrono::seconds(drainS);
  options.grpcMemoryBytes = grpcMemoryMb << 20;
  exec.memoryLimitBytes = execMemoryMb << 20;
  exec.sharedPayloadBytes = sharedPayloadsMb << 20;
  options.cuda.workers.sharedPayloadBytes = sharedPayloadsMb << 20;
  options.cudaEnabled = cuda == "auto";
  options.cuda.workers.startTimeout = std::max(options.cuda.workers.startTimeout, workers.startTimeout);
  options.execute.maxBytesInFlight = execBytesMb << 20;

  if (scrub)
    return msl::service::scrubStore(options, std::cout);

  // Signals are taken by sigwait below, never delivered to worker threads.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  sigaddset(&stopSignals, SIGTERM);
  sigaddset(&stopSignals, SIGINT);
  sigaddset(&stopSignals, SIGHUP); // reloads the auth files
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);

  if (sandboxMode != "off") {
    std::string why;
    if (!msl::service::sandboxAvailable(why)) {
      if (sandboxMode == "on") {
        std::cerr << "msld: --sandbox on: workers cannot be sandboxed on this machine: " << why << "\n";
        return 1;
      }
      std::cerr << "msld: sandbox unavailable (" << why
                << "): compile and execution workers run with rlimits only (--sandbox on refuses to start)\n";
    } else {
      for (msl::service::WorkerPoolOptions *pool : {&workers, &exec}) {
        pool->sandbox.enabled = true;
        pool->sandbox.required = sandboxMode == "on";
      }
      // What the debugging hooks of the compile workers read and write.
      if (const char *dir = std::getenv("MSLD_COMPILE_REPLAY_DIR"); dir && *dir)
        workers.sandbox.readOnlyPaths.push_back(dir);
      if (const char *dir = std::getenv("MSLD_COMPILE_RECORD_DIR"); dir && *dir) {
        if (::geteuid() == 0) { // its sandboxed workers would be nobody, who cannot write there
          workers.sandbox.enabled = false;
          std::cerr << "msld: MSLD_COMPILE_RECORD_DIR is set: compile workers run unsandboxed to record "
                       "(rlimits only)\n";
        } else {
          workers.sandbox.writablePaths.push_back(dir);
        }
      }
    }
  }

  std::string error;
  auto server = msl::service::Server::start(options, error);
  if (!server) {
    std::cerr << "msld: " << error << "\n";
    return 1;
  }
  std::string metricsNote =
      options.metricsListen.empty() ? "metrics off"
      : "metrics (" +
            std::string(!metricsTls.enabled()               ? "plain HTTP"
                        : metricsTls.clientCaFile.empty() ? "HTTPS"
                                                          : "HTTPS, client certificates required") +
            ") on port " + std::to_string(server->metricsPort());
  std::cerr << "msld: serving gRPC" << (tls.enabled() ? " over TLS" : "")
            << (tls.clientCaFile.empty() ? ""
                : tls.requireClientCert ? " (client certificates required)"
                                        : " (client certificates verified when sent)")
            << " on port " << server->grpcPort() << ", " << metricsNote << ", data in " << options.dataDir << "\n";
  if (std::string auth = server->authSummary(); !auth.empty())
    std::cerr << "msld: auth on: " << auth << "\n";
  if (!options.auth.tokensFile.empty() && !tls.enabled())
    std::cerr << "msld: warning: --auth-tokens without --tls-cert: tokens travel in plaintext; use TLS beyond "
                 "loopback\n";
  // Whether the workers are sandboxed: one line, and the ready file.
  bool compileSandboxed = false, execSandboxed = false;
  for (const auto &note : msl::service::sandboxNotes()) {
    if (note.role == "compile")
      compileSandboxed = note.sandboxed;
    if (note.role == "execution")
      execSandboxed = note.sandboxed;
  }
  std::cerr << "msld: sandbox: compile workers " << (compileSandboxed ? "sandboxed" : "not sandboxed")
            << ", execution workers "
            << (exec.workers == 0 ? "none" : execSandboxed ? "sandboxed" : "not sandboxed")
            << (compileSandboxed || execSandboxed
                    ? " (own user, mount, PID and network namespaces, read-only root of the binary and its "
                      "libraries, no new privileges, seccomp allow-list)"
                    : "")
            << "; CUDA workers are never sandboxed (they need /dev/nvidia*)\n";
  if (!readyFile.empty()) {
    std::ofstream(readyFile + ".tmp") << "{\"grpc_port\":" << server->grpcPort()
                                      << ",\"metrics_port\":" << server->metricsPort()
                                      << ",\"sandbox\":{\"compile\":" << (compileSandboxed ? "true" : "false")
                                      << ",\"execution\":" << (execSandboxed ? "true" : "false")
                                      << ",\"cuda\":false}}\n";
    std::rename((readyFile + ".tmp").c_str(), readyFile.c_str());
  }
  int signal = 0;
  while (sigwait(&stopSignals, &signal) == 0 && signal == SIGHUP) {
    std::string error, summary;
    if (server->reloadAuth(error, summary))
      std::cerr << "msld: SIGHUP: auth files reloaded: " << summary << "\n";
    else if (!error.empty())
      std::cerr << "msld: SIGHUP: auth files not reloaded, keeping the old ones (" << summary << "): " << error
                << "\n";
    else
      std::cerr << "msld: SIGHUP: ignored (no --auth-tokens or --auth-subjects)\n";
  }
  std::cerr << "msld: " << strsignal(signal) << ": draining in-flight requests\n";
  server->shutdown();
  std::cerr << "msld: stopped\n";
  return 0;
}
