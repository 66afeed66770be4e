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
  std::string key;  // "tcp", "unix", "shared", "shared_unix", "shared_unix_poll"
  std::vector<double> rpc, kernel; // microseconds per call: Execute's wall time, the kernel's dispatch_time_ns
};

// One Execute as the client saw it, in the order the calls were made
// (warm-ups included): its transport's key, and when it was sent and its
// answer received (steady_clock nanoseconds: CLOCK_MONOTONIC, which msld on
// the same host reports in MSLD_EXEC_TIMING's *_at_ns too).
struct CopyCall {
  std::string key;
  long long sentAtNs = 0, receivedAtNs = 0;
};

// `request` runs copy_buffer with buffer 0 = `input` inline and buffer 1 its
// output (zeros). Times it over `client` (TCP), over `unixAddress` when not
// empty, and over TCP (and the Unix socket) with both buffers in a shared
// region from `regionsSocket` when not empty (over the Unix socket also with a
// client that busy-polls its answer, ClientOptions::busy_poll): one compiling
// call, 10 warm-ups each, then `calls` rounds. Every call goes into
// `callLog` when given. Exits (with the reason) on any failed or wrong call.
std::vector<CopyTransport> timeCopyTransports(const msl::client::Client &client, const std::string &unixAddress,
                                              const std::string &regionsSocket, const msl::v1::ExecuteRequest &request,
                                              const std::string &input, int calls,
                                              std::vector<CopyCall> *callLog = nullptr);

// Writes `calls` to `path`, one "KEY sent_at_ns N received_at_ns N" line
// each (scripts/exec-stages.py reads it beside MSLD_EXEC_TIMING's lines).
void writeCallLog(const std::string &path, const std::vector<CopyCall> &calls);

} // namespace msl::bench
