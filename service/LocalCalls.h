//===- LocalCalls.h - Execute over msld's local socket, without gRPC ------===//
//
// A client on msld's host that runs short kernels in a loop pays more for
// gRPC's round trip (HTTP/2 framing, metadata, its threads' wake-ups: about
// 300 us on the H200's host, bench/RESULTS.md) than the device spends on a
// 1 MiB copy in and out. Such a client can send its Execute calls over
// msld's local socket (--shared-regions-socket) instead: the same
// msl.v1.ExecuteRequest, checked, authorized, queued, logged and counted as
// over gRPC, in a length-prefixed frame on a Unix stream connection.
//
// The connection (msl::client::ClientOptions::local_socket):
//   client -> msld: "MSLDEXE1" and 8 zero bytes (the version)
//   msld -> client: "OK\n", or "ERR <why>\n" and the connection is closed
//   then, any number of times, one call at a time:
//   client -> msld: u32 little-endian length, msl.v1.LocalExecuteRequest
//   msld -> client: u32 little-endian length, msl.v1.LocalExecuteReply
// A frame larger than the limit, or one that stops arriving for
// frameTimeoutMs, ends the connection (the first with a RESOURCE_EXHAUSTED
// reply); a frame that is no LocalExecuteRequest is INVALID_ARGUMENT and the
// connection goes on. A client that closes its connection cancels its call,
// as a gRPC client that goes away does; a call past its timeout_ms is
// cancelled and answered DEADLINE_EXCEEDED.
//
// Each connection has a thread of its own. The answer is written by the
// thread that has it (the device's dispatcher), so no wake-up lies between
// the worker's answer and the client; after it the connection's thread polls
// for the next request for `spin` before it sleeps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>

namespace msl::service {

class Authorizer;
class ExecuteService;
class ServiceMetrics;

struct LocalCallsOptions {
  /// Largest request frame (msld's --max-receive-bytes, as for gRPC).
  size_t maxRequestBytes = 64 << 20;
  /// Connections served at once, a thread each, and of those one user
  /// (the peer's uid) may hold. 64, 16.
  unsigned maxConnections = 64;
  unsigned maxConnectionsPerUser = 16;
  /// A connection that sends no request for this long is closed (the
  /// client opens another when it needs one). 60 s.
  unsigned idleTimeoutMs = 60000;
  /// Bytes of request frames (and their parses) all connections hold at
  /// once; past it a frame is refused (RESOURCE_EXHAUSTED) and its
  /// connection closed. msld: --grpc-memory-mb, as gRPC's own bound.
  uint64_t maxBytesHeld = 256ull << 20;
  /// How long a frame may take to arrive once begun, and a reply to be
  /// taken by its client. 2 s.
  unsigned frameTimeoutMs = 2000;
  /// After a reply, how long a connection's thread polls for the next
  /// request before it sleeps on the socket. 1 ms (msld: --local-call-spin-us).
  std::chrono::microseconds spin{1000};
};

class LocalCalls {
public:
  /// `auth` null: no authorization (as gRPC's Gate).
  LocalCalls(ExecuteService &execute, const Authorizer *auth, ServiceMetrics &metrics, LocalCallsOptions options = {});
  ~LocalCalls(); // stop(now)

  /// Starts taking connections (refused as "msld is starting" until then:
  /// the ExecuteService must be complete first).
  void open();
  /// Takes `fd`, a connection that sent "MSLDEXE1" and its 8 version bytes
  /// (`version`): answers "OK\n" and serves it on a thread of its own, or
  /// "ERR <why>\n" and closes it.
  void adopt(int fd, uint64_t version);
  /// Stops serving: new connections and calls are refused, idle
  /// connections closed, calls in flight answered until `drainDeadline`,
  /// then cancelled. Returns at once (stop() waits).
  void beginStop(std::chrono::steady_clock::time_point drainDeadline);
  /// beginStop, then returns once every connection's thread has ended.
  void stop(std::chrono::steady_clock::time_point drainDeadline);

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace msl::service
