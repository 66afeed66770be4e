// Integration tests through the real msld (see DaemonFixture.h): what a
// hostile or careless client of a shared daemon can do to it (issue 8), each
// a regression test of a defect that existed.
#include "DaemonFixture.h"
#include "msl/client/Client.h"
#include "msl/v1/execute.grpc.pb.h"

#include <grpcpp/generic/generic_stub.h>

#include <cerrno>
#include <csignal>
#include <fstream>
#include <future>
#include <set>
#include <sys/stat.h>
#include <thread>

namespace msl::test {
namespace {

using msl::v1::CompileResponse;

const char *kSmallKernel = "kernel void k(device int *o [[buffer(0)]]) { o[0] = VALUE; }\n";

msl::v1::CompileRequest smallRequest(int value) {
  return compileRequest(kSmallKernel, {"-DVALUE=" + std::to_string(value)});
}

// A compile that runs for minutes unless stopped (2^25 tokens; it reaches the
// default 4 GiB worker memory limit after some 20-40 s).
msl::v1::CompileRequest endlessRequest(int variant) {
  return compileRequest(macroBomb(25), {"-DVARIANT=" + std::to_string(variant)});
}

std::filesystem::path writeExecutable(const std::filesystem::path &path, const std::string &text) {
  std::ofstream(path) << text;
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

// A "worker" that says hello (a WorkerHello with identity "fake") and then
// ignores its stdin forever.
std::string helloThenHang() {
  return "#!/bin/sh\nprintf '\\006\\000\\000\\000\\012\\004fake'\nexec sleep 600\n";
}

class HardeningTest : public DaemonTest {};

// Defect 2: a 30,000-character function-constant name overflowed the stack of
// std::regex_match in msld and killed the daemon.
TEST_F(HardeningTest, HugeFunctionConstantNameIsRefusedNotFatal) {
  Daemon &d = startDaemon();
  auto req = smallRequest(1);
  (*req.mutable_function_constants())[std::string(30000, 'a')] = "1";
  CompileResponse resp;
  auto s = compile(d, req, resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_LT(s.error_message().size(), 1000u);
  CompileResponse ok;
  ASSERT_TRUE(compile(d, smallRequest(2), ok).ok()) << "msld died:\n" << d.log();
  EXPECT_TRUE(ok.success());
}

// Defect 3: replacement workers were forked by gRPC handler threads with
// PR_SET_PDEATHSIG, so they were killed when that thread exited: crashing
// requests made innocent ones fail with "killed by signal 9".
TEST_F(HardeningTest, CrashesDoNotKillInnocentCompiles) {
  Daemon &d = startDaemon();
  std::vector<std::future<grpc::Status>> crashes, innocent;
  for (int i = 0; i < 16; ++i)
    crashes.push_back(std::async(std::launch::async, [&, i] {
      CompileResponse r;
      return compile(d, compileRequest("#pragma clang __debug crash\n// " + std::to_string(i) + "\n"), r);
    }));
  for (int i = 0; i < 40; ++i)
    innocent.push_back(std::async(std::launch::async, [&, i] {
      std::this_thread::sleep_for(std::chrono::milliseconds(25 * i));
      CompileResponse r;
      return compile(d, smallRequest(100 + i), r);
    }));
  for (auto &c : crashes)
    EXPECT_EQ(c.get().error_code(), grpc::StatusCode::INTERNAL);
  int failed = 0;
  std::string first;
  for (auto &f : innocent)
    if (auto s = f.get(); !s.ok() && failed++ == 0)
      first = s.error_message();
  EXPECT_EQ(failed, 0) << "first failure: " << first;
  // And later still: the workers that replaced the crashed ones live on.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (int i = 0; i < 4; ++i) {
    CompileResponse r;
    auto s = compile(d, smallRequest(200 + i), r);
    EXPECT_TRUE(s.ok()) << s.error_message();
  }
}

// Defect 4: a worker stuck before its hello hung msld's start for as long as
// the worker lived (a blocking waitpid without a kill).
TEST_F(HardeningTest, WorkerStuckBeforeHelloIsKilledAndStartFails) {
  auto pidFile = dir_ / "stuck.pid";
  auto worker = writeExecutable(dir_ / "stuck-worker",
                                "#!/bin/sh\necho $$ > " + pidFile.string() + "\nexec sleep 600\n");
  Daemon d((dir_ / "data").string(),
           {"--worker-path", worker.string(), "--worker-start-timeout-ms", "500"});
  EXPECT_FALSE(d.start());
  EXPECT_NE(d.log().find("did not say hello within 500 ms"), std::string::npos) << d.log();
  // And the stuck worker is gone, not left behind.
  int pid = 0;
  std::ifstream(pidFile) >> pid;
  ASSERT_GT(pid, 0);
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i, std::this_thread::sleep_for(std::chrono::milliseconds(50)))
    gone = ::kill(pid, 0) != 0 && errno == ESRCH;
  EXPECT_TRUE(gone) << "worker " << pid << " still runs";
}

// Defect 4: at SIGTERM, a worker that does not exit on EOF is killed after
// the exit timeout instead of blocking msld's exit.
TEST_F(HardeningTest, SigtermDoesNotWaitForAHungWorker) {
  auto worker = writeExecutable(dir_ / "hung-worker", helloThenHang());
  Daemon &d = startDaemon({"--worker-path", worker.string()});
  ASSERT_TRUE(d.running()) << d.log();
  ::kill(d.pid(), SIGTERM);
  auto status = d.waitExit(60); // the worker would sleep for 600 s
  ASSERT_TRUE(status.has_value()) << "msld still waits for its worker\n" << d.log();
  EXPECT_EQ(*status, 0);
}

// Defect 5: the compiler identity names the worker binary that runs, so a
// rebuilt worker gets new action keys (and a data dir filled by the old one
// serves nothing stale).
TEST_F(HardeningTest, RebuiltWorkerGetsNewActionKeys) {
  auto worker = dir_ / "msld-compile-worker";
  std::filesystem::copy_file(binDir() + "/msld-compile-worker", worker);
  auto req = smallRequest(7);
  Daemon &first = startDaemon({"--worker-path", worker.string()});
  CompileResponse a;
  ASSERT_TRUE(compile(first, req, a).ok());
  first.stop();
  // "Rebuild" it: same code, different bytes.
  std::ofstream(worker, std::ios::app) << "rebuilt";
  Daemon &second = startDaemon({"--worker-path", worker.string()});
  CompileResponse b;
  ASSERT_TRUE(compile(second, req, b).ok());
  EXPECT_NE(a.action_key(), b.action_key());
  EXPECT_FALSE(b.cache_hit());
}

// Defect 5: a replacement worker whose identity differs from the pool's (its
// binary changed under a running msld) is refused, not mixed in.
TEST_F(HardeningTest, ReplacementWithAnotherIdentityIsRefused) {
  auto worker = dir_ / "msld-compile-worker";
  std::filesystem::copy_file(binDir() + "/msld-compile-worker", worker);
  Daemon &d = startDaemon({"--worker-path", worker.string()}); // two workers
  CompileResponse first;
  ASSERT_TRUE(compile(d, smallRequest(1), first).ok());
  // Replace the binary (a new inode, as an install does), then crash a worker.
  auto next = dir_ / "next";
  std::filesystem::copy_file(worker, next);
  std::ofstream(next, std::ios::app) << "upgraded";
  std::filesystem::rename(next, worker);
  CompileResponse r;
  EXPECT_EQ(compile(d, compileRequest("#pragma clang __debug crash\n"), r).error_code(),
            grpc::StatusCode::INTERNAL);
  EXPECT_EQ(d.metric("msld_worker_identity_mismatches_total"), 1);
  EXPECT_NE(d.log().find("refused"), std::string::npos) << d.log();
  // The remaining worker, of the pool's identity, still compiles (a miss),
  // and keys stay those of the pool's identity.
  CompileResponse fresh;
  ASSERT_TRUE(compile(d, smallRequest(9), fresh).ok());
  EXPECT_FALSE(fresh.cache_hit());
  EXPECT_TRUE(fresh.success());
  CompileResponse again;
  ASSERT_TRUE(compile(d, smallRequest(1), again).ok());
  EXPECT_EQ(again.action_key(), first.action_key());
}

// Defect 6: BatchReadBlobs of 20 x the digest of a large blob (a small
// request) built a response of 20 x its size. Now the response is bounded,
// with per-blob RESOURCE_EXHAUSTED for what does not fit, and Read streams it.
TEST_F(HardeningTest, BatchReadIsBoundedAndLargeBlobsStream) {
  Daemon &d = startDaemon();
  std::string blob(10 << 20, 'x');
  for (size_t i = 0; i < blob.size(); i += 4096)
    blob[i] = char('a' + i / 4096 % 26);
  msl::v1::Digest digest;
  digest.set_hash(sha256Hex(blob));
  digest.set_size_bytes(int64_t(blob.size()));
  {
    msl::v1::BatchUpdateBlobsRequest up;
    auto *r = up.add_requests();
    *r->mutable_digest() = digest;
    r->set_data(blob);
    msl::v1::BatchUpdateBlobsResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(d.cas().BatchUpdateBlobs(&ctx, up, &resp).ok());
    ASSERT_EQ(resp.responses(0).status().code(), 0) << resp.responses(0).status().message();
  }
  msl::v1::BatchReadBlobsRequest req;
  for (int i = 0; i < 20; ++i)
    *req.add_digests() = digest;
  msl::v1::BatchReadBlobsResponse resp;
  grpc::ClientContext ctx;
  auto s = d.cas().BatchReadBlobs(&ctx, req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.responses_size(), 20);
  size_t bytes = 0, exhausted = 0;
  for (const auto &r : resp.responses()) {
    bytes += r.data().size();
    if (r.status().code() == int(grpc::StatusCode::RESOURCE_EXHAUSTED)) {
      ++exhausted;
      EXPECT_NE(r.status().message().find("Read"), std::string::npos);
    }
  }
  EXPECT_LE(bytes, size_t(16 << 20));
  EXPECT_GE(exhausted, 18u);
  // The stream gives all of it, in chunks.
  msl::v1::ReadBlobRequest read;
  *read.mutable_digest() = digest;
  grpc::ClientContext readCtx;
  auto reader = d.cas().Read(&readCtx, read);
  std::string streamed;
  msl::v1::ReadBlobResponse chunk;
  int chunks = 0;
  while (reader->Read(&chunk)) {
    streamed += chunk.data();
    ++chunks;
  }
  auto finished = reader->Finish();
  ASSERT_TRUE(finished.ok()) << finished.error_message();
  EXPECT_EQ(streamed, blob);
  EXPECT_GT(chunks, 1);
  // The client library falls back to the stream by itself.
  msl::client::Client client(d.address());
  auto viaClient = client.readBlobs({digest, digest});
  ASSERT_TRUE(viaClient.ok()) << viaClient.status().error_message();
  EXPECT_EQ((*viaClient)[1], blob);
}

// Defect 6: a 1 GiB request was buffered in full before it was refused, and
// most of it stayed allocated. gRPC 1.51 checks the receive limit only once a
// message is complete, so msld bounds gRPC's memory (its ResourceQuota): the
// stream is reset when it passes the quota, and msld's memory stays bounded.
TEST_F(HardeningTest, OversizedRequestIsRefusedAndMemoryStaysBounded) {
  Daemon &d = startDaemon({"--max-receive-bytes", "1048576", "--grpc-memory-mb", "64"});
  long before = d.rssKb();
  for (int size : {4, 256}) { // MiB: past the receive limit; past the memory quota too
    msl::v1::BatchUpdateBlobsRequest up;
    auto *r = up.add_requests();
    r->set_data(std::string(size_t(size) << 20, 'q'));
    r->mutable_digest()->set_hash(sha256Hex(r->data()));
    r->mutable_digest()->set_size_bytes(int64_t(r->data().size()));
    msl::v1::BatchUpdateBlobsResponse resp;
    grpc::ClientContext ctx;
    auto s = d.cas().BatchUpdateBlobs(&ctx, up, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << size << " MiB: " << s.error_message();
  }
  CompileResponse ok;
  ASSERT_TRUE(compile(d, smallRequest(3), ok).ok());
  long peak = d.peakRssKb(), after = d.rssKb();
  ASSERT_GT(before, 0);
  ASSERT_GT(peak, 0);
  EXPECT_LT(peak - before, 160 * 1024) << "msld held " << (peak - before) << " KiB of a 256 MiB request";
  // (What stays resident also depends on the allocator: bounded loosely.)
  EXPECT_LT(after - before, 96 * 1024) << "msld kept " << (after - before) << " KiB";
}

// Defect 7: a compile whose client has gone (deadline passed) is stopped,
// instead of running to its time limit.
TEST_F(HardeningTest, ExpiredCallerStopsItsCompile) {
  Daemon &d = startDaemon({"--compile-workers", "1"});
  CompileResponse r;
  auto s = compile(d, endlessRequest(0), r, /*deadlineSeconds=*/2);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  for (int i = 0; i < 300 && d.metric("msld_compiles_cancelled_total") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(d.metric("msld_compiles_cancelled_total"), 1);
  // The only worker is free again at once (the endless compile would hold it
  // for its 60 s limit, or some 20 s until its memory limit).
  CompileResponse ok;
  auto served = compile(d, smallRequest(4), ok, 5);
  ASSERT_TRUE(served.ok()) << served.error_message();
  EXPECT_EQ(d.metric("msld_worker_timeouts_total"), 0);
}

// Defect 7: waiting is bounded: past the queue's limit a compile is refused at
// once with RESOURCE_EXHAUSTED and a retry hint, instead of holding a thread.
TEST_F(HardeningTest, FullQueueRefusesWithRetryHint) {
  Daemon &d = startDaemon({"--compile-workers", "1", "--max-queued-compiles", "2"});
  std::vector<std::future<grpc::Status>> slow;
  for (int i = 0; i < 3; ++i) { // one runs, two wait
    slow.push_back(std::async(std::launch::async, [&, i] {
      CompileResponse r;
      return compile(d, endlessRequest(i), r, 20);
    }));
    for (int t = 0; t < 200 && d.metric("msld_compiles_in_flight") + d.metric("msld_compile_queue_depth") < i + 1; ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(d.metric("msld_compile_queue_depth"), 2);
  msl::v1::CompileResponse r;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto s = d.compiler().Compile(&ctx, smallRequest(5), &r);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("queue is full"), std::string::npos) << s.error_message();
  auto hint = ctx.GetServerTrailingMetadata().find("grpc-retry-pushback-ms");
  ASSERT_NE(hint, ctx.GetServerTrailingMetadata().end());
  EXPECT_GT(std::stoi(std::string(hint->second.data(), hint->second.size())), 0);
  EXPECT_EQ(d.metric("msld_requests_rejected_total{reason=\"queue_full\"}"), 1);
  // The slow ones end at their client's deadline, or earlier at the worker's
  // memory limit (a fast machine reaches 4 GiB of tokens within 20 s).
  for (auto &f : slow) {
    auto code = f.get().error_code();
    EXPECT_TRUE(code == grpc::StatusCode::DEADLINE_EXCEEDED || code == grpc::StatusCode::RESOURCE_EXHAUSTED)
        << code;
  }
}

// Defect 7: clients are served fairly: one client's queued burst does not
// make another client's compile wait behind all of it.
TEST_F(HardeningTest, QueuedCompilesAreServedFairlyAcrossClients) {
  Daemon &d = startDaemon({"--compile-workers", "1"});
  auto compileAs = [&](const std::string &client, const msl::v1::CompileRequest &req, int seconds) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(seconds));
    ctx.AddMetadata("msld-client-id", client);
    CompileResponse r;
    auto s = d.compiler().Compile(&ctx, req, &r);
    return std::make_pair(s, std::chrono::steady_clock::now());
  };
  auto waitFor = [&](const char *metric, double value) {
    for (int t = 0; t < 500 && d.metric(metric) != value; ++t)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return d.metric(metric);
  };
  // Client a holds the only worker (until its deadline) and queues a burst.
  auto holder = std::async(std::launch::async, [&] { return compileAs("a", endlessRequest(0), 4).first; });
  ASSERT_EQ(waitFor("msld_compiles_in_flight", 1), 1);
  std::vector<std::future<std::pair<grpc::Status, std::chrono::steady_clock::time_point>>> burst;
  for (int i = 0; i < 5; ++i) {
    burst.push_back(std::async(std::launch::async, [&, i] {
      return compileAs("a", compileRequest(macroBomb(17), {"-DBURST=" + std::to_string(i)}), 120);
    }));
    ASSERT_EQ(waitFor("msld_compile_queue_depth", i + 1), i + 1);
  }
  // Client b arrives last, behind all of a's queued work.
  auto [bStatus, b] = compileAs("b", smallRequest(6), 120);
  ASSERT_TRUE(bStatus.ok()) << bStatus.error_message();
  EXPECT_EQ(holder.get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  std::vector<std::chrono::steady_clock::time_point> doneA;
  for (auto &f : burst) {
    auto [status, at] = f.get();
    EXPECT_TRUE(status.ok()) << status.error_message();
    doneA.push_back(at);
  }
  std::sort(doneA.begin(), doneA.end());
  // Round-robin: b ran right after a's first queued compile (first in, first
  // out would have put it after all five).
  EXPECT_LT(b, doneA[1]);
}

// Defect 8: msld and the worker judged requests differently: msld accepted
// -I /etc, -I ../.. and paths with NUL (the worker then failed them, and the
// failure was cached). Now msld refuses them, as the worker does.
TEST_F(HardeningTest, PathsAndIncludeDirsAreCheckedByMsld) {
  Daemon &d = startDaemon();
  for (auto options : std::vector<std::vector<std::string>>{{"-I", "/etc"}, {"-I", "../.."}, {"-I/etc"}}) {
    CompileResponse r;
    auto s = compile(d, compileRequest(kSmallKernel, options), r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << options.back();
  }
  auto req = smallRequest(8);
  auto *f = req.add_files();
  f->set_path(std::string("evil\0.h", 7));
  f->mutable_content()->set_inline_("x");
  CompileResponse r;
  EXPECT_EQ(compile(d, req, r).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// Defect 8: a malformed protobuf was answered with a bare INTERNAL.
TEST_F(HardeningTest, MalformedProtobufIsInvalidArgument) {
  Daemon &d = startDaemon();
  grpc::GenericStub stub(d.channel());
  for (const char *method : {"/msl.v1.Compiler/Compile", "/msl.v1.ContentAddressableStorage/BatchReadBlobs"}) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    std::string garbage = "\xff\xff\xff\xff\x0f this is not a protobuf";
    grpc::Slice slice(garbage);
    grpc::ByteBuffer request(&slice, 1), response;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&ctx, method, grpc::StubOptions(), &request, &response,
                   [&](grpc::Status s) { done.set_value(s); });
    auto s = done.get_future().get();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method << ": " << s.error_message();
    EXPECT_NE(s.error_message().find("not a valid"), std::string::npos) << s.error_message();
  }
}

// Defect 8: a worker's stderr (here `#pragma clang __debug dump`, which
// prints declarations) flooded msld's log without bound.
TEST_F(HardeningTest, WorkerStderrInTheLogIsBounded) {
  Daemon &d = startDaemon();
  std::string source = "struct S { int a, b, c, d; };\n";
  for (int i = 0; i < 3000; ++i)
    source += "constant S s" + std::to_string(i) + " = {1, 2, 3, 4};\n#pragma clang __debug dump s" +
              std::to_string(i) + "\n";
  source += "kernel void k(device int *o [[buffer(0)]]) { o[0] = s0.a; }\n";
  CompileResponse r;
  ASSERT_TRUE(compile(d, compileRequest(source), r).ok());
  std::string log = d.log();
  EXPECT_LT(log.size(), size_t(64 << 10));
  EXPECT_NE(log.find("bytes of worker stderr dropped"), std::string::npos) << log.substr(0, 2000);
}

// Buffers of queued and running executions are bounded in all: with one
// held by a running kernel, a second that would pass the budget is refused.
TEST_F(HardeningTest, ExecuteBuffersHeldByMsldAreBounded) {
  REQUIRE_EXEC_WORKER();
  Daemon &d = startDaemon({"--exec-bytes-in-flight-mb", "1"});
  auto stub = msl::v1::Executor::NewStub(d.channel());
  auto request = [](const char *source, const char *kernel, uint64_t bytes, uint32_t timeoutMs) {
    msl::v1::ExecuteRequest req;
    *req.mutable_compile() = compileRequest(source);
    req.set_kernel(kernel);
    req.add_buffers()->set_zeros(bytes);
    req.add_buffer_bindings()->set_index(0);
    req.mutable_dispatch()->mutable_threadgroups()->set_x(1);
    req.mutable_dispatch()->mutable_threads_per_threadgroup()->set_x(1);
    req.set_timeout_ms(timeoutMs);
    return req;
  };
  const char *spin = "#include <metal_stdlib>\nusing namespace metal;\nkernel void spin(device atomic_uint *c [[buffer(0)]]) {\n"
                     "  while (true) atomic_fetch_add_explicit(c, 1u, memory_order_relaxed);\n}\n";
  const char *store = "kernel void k(device int *o [[buffer(0)]]) { o[0] = 1; }\n";
  auto holder = std::async(std::launch::async, [&] {
    msl::v1::ExecuteResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    return stub->Execute(&ctx, request(spin, "spin", 600 << 10, 3000), &resp);
  });
  for (int t = 0; t < 600 && d.metric("msld_execute_bytes_total{direction=\"in\"}") < (600 << 10); ++t)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  msl::v1::ExecuteResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto s = stub->Execute(&ctx, request(store, "k", 600 << 10, 0), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_EQ(holder.get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // Once the holder is done, a small one runs.
  grpc::ClientContext again;
  again.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  auto ok = stub->Execute(&again, request(store, "k", 4, 0), &resp);
  ASSERT_TRUE(ok.ok()) << ok.error_message();
  ASSERT_EQ(resp.buffers_size(), 1);
  EXPECT_EQ(resp.buffers(0).inline_data(), std::string("\x01\0\0\0", 4));
}

// A device name is the client's: it must not become a metrics series of its own.
TEST_F(HardeningTest, ClientNamedDevicesDoNotMultiplyMetricSeries) {
  Daemon &d = startDaemon();
  auto stub = msl::v1::Executor::NewStub(d.channel());
  for (int i = 0; i < 5; ++i) {
    msl::v1::ExecuteRequest req;
    req.set_device("evil-device-" + std::to_string(i));
    req.set_kernel("k");
    msl::v1::ExecuteResponse resp;
    grpc::ClientContext ctx;
    EXPECT_EQ(stub->Execute(&ctx, req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  std::string scrape = d.scrapeMetrics();
  EXPECT_EQ(scrape.find("evil-device"), std::string::npos);
  EXPECT_EQ(d.metric("msld_executions_total{code=\"INVALID_ARGUMENT\",device=\"other\"}"), 5);
}

} // namespace
} // namespace msl::test
