//===- SharedRegions.h - Memory shared with clients on msld's host --------===//
//
// An Execute buffer of a megabyte costs more in gRPC (serialized, framed,
// copied through the socket and parsed, each way) than the kernel and the
// device's copies together. A client on msld's host can instead ask for a
// shared region: memory msld creates (a sealed memfd), maps, and hands to
// the client, which maps it too. A request then names a range of the region
// as a buffer's contents (msl.v1.SharedRange); msld reads the range before
// the kernel runs and writes the buffer's final bytes back into it, as
// Metal's MTLStorageModeShared buffers are seen by both sides.
//
// The same socket takes Execute calls without gRPC (LocalCalls.h).
//
// Asking for one (--shared-regions-socket PATH, a Unix stream socket):
//   client -> msld: "MSLDSHM1" and the size in bytes, 8 bytes little-endian
//                   (msl::client::openSharedRegion, clients/include/msl/client/Client.h)
//   msld -> client: "OK <token>\n" with the memfd attached (SCM_RIGHTS), or
//                   "ERR <why>\n" without one
// The token (128 random bits, hex) names the region in requests; nobody
// else learns it, and the region lives while that connection stays open
// (closing it frees the region once the requests reading it finish). The
// memfd is sealed against shrinking and growing, so a client cannot take
// pages from under msld or its workers. What a client writes into its
// region while a request reads it reaches only that request's results.
//
// The execution worker reads a request's ranges from the region's pages and
// writes the returned buffers' bytes back there before msld answers (no
// process copies them on the way). msld answers a call it stopped
// (CANCELLED, or its deadline) only once its worker is gone, so nothing is
// written after that answer; a client whose own deadline passed first
// (gRPC ends the call at the client at once) must let the ranges it bound
// as outputs settle for as long as msld takes to stop the worker (tens of
// milliseconds) before it reuses them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace msl::service {

struct SharedRegionsOptions {
  /// The Unix socket regions are asked for on; "" (the default): none.
  std::string socketPath;
  /// Largest region one client may ask for. Default 1 GiB.
  uint64_t maxRegionBytes = 1ull << 30;
  /// All regions together. Default 4 GiB.
  uint64_t maxTotalBytes = 4ull << 30;
  /// Regions (connections) open at once. Default 64.
  unsigned maxRegions = 64;
  /// How long a connection may take to send its request. Default 2 s.
  unsigned requestTimeoutMs = 2000;
  /// A connection that opens with "MSLDEXE1" and 8 version bytes instead
  /// (Execute calls without gRPC, LocalCalls.h) is handed to this, which
  /// takes its descriptor; none (the default): it is refused.
  std::function<void(int fd, uint64_t version)> takeCallConnection;
};

/// One region, mapped in msld.
struct SharedRegion {
  std::string token;
  char *base = nullptr;
  uint64_t size = 0;
  /// Its memfd, which msld passes to the execution worker that runs a
  /// request reading it (service/WorkerProtocol.h sendDescriptors): the
  /// worker reads and writes the buffers in the region's own pages.
  int fd = -1;
  /// Never reused while msld runs (what a worker keeps its mapping by).
  uint64_t serial = 0;
  ~SharedRegion();
};

class SharedRegions {
public:
  /// Listens on options.socketPath and serves it on a thread of its own;
  /// null with `error` set when it cannot.
  static std::unique_ptr<SharedRegions> start(const SharedRegionsOptions &options, std::string &error);
  ~SharedRegions(); // stops serving; regions still in use stay mapped until released

  /// The open region of `token`, or null.
  std::shared_ptr<SharedRegion> find(const std::string &token) const;
  /// The serials of the regions open now.
  std::vector<uint64_t> serials() const;
  /// Regions open now, and their bytes.
  unsigned regions() const;
  uint64_t bytes() const;

  struct Impl;

private:
  explicit SharedRegions(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace msl::service
