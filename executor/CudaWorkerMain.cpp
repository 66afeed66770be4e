//===- CudaWorkerMain.cpp - msld-cuda-worker ------------------------------===//
//
// The execution worker of one GPU: started by msld as
// `msld-cuda-worker --device N` with pipes on stdin/stdout, it opens GPU N's
// context, says hello (its identity: GPU, SM, driver, binary), then answers
// ExecWorkerRequests one at a time until stdin closes (CudaDevice.h), each
// with a start note before its first launch (once the module is linked or
// loaded: msld's JIT deadline ends there, the kernel's starts). A bad
// request gets an error and the worker lives on; a kernel that faults ends
// it with kWorkerKernelFaultExitCode after one line on stderr saying how,
// and msld starts a new one (a faulted context is never reused).
//
// `msld-cuda-worker --probe` says hello, then answers every request with a
// CudaProbeResponse: the GPUs and their limits, or why there are none (msld
// asks at start, so the daemon itself never loads the driver).
//
// Requests and responses of megabytes: they come and go in split frames
// (service/WorkerProtocol.h: the buffers raw after the rest, read straight
// into the request and written straight from the response, no protobuf
// copy of them on either side), the pipes to msld are widened to 1 MiB
// (fewer wake-ups per message; msld widens them too) and large allocations
// stay on the heap (service/LargeAllocations.h). MSLD_CUDA_WORKER_TIMING=FILE appends one
// line per request to FILE: microseconds reading the request (waiting for
// it included), in CudaDevice::execute, and serializing and writing the
// response (bench/RESULTS.md, scripts/gpu-bench.sh).
//
// It links protobuf and OpenSSL (its identity) but no LLVM and no gRPC, and
// loads libcuda.so.1 at run time, so it is small enough to carry to a GPU
// machine and runs (reporting no device) where no driver exists.
//
//===----------------------------------------------------------------------===//
#include "BinaryIdentity.h"
#include "CudaDevice.h"
#include "LargeAllocations.h"
#include "WorkerProtocol.h"
#include "msl/internal/worker.pb.h"
#include "msl/v1/execute.pb.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>

using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;

namespace {

bool sayHello(const std::string &identity) {
  msl::internal::WorkerHello hello;
  hello.set_compiler_identity(identity + " binary/" + msl::service::binaryIdentity());
  return msl::service::writeMessage(1, hello);
}

int probe() {
  if (!sayHello("msld-cuda-worker probe"))
    return 1;
  const msl::internal::CudaProbeResponse devices = msl::executor::probeCudaDevices();
  msl::v1::ListDevicesRequest request;
  while (msl::service::readMessage(0, request))
    if (!msl::service::writeMessage(1, devices))
      return 1;
  return 0;
}

int serve(const std::string &ordinalText, const msl::service::WorkerChannels &channels) {
  if (ordinalText.empty() || ordinalText.size() > 4 || ordinalText.find_first_not_of("0123456789") != std::string::npos) {
    std::cerr << "msld-cuda-worker: --device takes a GPU number, not '" << ordinalText << "'\n";
    return 2;
  }
  std::string why;
  auto device = msl::executor::CudaDevice::open(std::stoi(ordinalText), why);
  if (!device) {
    std::cerr << "msld-cuda-worker: " << why << "\n";
    return 1;
  }
  if (!sayHello("msld-cuda-worker " + device->identity()))
    return 1;
  for (int fd : {0, 1})
    (void)::fcntl(fd, F_SETPIPE_SZ, 1 << 20); // best effort (pipe-max-size)
  using Clock = std::chrono::steady_clock;
  auto us = [](Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); };
  FILE *timing = nullptr;
  if (const char *path = std::getenv("MSLD_CUDA_WORKER_TIMING"); path && *path)
    timing = std::fopen(path, "a");
  // msld's shared payload region (WorkerProtocol.h).
  msl::service::SharedPayloads shared;
  if (channels.payloadFd >= 0 && !msl::service::mapSharedPayloads(channels.payloadFd, shared))
    std::cerr << "msld-cuda-worker: cannot map the payload region; payloads go through the pipe\n";
  // Clients' shared regions (HostRegions.h), page-locked while held so the
  // GPU copies straight from and to them.
  msl::executor::CudaDevice &gpu = *device;
  msl::executor::HostRegions regions(
      channels.descriptorFd,
      {[&gpu](char *base, size_t size) { (void)gpu.registerHostMemory(base, size); },
       [&gpu](char *base, size_t) { gpu.unregisterHostMemory(base); }});
  ExecWorkerRequest request;
  auto readStart = Clock::now();
  // Split frames (WorkerProtocol.h) from msld: the buffers arrive raw, read
  // straight into the request, and go back raw; a plain request gets a plain
  // response.
  bool split = false;
  while (msl::service::readAnyMessage(0, request, msl::service::execRequestPayloads, split,
                                      msl::service::kMaxWorkerMessageBytes, shared)) {
    auto executeStart = Clock::now();
    // The start note once the module is ready (WorkerProtocol.h): msld's
    // JIT deadline ends and the kernel's time limit starts.
    ExecWorkerResponse response;
    std::string why;
    auto start = [] { (void)msl::service::writeDispatchStartNote(1); };
    if (!regions.run(request, response, [&](const msl::executor::HostBuffers &host) { return device->execute(request, start, &host); }, why)) {
      std::cerr << "msld-cuda-worker: " << why << "\n";
      return 1;
    }
    auto executeEnd = Clock::now();
    request.Clear();
    if (response.ByteSizeLong() > msl::service::kMaxWorkerMessageBytes) {
      size_t bytes = response.ByteSizeLong();
      response.Clear();
      response.set_error("the returned buffers are " + std::to_string(bytes) +
                         " bytes, more than a worker may send (" +
                         std::to_string(msl::service::kMaxWorkerMessageBytes) + ")");
    }
    if (!(split ? msl::service::writeSplitMessage(1, response, msl::service::execResponsePayloads, shared)
                : msl::service::writeMessage(1, response)))
      return 1;
    auto written = Clock::now();
    if (timing) {
      const auto &st = device->lastStageTimes();
      std::fprintf(timing,
                   "read_us %.1f execute_us %.1f write_us %.1f module_us %.1f copy_in_us %.1f launch_us %.1f "
                   "sync_us %.1f copy_out_us %.1f\n",
                   us(executeStart - readStart), us(executeEnd - executeStart), us(written - executeEnd),
                   st.module_us, st.copy_in_us, st.launch_us, st.sync_us, st.copy_out_us);
      std::fflush(timing);
    }
    readStart = Clock::now();
    msl::service::awaitNextRequest(0, msl::service::kNextRequestSpin);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::set_new_handler([] {
    static const char message[] = "msld worker: out of memory\n";
    (void)!::write(2, message, sizeof message - 1);
    ::_exit(msl::service::kWorkerOutOfMemoryExitCode);
  });
  msl::service::reuseLargeAllocations();
  const std::string mode = argc >= 2 ? argv[1] : "";
  if (mode == "--probe" && argc == 2)
    return probe();
  msl::service::WorkerChannels channels;
  if (mode == "--device" && argc >= 3 && msl::service::parseWorkerChannels(argc, argv, 3, channels))
    return serve(argv[2], channels);
  std::cerr << "usage: msld-cuda-worker --probe | --device N [--payload-fd FD] [--descriptor-fd FD] (started by "
               "msld)\n";
  return 2;
}
