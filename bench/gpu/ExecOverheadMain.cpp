// msl-bench-gpu-exec: the Execute RPC's cost for a cached kernel on a GPU:
// bench/gpu/copy.metal's copy_buffer, 1 MiB in (inline) and 1 MiB out
// (returned inline), dispatchThreads 262144 with 256 per threadgroup,
// repeat 1, on --device (cuda:0). One call compiles and loads the module,
// 10 warm up, then --calls are timed (wall clock around the Executor stub's
// call; every output checked to equal the input, every call a compile-cache
// hit). Prints p50/p99 and the kernel's p50 (dispatch_time_ns) and writes
// them to --output as "key value" lines for msl-bench-gpu --rpc-result;
// --call-log FILE: every call's transport, send and receive times (to line
// up with msld's MSLD_EXEC_TIMING lines: scripts/gpu-bench.sh).
//
// --record-only: just Compile the kernel for --device's target (msld here,
// started with MSLD_COMPILE_RECORD_DIR, records it for the GPU machine,
// whose compile worker replays it: scripts/gpu-bench.sh).
//
// Without --msld it starts msld from its own directory with --exec-workers 0
// (the GPU machine has no CPU device) and the flags in --msld-arg.
#include "BenchSupport.h"
#include "ExecCopyTiming.h"

#include "msl/client/Client.h"
#include "msl/client/MslcRun.h"
#include "msl/v1/execute.grpc.pb.h"

#include <grpcpp/grpcpp.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {


