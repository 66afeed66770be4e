//===- ExecWorkerMain.cpp - msld-exec-worker -------------------------------===//
//
// An execution worker: started by msld with pipes on stdin/stdout, it says
// hello (its identity), then answers ExecWorkerRequests one at a time until
// stdin closes, running each kernel on the CPU device (CpuDevice.h). msld
// sends requests as split frames (service/WorkerProtocol.h: the buffers raw
// after the rest) and gets split frames back; a plain request gets a plain
// answer. Before a kernel's first dispatch (after its JIT) the worker sends
// a start note (ExecWorkerResponse.dispatch_starts), which ends msld's JIT
// deadline and starts the kernel's time limit. A bad request gets an error and the worker lives on; a kernel
// that faults ends the worker with kWorkerKernelFaultExitCode after one line
// on stderr saying how, and msld replaces it.
//
// `msld-exec-worker --run FILE.bc SYMBOL GROUPS THREADS [BUFFER_BYTES...]`
// runs a kernel from the host for debugging: GROUPS and THREADS as X[,Y[,Z]],
// each BUFFER_BYTES a zeroed buffer bound to the next argument slot; prints
// the kernel time.
//
//===----------------------------------------------------------------------===//
#include "BinaryIdentity.h"
#include "LargeAllocations.h"
#include "Sandbox.h"
#include "CpuDevice.h"
#include "WorkerOutOfMemory.h"
#include "WorkerProtocol.h"
#include "msl/internal/worker.pb.h"

#include <llvm/Config/llvm-config.h>
#include <llvm/Support/ErrorHandling.h>

#include <fstream>
#include <iostream>
#include <new>
#include <sstream>
#include <unistd.h>

using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;

namespace {

template <typename Field> void parseDims(const std::string &s, Field *out) {
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, ','))
    out->Add(uint32_t(std::stoul(part)));
}

int runOneFile(int argc, char **argv) {
  if (argc < 6) {
    std::cerr << "usage: msld-exec-worker --run FILE.bc SYMBOL GROUPS THREADS [BUFFER_BYTES...]\n";
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << argv[2] << "\n";
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  ExecWorkerRequest req;
  req.set_module(ss.str());
  req.set_symbol(argv[3]);
  parseDims(argv[4], req.mutable_threadgroups());
  parseDims(argv[5], req.mutable_threads_per_threadgroup());
  for (int i = 6; i < argc; ++i) {
    auto *b = req.add_buffers();
    b->set_length(std::stoull(argv[i]));
    auto *s = req.add_slots();
    s->set_kind(msl::internal::ExecSlot::BUFFER);
    s->set_buffer(uint32_t(i - 6));
  }
  msl::executor::CpuDevice device;
  ExecWorkerResponse resp = device.execute(req);
  if (!resp.error().empty()) {
    std::cerr << resp.error() << "\n";
    return 1;
  }
  for (int64_t t : resp.dispatch_time_ns())
    std::cout << "kernel time: " << t / 1000.0 << " us\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  msl::executor::installFaultHandlers("msld-exec-worker");
  msl::service::exitOnOutOfMemory();
  msl::service::reuseLargeAllocations();
  if (argc >= 2 && std::string(argv[1]) == "--run")
    return runOneFile(argc, argv);
  // msld's shared payload region (WorkerProtocol.h), mapped before the
  // sandbox's seccomp filter is installed.
  msl::service::WorkerChannels channels;
  if (!msl::service::parseWorkerChannels(argc, argv, 1, channels)) {
    std::cerr << "usage: msld-exec-worker [--payload-fd FD] [--descriptor-fd FD] (started by msld) | --run ...\n";
    return 2;
  }
  msl::service::SharedPayloads shared;
  if (channels.payloadFd >= 0 && !msl::service::mapSharedPayloads(channels.payloadFd, shared))
    std::cerr << "msld-exec-worker: cannot map the payload region; payloads go through the pipe\n";
  // Clients' shared regions (HostRegions.h): buffers read from and written
  // back to their pages.
  msl::executor::HostRegions regions(channels.descriptorFd);
  msl::executor::CpuDevice device;
  msl::internal::WorkerHello hello;
  hello.set_compiler_identity("msld-exec-worker llvm/" LLVM_VERSION_STRING " cpu/" +
                              msl::executor::CpuDevice::hostCpu() + " threads/" +
                              std::to_string(device.threads()) + " binary/" +
                              msl::service::binaryIdentity());
  // Sandboxed (Sandbox.h): the JIT and the threads are up and the identity
  // computed; from here on only the system calls a kernel run makes.
  if (msl::service::startedInSandbox()) {
    std::string error;
    if (!msl::service::installWorkerSeccomp(false, error)) {
      std::cerr << "msld-exec-worker: " << error << "\n";
      return 1;
    }
  }
  if (!msl::service::writeMessage(1, hello))
    return 1;
  ExecWorkerRequest req;
  // Split frames (WorkerProtocol.h) from msld: the buffers arrive raw, read
  // straight into the request, and go back raw; a plain request gets a plain
  // response.
  bool split = false;
  while (msl::service::readAnyMessage(0, req, msl::service::execRequestPayloads, split,
                                      msl::service::kMaxWorkerMessageBytes, shared)) {
    // The start note once the kernel is JIT-compiled (WorkerProtocol.h):
    // msld's JIT deadline ends and the kernel's time limit starts.
    ExecWorkerResponse resp;
    std::string why;
    auto start = [] { (void)msl::service::writeDispatchStartNote(1); };
    if (!regions.run(req, resp, [&](const msl::executor::HostBuffers &host) { return device.execute(req, start, &host); }, why)) {
      std::cerr << "msld-exec-worker: " << why << "\n";
      return 1;
    }
    req.Clear();
    if (resp.ByteSizeLong() > msl::service::kMaxWorkerMessageBytes) {
      size_t bytes = resp.ByteSizeLong();
      resp.Clear();
      resp.set_error("the returned buffers are " + std::to_string(bytes) + " bytes, more than a worker may send (" +
                     std::to_string(msl::service::kMaxWorkerMessageBytes) + ")");
    }
    if (!(split ? msl::service::writeSplitMessage(1, resp, msl::service::execResponsePayloads, shared)
                : msl::service::writeMessage(1, resp)))
      return 1;
    msl::service::awaitNextRequest(0, msl::service::kNextRequestSpin);
  }
  return 0;
}
