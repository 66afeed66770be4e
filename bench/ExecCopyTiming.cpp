#include "ExecCopyTiming.h"

#include "msl/client/SharedRegion.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

namespace msl::bench {
namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "Execute copy_buffer: %s\n", message.c_str());
  std::exit(1);
}

} // namespace

std::vector<CopyTransport> timeCopyTransports(const msl::client::Client &client, const std::string &unixAddress,
                                              const std::string &regionsSocket, const msl::v1::ExecuteRequest &request,
                                              const std::string &input, int calls, std::vector<CopyCall> *callLog) {
  struct Way {
    const msl::client::Client *client;
    const msl::v1::ExecuteRequest *request;
  };
  std::vector<CopyTransport> out;
  std::vector<Way> ways;
  out.push_back({"TCP 127.0.0.1", "tcp", {}, {}});
  ways.push_back({&client, &request});
  std::unique_ptr<msl::client::Client> unixClient, pollingClient, localClient, localPollingClient;
  if (!unixAddress.empty()) {
    msl::client::ClientOptions options = client.options();
    options.address = unixAddress;
    unixClient = std::make_unique<msl::client::Client>(options);
    out.push_back({"Unix socket", "unix", {}, {}});
    ways.push_back({unixClient.get(), &request});
  }
  // Both buffers in one shared region: in at 0, out after it; nothing of
  // either in the messages.
  std::unique_ptr<msl::client::SharedRegion> region;
  msl::v1::ExecuteRequest sharedRequest = request;
  if (!regionsSocket.empty()) {
    auto opened = msl::client::SharedRegion::open(regionsSocket, 2 * input.size());
    if (!opened.ok()) die("shared region: " + msl::client::describeStatus(opened.status()));
    region = std::move(opened).value();
    std::memcpy(region->data(), input.data(), input.size());
    *sharedRequest.mutable_buffers(0)->mutable_shared() = region->range(0, input.size());
    *sharedRequest.mutable_buffers(1)->mutable_shared() = region->range(input.size(), input.size());
    out.push_back({"TCP, buffers in a shared region", "shared", {}, {}});
    ways.push_back({&client, &sharedRequest});
    msl::client::ClientOptions options;
    if (unixClient) {
      out.push_back({"Unix socket, buffers in a shared region", "shared_unix", {}, {}});
      ways.push_back({unixClient.get(), &sharedRequest});
      options = unixClient->options();
      options.busy_poll = std::chrono::milliseconds(5);
      pollingClient = std::make_unique<msl::client::Client>(options);
      out.push_back({"Unix socket, buffers in a shared region, client busy-polls", "shared_unix_poll", {}, {}});
      ways.push_back({pollingClient.get(), &sharedRequest});
    }
    // Without gRPC: msld's local socket (service/LocalCalls.h), sleeping and
    // busy-polling for the answer.
    options = client.options();
    options.local_socket = regionsSocket;
    localClient = std::make_unique<msl::client::Client>(options);
    out.push_back({"local socket (no gRPC), buffers in a shared region", "local", {}, {}});
    ways.push_back({localClient.get(), &sharedRequest});
    options.busy_poll = std::chrono::milliseconds(5);
    localPollingClient = std::make_unique<msl::client::Client>(options);
    out.push_back({"local socket (no gRPC), buffers in a shared region, client busy-polls", "local_poll", {}, {}});
    ways.push_back({localPollingClient.get(), &sharedRequest});
  }
  auto steadyNs = [](std::chrono::steady_clock::time_point t) {
    return static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count());
  };
  // The wall time of the Execute call alone; the checks follow it.
  auto call = [&](size_t w, bool wantHit, double *kernelUs) {
    const Way &way = ways[w];
    const bool shared = way.request == &sharedRequest;
    char *sharedOut = shared ? region->data() + input.size() : nullptr;
    if (shared)
      std::memset(sharedOut, 0, input.size());
    auto t0 = std::chrono::steady_clock::now();
    auto resp = way.client->execute(*way.request);
    auto t1 = std::chrono::steady_clock::now();
    double us = std::chrono::duration<double, std::micro>(t1 - t0).count();
    if (!resp.ok()) die(msl::client::describeStatus(resp.status()));
    if (callLog)
      callLog->push_back({out[w].key, steadyNs(t0), steadyNs(t1)});
    if (wantHit && !resp->compile_cache_hit()) die("expected compile_cache_hit");
    if (resp->dispatch_time_ns_size() != 1) die("expected 1 dispatch time");
    if (resp->buffers_size() != 1 || resp->buffers(0).buffer() != 1) die("expected buffer 1 back");
    if (shared) {
      if (!resp->buffers(0).in_shared_region()) die("the output is not in the shared region");
      if (std::memcmp(sharedOut, input.data(), input.size()) != 0) die("the shared region's output differs");
    } else {
      if (resp->buffers(0).has_digest()) die("output returned by digest, not inline");
      if (resp->buffers(0).inline_data() != input) die("output differs from the input");
    }
    *kernelUs = double(resp->dispatch_time_ns(0)) / 1000.0;
    return us;
  };
  // MSL_BENCH_TRANSPORTS=tcp,local,...: only those (the first call, which
  // compiles, stays on TCP).
  if (const char *only = std::getenv("MSL_BENCH_TRANSPORTS"); only && *only) {
    const std::string wanted = std::string(",") + only + ",";
    for (size_t w = ways.size(); w-- > 1;)
      if (wanted.find("," + out[w].key + ",") == std::string::npos) {
        ways.erase(ways.begin() + long(w));
        out.erase(out.begin() + long(w));
      }
  }
  double k;
  call(0, false, &k); // compile (miss), the device's JIT
  for (size_t w = 0; w < ways.size(); ++w)
    for (int i = 0; i < 10; ++i)
      call(w, true, &k);
  for (int i = 0; i < calls; ++i)
    for (size_t t = 0; t < ways.size(); ++t) {
      out[t].rpc.push_back(call(t, true, &k));
      out[t].kernel.push_back(k);
    }
  return out;
}

void writeCallLog(const std::string &path, const std::vector<CopyCall> &calls) {
  std::ofstream log(path);
  for (const auto &c : calls)
    log << c.key << " sent_at_ns " << c.sentAtNs << " received_at_ns " << c.receivedAtNs << "\n";
  if (!log) die("cannot write " + path);
}

} // namespace msl::bench
