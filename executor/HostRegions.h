//===- HostRegions.h - Clients' shared regions, as a worker maps them -----===//
//
// A buffer bound from a client's shared region (service/SharedRegions.h)
// is read and written by the execution worker itself, in the region's own
// pages: msld passes the region's memfd over the worker's descriptor
// socket (service/WorkerProtocol.h sendDescriptors) and names the range in
// ExecBuffer.host, so neither msld nor the pipe copies the bytes, and a GPU
// moves them by DMA straight from and to the client's memory.
//
// A worker keeps what it mapped, by the region's serial, for the next
// request naming it (mapping and, on a GPU, registering pages costs more
// than the copies it saves), until msld no longer lists the region as live
// (ExecWorkerRequest.live_host_regions) or more than `keep` are held.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/internal/exec_worker.pb.h"

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace msl::executor {

/// Per request buffer: where its bytes lie in a mapped region, or an empty
/// span (its bytes are in the request).
using HostBuffers = std::vector<std::span<char>>;

class HostRegions {
public:
  struct Hooks {
    /// After a region is mapped, before it is unmapped (a GPU device
    /// registers its pages with the driver for DMA).
    std::function<void(char *, size_t)> mapped, unmapping;
  };
  /// `socket`: the worker's end of its descriptor socket (-1: none, and a
  /// request naming regions is refused). `keep`: regions held at most.
  explicit HostRegions(int socket, Hooks hooks = {}, size_t keep = 8);
  ~HostRegions();
  HostRegions(const HostRegions &) = delete;
  HostRegions &operator=(const HostRegions &) = delete;

  enum class Result { Ok, BadRequest, OutOfStep };
  /// Takes the request's descriptors off the socket (when it names
  /// regions), maps the regions not held yet, drops held ones msld no
  /// longer has, and fills `buffers` (one entry per request buffer).
  /// BadRequest: `error` says why (a range outside its region, a region
  /// that cannot be mapped). OutOfStep: the descriptors are not there;
  /// the worker must exit (its socket no longer matches its requests).
  Result prepare(const msl::internal::ExecWorkerRequest &request, HostBuffers &buffers, std::string &error);

  /// prepare(), then `run` with the buffers when Ok; a BadRequest is the
  /// response's error. False when OutOfStep (`why` says so): exit.
  bool run(const msl::internal::ExecWorkerRequest &request, msl::internal::ExecWorkerResponse &response,
           const std::function<msl::internal::ExecWorkerResponse(const HostBuffers &)> &execute, std::string &why);

  /// Regions held now.
  size_t held() const { return held_.size(); }

private:
  struct Held {
    char *base = nullptr;
    size_t size = 0;
    uint64_t lastUse = 0;
  };
  void drop(std::map<uint64_t, Held>::iterator it);

  int socket_;
  Hooks hooks_;
  size_t keep_;
  uint64_t uses_ = 0;
  HostBuffers buffers_; // run()'s
  std::map<uint64_t, Held> held_; // by serial
};

} // namespace msl::executor
