// The Execute RPC's cost for a cached copy kernel (1 MiB in, 1 MiB out), as
// msl-bench (cpu) and msl-bench-gpu-exec (cuda) measure it: the same calls
// over each local transport, alternated call by call so that all see the
// same machine, every answer checked.
#pragma once

#include "msl/client/Client.h"

#include <string>
#include <vector>

namespace msl::bench {

struct CopyTransport {
  std::string name; // "TCP 127.0.0.1", "Unix socket", "TCP, buffers in a shared region"
  std::string key;  // "tcp", "unix", "shared", "shared_unix"
  std::vector<double> rpc, kernel; // microseconds per call: Execute's wall time, the kernel's dispatch_time_ns
};

// `request` runs copy_buffer with buffer 0 = `input` inline and buffer 1 its
// output (zeros). Times it over `client` (TCP), over `unixAddress` when not
// empty, and over TCP (and the Unix socket) with both buffers in a shared
// region from `regionsSocket` when not empty: one compiling call, 10 warm-ups each,
// then `calls` rounds. Exits (with the reason) on any failed or wrong call.
std::vector<CopyTransport> timeCopyTransports(const msl::client::Client &client, const std::string &unixAddress,
                                              const std::string &regionsSocket, const msl::v1::ExecuteRequest &request,
                                              const std::string &input, int calls);

} // namespace msl::bench