[[noreturn]] void die(const std::string &m) {
  std::cerr << "msl-bench-gpu-exec: " << m << "\n";
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  std::string device = "cuda:0", address, source = "bench/gpu/copy.metal", output, callLogPath;
  std::vector<std::string> msldArgs;
  int calls = 300;
  bool recordOnly = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--device") device = next();
    else if (a == "--msld") address = next();
    else if (a == "--msld-arg") msldArgs.push_back(next());
    else if (a == "--source") source = next();
    else if (a == "--calls") calls = std::max(1, std::atoi(next().c_str()));
    else if (a == "--output") output = next();
    else if (a == "--call-log") callLogPath = next();
    else if (a == "--record-only") recordOnly = true;
    else
      die("usage: msl-bench-gpu-exec [--device cuda:0] [--msld HOST:PORT] [--msld-arg FLAG]... "
          "[--source copy.metal] [--calls N] [--output FILE] [--call-log FILE] [--record-only]");
  }
  std::ifstream in(source);
  if (!in) die("cannot read " + source);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string copySource = ss.str();

  msl::bench::DaemonProcess daemon;
  if (address.empty()) {
    msl::bench::DaemonOptions o;
    o.msld = msl::bench::besideSelf("msld").string();
    o.tempPrefix = "msl-bench-gpu-exec";
    o.listenUnix = true;
    o.sharedRegions = true;
    if (!std::filesystem::exists(std::filesystem::path(o.msld).parent_path() / "msld-exec-worker"))
      o.extraArgs = {"--exec-workers", "0"};
    o.extraArgs.insert(o.extraArgs.end(), msldArgs.begin(), msldArgs.end());
    if (std::string error; !daemon.start(o, &error)) die(error);
    address = "127.0.0.1:" + std::to_string(daemon.grpcPort());
  }
  msl::client::ClientOptions copts;
  copts.address = address;
  copts.call_deadline = std::chrono::seconds(120);
  msl::client::Client client(copts);
  if (auto h = client.waitUntilHealthy(std::chrono::seconds(60)); !h.ok())
    die(address + " not healthy: " + msl::client::describeStatus(h.status()));

  auto req0 = client.prepareCompileRequest("copy.metal", copySource, {}, {},
                                           msl::client::mslc::targetForDevice(device),
                                           msl::client::mslc::outputsForDevice(device));
  if (!req0) die("compile request: " + msl::client::describeStatus(req0.status()));
  auto compiled = client.compile(*req0);
  if (!compiled) die("Compile: " + msl::client::describeStatus(compiled.status()));
  if (!compiled->success()) die("copy.metal does not compile");
  if (recordOnly) {
    std::cout << "compiled copy.metal for " << device << "\n";
    if (daemon.pid() > 0) daemon.stop();
    return 0;
  }

  std::string description;
  if (auto devices = client.listDevices())
    for (const auto &d : devices->devices())
      if (d.name() == device) description = d.description() + ", driver " + d.driver_version();
  if (description.empty()) die("msld at " + address + " has no device " + device);

  constexpr uint32_t kFloats = 262144; // 1 MiB of floats
  std::string input(kFloats * sizeof(float), '\0');
  for (uint32_t i = 0; i < kFloats; ++i) {
    float v = static_cast<float>(i) * 0.25f - 1000.0f;
    std::memcpy(input.data() + i * sizeof(float), &v, sizeof v);
  }
  msl::v1::ExecuteRequest req;
  *req.mutable_compile() = *req0;
  req.set_kernel("copy_buffer");
  req.set_device(device);
  req.add_buffers()->set_inline_(input);
  req.add_buffers()->set_zeros(input.size());
  for (uint32_t b = 0; b < 2; ++b) {
    auto *bind = req.add_buffer_bindings();
    bind->set_index(b);
    bind->set_buffer(b);
  }
  req.mutable_dispatch()->mutable_threads()->set_x(kFloats);
  req.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(256);
  req.set_repeat(1);

  // Over TCP loopback and, with our own msld, over its Unix socket and with
  // the buffers in a shared region too, alternated call by call.
  std::vector<msl::bench::CopyCall> callLog;
  auto transports = msl::bench::timeCopyTransports(client, daemon.unixAddress(), daemon.sharedRegionsSocket(), req,
                                                   input, calls, &callLog);
  if (!callLogPath.empty())
    msl::bench::writeCallLog(callLogPath, callLog);
  std::ofstream o;
  if (!output.empty()) o.open(output);
  for (auto &t : transports) {
    double p50 = msl::bench::percentile(t.rpc, .5), p99 = msl::bench::percentile(t.rpc, .99),
           k50 = msl::bench::percentile(t.kernel, .5);
    std::printf("msl-bench-gpu-exec: %s (%s): Execute copy_buffer 1 MiB in + 1 MiB out over %s, %d calls: RPC p50 "
                "%.1f us, p99 %.1f us; kernel p50 %.1f us\n",
                device.c_str(), description.c_str(), t.name.c_str(), calls, p50, p99, k50);
    // The first transport's keys keep their old names (tcp).
    std::string prefix = &t == &transports[0] ? "" : t.key + "_";
    if (o)
      o << prefix << "calls " << calls << "\n" << prefix << "rpc_p50_us " << p50 << "\n" << prefix << "rpc_p99_us "
        << p99 << "\n" << prefix << "kernel_p50_us " << k50 << "\n";
  }
  // gRPC's own floor beside it: a call that does next to nothing
  // (ListDevices answers from what msld probed at start), per channel.
  {
    std::vector<std::pair<std::string, std::shared_ptr<grpc::Channel>>> channels{{"TCP 127.0.0.1", client.channel()}};
    if (!daemon.unixAddress().empty())
      channels.push_back({"Unix socket", grpc::CreateChannel(daemon.unixAddress(), grpc::InsecureChannelCredentials())});
    for (auto &[name, channel] : channels) {
      auto stub = msl::v1::Executor::NewStub(channel);
      std::vector<double> us;
      for (int i = 0; i < calls + 20; ++i) {
        grpc::ClientContext ctx;
        msl::v1::ListDevicesRequest q;
        msl::v1::ListDevicesResponse a;
        auto t0 = std::chrono::steady_clock::now();
        grpc::Status st = stub->ListDevices(&ctx, q, &a);
        const double t = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
        if (!st.ok()) die("ListDevices: " + msl::client::describeStatus(st));
        if (i >= 20) us.push_back(t);
      }
      std::printf("msl-bench-gpu-exec: ListDevices (gRPC's floor) over %s, %d calls: p50 %.1f us, p99 %.1f us\n",
                  name.c_str(), calls, msl::bench::percentile(us, .5), msl::bench::percentile(us, .99));
    }
  }
  if (daemon.pid() > 0) daemon.stop();
  return 0;
}
