#include "ExecCopyTiming.h"

#include "msl/client/SharedRegion.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
                                              const std::string &input, int calls) {
  struct Way {
    std::shared_ptr<grpc::Channel> channel; // kept for the stub
    std::unique_ptr<msl::v1::Executor::Stub> stub;
    const msl::v1::ExecuteRequest *request;
  };
  std::vector<CopyTransport> out;
  std::vector<Way> ways;
  out.push_back({"TCP 127.0.0.1", "tcp", {}, {}});
  ways.push_back({client.channel(), msl::v1::Executor::NewStub(client.channel()), &request});
  std::unique_ptr<msl::client::Client> unixClient;
  if (!unixAddress.empty()) {
    msl::client::ClientOptions options = client.options();
    options.address = unixAddress;
    unixClient = std::make_unique<msl::client::Client>(options);
    out.push_back({"Unix socket", "unix", {}, {}});
    ways.push_back({unixClient->channel(), msl::v1::Executor::NewStub(unixClient->channel()), &request});
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
    ways.push_back({client.channel(), msl::v1::Executor::NewStub(client.channel()), &sharedRequest});
    if (unixClient) {
      out.push_back({"Unix socket, buffers in a shared region", "shared_unix", {}, {}});
      ways.push_back({unixClient->channel(), msl::v1::Executor::NewStub(unixClient->channel()), &sharedRequest});
    }
  }
  // The wall time of the Execute call alone; the checks follow it.
  auto call = [&](const Way &way, bool wantHit, double *kernelUs) {
    const bool shared = way.request == &sharedRequest;
    char *sharedOut = shared ? region->data() + input.size() : nullptr;
    if (shared)
      std::memset(sharedOut, 0, input.size());
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + client.options().call_deadline);
    msl::v1::ExecuteResponse resp;
    auto t0 = std::chrono::steady_clock::now();
    grpc::Status s = way.stub->Execute(&ctx, *way.request, &resp);
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
    if (!s.ok()) die(msl::client::describeStatus(s));
    if (wantHit && !resp.compile_cache_hit()) die("expected compile_cache_hit");
    if (resp.dispatch_time_ns_size() != 1) die("expected 1 dispatch time");
    if (resp.buffers_size() != 1 || resp.buffers(0).buffer() != 1) die("expected buffer 1 back");
    if (shared) {
      if (!resp.buffers(0).in_shared_region()) die("the output is not in the shared region");
      if (std::memcmp(sharedOut, input.data(), input.size()) != 0) die("the shared region's output differs");
    } else {
      if (resp.buffers(0).has_digest()) die("output returned by digest, not inline");
      if (resp.buffers(0).inline_data() != input) die("output differs from the input");
    }
    *kernelUs = double(resp.dispatch_time_ns(0)) / 1000.0;
    return us;
  };
  double k;
  call(ways[0], false, &k); // compile (miss), the device's JIT
  for (const Way &w : ways)
    for (int i = 0; i < 10; ++i)
      call(w, true, &k);
  for (int i = 0; i < calls; ++i)
    for (size_t t = 0; t < ways.size(); ++t) {
      out[t].rpc.push_back(call(ways[t], true, &k));
      out[t].kernel.push_back(k);
    }
  return out;
}

} // namespace msl::bench
