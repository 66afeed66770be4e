// Client and mslc against an in-process fake msld (no real server needed).
#include "msl/client/Client.h"

#include <gtest/gtest.h>
#include <grpcpp/health_check_service_interface.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <mutex>
#include <random>
#include <sstream>

#include "msl/client/FastCompile.h"
#include "msl/client/MslcDriver.h"
#include "msl/client/MslcRun.h"

namespace fs = std::filesystem;
using msl::client::Client;
using msl::client::ClientOptions;
using msl::client::digestOf;

namespace {

std::string key(const msl::v1::Digest& d) { return d.hash() + "/" + std::to_string(d.size_bytes()); }

class FakeCas final : public msl::v1::ContentAddressableStorage::Service {
 public:
  grpc::Status FindMissingBlobs(grpc::ServerContext*, const msl::v1::FindMissingBlobsRequest* req,
                                msl::v1::FindMissingBlobsResponse* resp) override {
    std::lock_guard lock(mu);
    ++find_calls;
    for (const auto& d : req->blob_digests())
      if (!blobs.count(key(d))) *resp->add_missing_blob_digests() = d;
    return grpc::Status::OK;
  }
  grpc::Status BatchUpdateBlobs(grpc::ServerContext*, const msl::v1::BatchUpdateBlobsRequest* req,
                                msl::v1::BatchUpdateBlobsResponse* resp) override {
    std::lock_guard lock(mu);
    ++update_calls;
    for (const auto& r : req->requests()) {
      auto* out = resp->add_responses();
      *out->mutable_digest() = r.digest();
      if (key(digestOf(r.data())) != key(r.digest())) {
        out->mutable_status()->set_code(grpc::StatusCode::INVALID_ARGUMENT);
        out->mutable_status()->set_message("digest mismatch");
        continue;
      }
      blobs[key(r.digest())] = r.data();
    }
    return grpc::Status::OK;
  }
  grpc::Status BatchReadBlobs(grpc::ServerContext*, const msl::v1::BatchReadBlobsRequest* req,
                              msl::v1::BatchReadBlobsResponse* resp) override {
    std::lock_guard lock(mu);
    for (const auto& d : req->digests()) {
      auto* out = resp->add_responses();
      *out->mutable_digest() = d;
      auto it = blobs.find(key(d));
      if (it == blobs.end()) {
        out->mutable_status()->set_code(grpc::StatusCode::NOT_FOUND);
        out->mutable_status()->set_message("no such blob");
      } else {
        out->set_data(it->second);
      }
    }
    return grpc::Status::OK;
  }
  std::mutex mu;
  std::map<std::string, std::string> blobs;
  int find_calls = 0, update_calls = 0;
};

// Resolves every file of the request (inline or from the store); fails with
// an error diagnostic when the source contains "ERROR"; otherwise returns a
// small inline artifact and a large one by digest.
class FakeCompiler final : public msl::v1::Compiler::Service {
 public:
  explicit FakeCompiler(FakeCas* cas) : cas_(cas) {}
  grpc::Status Compile(grpc::ServerContext*, const msl::v1::CompileRequest* req,
                       msl::v1::CompileResponse* resp) override {
    std::lock_guard lock(cas_->mu);
    last = *req;
    if (evict_before_compile) {
      evict_before_compile = false;
      cas_->blobs.clear();
    }
    auto content = [&](const msl::v1::FileContent& c, std::string* out) {
      if (c.has_digest()) {
        auto it = cas_->blobs.find(key(c.digest()));
        if (it == cas_->blobs.end()) return false;
        *out = it->second;
      } else {
        *out = c.inline_();
      }
      return true;
    };
    std::string main;
    if (!content(req->main_source(), &main))
      return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "main source blob missing");
    for (const auto& f : req->files()) {
      std::string bytes;
      if (!content(f.content(), &bytes))
        return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "blob missing: " + f.path());
    }
    if (main.find("ERROR") != std::string::npos) {
      auto* d = resp->add_diagnostics();
      d->set_file(req->main_path());
      d->set_line(1);
      d->set_column(2);
      d->set_severity(msl::v1::Diagnostic::ERROR);
      d->set_message("boom");
      return grpc::Status::OK;
    }
    resp->set_success(true);
    resp->set_compile_time_us(1500);
    for (auto kind : req->outputs()) {
      auto* a = resp->add_artifacts();
      a->set_kind(static_cast<msl::v1::ArtifactKind>(kind));
      std::string bytes = kind == msl::v1::PTX ? std::string(200000, 'p') : "small:" + main;
      if (kind == msl::v1::REFLECTION && !reflection_json.empty()) bytes = reflection_json;
      *a->mutable_digest() = digestOf(bytes);
      if (bytes.size() > 1000) {
        cas_->blobs[key(a->digest())] = bytes;
      } else {
        a->set_inline_data(bytes);
      }
    }
    return grpc::Status::OK;
  }
  msl::v1::CompileRequest last;
  bool evict_before_compile = false;
  std::string reflection_json;  // the REFLECTION artifact when set

 private:
  FakeCas* cas_;
};

// Runs no kernel: every buffer bound at an even [[buffer(n)]] comes back with
// each byte plus one (by digest when over 1000 bytes); kernel "fail" is
// INVALID_ARGUMENT. One dispatch time per repeat.
class FakeExecutor final : public msl::v1::Executor::Service {
 public:
  explicit FakeExecutor(FakeCas* cas) : cas_(cas) {}
  grpc::Status ListDevices(grpc::ServerContext*, const msl::v1::ListDevicesRequest*,
                           msl::v1::ListDevicesResponse* resp) override {
    auto* d = resp->add_devices();
    d->set_name("cpu");
    d->set_kind(msl::v1::Device::CPU);
    d->set_max_threads_per_threadgroup(1024);
    return grpc::Status::OK;
  }
  grpc::Status Execute(grpc::ServerContext*, const msl::v1::ExecuteRequest* req,
                       msl::v1::ExecuteResponse* resp) override {
    std::lock_guard lock(cas_->mu);
    last = *req;
    if (req->kernel() == "fail")
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "unknown kernel 'fail'");
    for (const auto& b : req->buffer_bindings()) {
      if (b.index() % 2) continue;
      const auto& in = req->buffers(static_cast<int>(b.buffer()));
      std::string bytes;
      if (in.has_digest()) {
        auto it = cas_->blobs.find(key(in.digest()));
        if (it == cas_->blobs.end()) return grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "no blob");
        bytes = it->second;
      } else if (in.contents_case() == msl::v1::BufferContents::kZeros) {
        bytes.assign(in.zeros(), '\0');
      } else {
        bytes = in.inline_();
      }
      for (auto& c : bytes) c = static_cast<char>(c + 1);
      auto* out = resp->add_buffers();
      out->set_buffer(b.buffer());
      if (bytes.size() > 1000) {
        *out->mutable_digest() = digestOf(bytes);
        cas_->blobs[key(out->digest())] = bytes;
      } else {
        out->set_inline_data(bytes);
      }
    }
    for (std::uint32_t i = 0; i < std::max(1u, req->repeat()); ++i) resp->add_dispatch_time_ns(1000 * (i + 1));
    resp->set_device(req->device());
    resp->set_compile_cache_hit(true);
    return grpc::Status::OK;
  }
  msl::v1::ExecuteRequest last;

 private:
  FakeCas* cas_;
};

class FakeServer {
 public:
  explicit FakeServer(bool health) : compiler_(&cas_), executor_(&cas_) {
    grpc::EnableDefaultHealthCheckService(health);
    grpc::ServerBuilder b;
    b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    b.RegisterService(&cas_);
    b.RegisterService(&compiler_);
    b.RegisterService(&executor_);
    b.SetMaxReceiveMessageSize(64 << 20);
    server_ = b.BuildAndStart();
    grpc::EnableDefaultHealthCheckService(false);
  }
  ~FakeServer() { server_->Shutdown(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  FakeCas cas_;
  FakeCompiler compiler_;
  FakeExecutor executor_;

 private:
  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace

TEST(Client, HealthServiceAndFallback) {
  {
    FakeServer server(true);
    Client c(server.address());
    auto h = c.waitUntilHealthy(std::chrono::seconds(10));
    ASSERT_TRUE(h.ok()) << msl::client::describeStatus(h.status());
    EXPECT_EQ(h->source, msl::client::HealthSource::kHealthService);
  }
  {
    FakeServer server(false);
    Client c(server.address());
    auto h = c.waitUntilHealthy(std::chrono::seconds(10));
    ASSERT_TRUE(h.ok()) << msl::client::describeStatus(h.status());
    EXPECT_EQ(h->source, msl::client::HealthSource::kCasProbe);
  }
}

TEST(Client, UnreachableServer) {
  ClientOptions o;
  o.address = "127.0.0.1:1";
  Client c(o);
  auto h = c.waitUntilHealthy(std::chrono::milliseconds(300));
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  auto r = c.findMissingBlobs({digestOf("x")});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST(Client, BlobsRoundTrip) {
  FakeServer server(false);
  ClientOptions o;
  o.address = server.address();
  o.max_message_bytes = 1 << 20;  // forces several batches
  Client c(o);
  std::vector<std::string> blobs{"a", std::string(600000, 'b'), std::string(600000, 'c'), ""};
  auto up = c.uploadBlobs(blobs);
  ASSERT_TRUE(up.ok()) << msl::client::describeStatus(up.status());
  EXPECT_GE(server.cas_.update_calls, 2);
  auto missing = c.findMissingBlobs({(*up)[0], digestOf("nope")});
  ASSERT_TRUE(missing.ok());
  ASSERT_EQ(missing->size(), 1u);
  EXPECT_EQ((*missing)[0].hash(), digestOf("nope").hash());
  auto back = c.readBlobs(*up);
  ASSERT_TRUE(back.ok()) << msl::client::describeStatus(back.status());
  EXPECT_EQ(*back, blobs);
  auto absent = c.readBlobs({digestOf("nope")});
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().error_code(), grpc::StatusCode::NOT_FOUND);
  auto tooBig = c.uploadBlobs({std::string(2 << 20, 'x')});
  EXPECT_EQ(tooBig.status().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST(Client, CompileFilesInlinesSmallAndUploadsLargeOnce) {
  FakeServer server(false);
  Client c(server.address());
  std::string big(100 * 1024, 'h');
  std::map<std::string, std::string> files{{"inc/small.h", "// small"}, {"inc/big.h", big}};
  msl::v1::Target t;
  t.set_arch(msl::v1::Target::NVPTX64);
  auto r = c.compileFiles("k.metal", "kernel", files, {"-D", "N=1"}, t,
                          {msl::v1::PTX, msl::v1::REFLECTION});
  ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
  ASSERT_TRUE(r->success());
  const auto& req = server.compiler_.last;
  EXPECT_EQ(req.main_path(), "k.metal");
  EXPECT_EQ(req.main_source().inline_(), "kernel");
  ASSERT_EQ(req.files_size(), 2);
  for (const auto& f : req.files()) {
    if (f.path() == "inc/big.h") EXPECT_TRUE(f.content().has_digest());
    else EXPECT_EQ(f.content().inline_(), "// small");
  }
  EXPECT_EQ(server.cas_.update_calls, 1);
  // The large PTX artifact came by digest and was fetched.
  ASSERT_EQ(r->artifacts_size(), 2);
  EXPECT_EQ(r->artifacts(0).inline_data(), std::string(200000, 'p'));
  EXPECT_EQ(r->artifacts(1).inline_data(), "small:kernel");
  msl::v1::Artifact byDigest;
  byDigest.set_kind(msl::v1::PTX);
  *byDigest.mutable_digest() = digestOf(std::string(200000, 'p'));
  auto fetched = c.fetchArtifact(byDigest);
  ASSERT_TRUE(fetched.ok());
  EXPECT_EQ(fetched->size(), 200000u);

  // Second time the big header is already there: no upload.
  auto again = c.compileFiles("k.metal", "kernel", files, {}, t, {msl::v1::PTX});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(server.cas_.update_calls, 1);

  // Evicted between FindMissingBlobs and Compile: re-uploaded, retried.
  {
    std::lock_guard lock(server.cas_.mu);
    server.compiler_.evict_before_compile = true;
  }
  auto retried = c.compileFiles("k.metal", "kernel", files, {}, t, {msl::v1::PTX});
  ASSERT_TRUE(retried.ok()) << msl::client::describeStatus(retried.status());
  EXPECT_TRUE(retried->success());
  EXPECT_EQ(server.cas_.update_calls, 2);
}

class MslcRun : public ::testing::Test {
 protected:
  void SetUp() override {
    old_ = fs::current_path();
    std::random_device rd;
    dir_ = fs::temp_directory_path() / ("mslc_run_" + std::to_string(rd()));
    fs::create_directories(dir_ / "inc");
    fs::current_path(dir_);
    std::ofstream("k.metal") << "#include \"inc/a.h\"\n#include <b.h>\n#include <metal_stdlib>\nkernel\n";
    std::ofstream("inc/a.h") << "// a\n";
    std::ofstream("inc/b.h") << "// b\n";
    std::ofstream("bad.metal") << "ERROR\n";
  }
  void TearDown() override {
    fs::current_path(old_);
    fs::remove_all(dir_);
  }
  int run(const std::vector<std::string>& args) {
    out_.str("");
    err_.str("");
    return msl::client::mslc::run(args, server_.address().c_str(), out_, err_);
  }
  FakeServer server_{false};
  std::ostringstream out_, err_;
  fs::path old_, dir_;
};

TEST_F(MslcRun, CompilesAndWrites) {
  ASSERT_EQ(run({"-c", "./k.metal", "-o", "out.bc", "-I", "inc", "-DX", "--stats"}), 0) << err_.str();
  const auto& req = server_.compiler_.last;
  EXPECT_EQ(req.main_path(), "k.metal");
  EXPECT_EQ(std::vector<std::string>(req.options().begin(), req.options().end()),
            (std::vector<std::string>{"-I", "inc", "-D", "X"}));
  std::vector<std::string> paths;
  for (const auto& f : req.files()) paths.push_back(f.path());
  EXPECT_EQ(paths, (std::vector<std::string>{"inc/a.h", "inc/b.h"}));
  ASSERT_EQ(req.outputs_size(), 1);
  EXPECT_EQ(req.outputs(0), msl::v1::LLVM_BITCODE);
  std::ifstream in("out.bc");
  std::string written((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(written.rfind("small:", 0), 0u);
  EXPECT_NE(err_.str().find("cache_hit=false"), std::string::npos);

  ASSERT_EQ(run({"-c", "k.metal", "-o", "-", "--target", "nvptx64-sm_80"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), std::string(200000, 'p'));
  EXPECT_EQ(server_.compiler_.last.target().cpu(), "sm_80");
}

TEST_F(MslcRun, ReportsFailures) {
  EXPECT_EQ(run({"-c", "bad.metal", "-o", "x"}), 1);
  EXPECT_EQ(err_.str(), "bad.metal:1:2: error: boom\n1 error generated.\n");
  EXPECT_FALSE(fs::exists("x"));
  EXPECT_EQ(run({"-c", "nope.metal", "-o", "x"}), 1);
  EXPECT_NE(err_.str().find("cannot read"), std::string::npos);
  EXPECT_EQ(run({"-c", "k.metal", "-o", "x", "--server", "127.0.0.1:1"}), 1);
  EXPECT_NE(err_.str().find("UNAVAILABLE"), std::string::npos);
  EXPECT_EQ(run({"--bogus"}), 1);
  EXPECT_EQ(run({"--help"}), 0);
  EXPECT_NE(out_.str().find("usage: mslc"), std::string::npos);
}

TEST(Client, ExecuteFetchesBuffersReturnedByDigest) {
  FakeServer server(false);
  Client c(server.address());
  auto devices = c.listDevices();
  ASSERT_TRUE(devices.ok()) << msl::client::describeStatus(devices.status());
  ASSERT_EQ(devices->devices_size(), 1);
  EXPECT_EQ(devices->devices(0).name(), "cpu");

  msl::v1::ExecuteRequest req;
  req.set_kernel("k");
  req.add_buffers()->set_inline_("abc");
  req.add_buffers()->set_zeros(5000);
  for (std::uint32_t i = 0; i < 2; ++i) {
    auto* b = req.add_buffer_bindings();
    b->set_index(2 * i);
    b->set_buffer(i);
  }
  auto r = c.execute(req);
  ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
  ASSERT_EQ(r->buffers_size(), 2);
  EXPECT_EQ(r->buffers(0).inline_data(), "bcd");
  EXPECT_EQ(r->buffers(1).inline_data(), std::string(5000, '\x01'));  // came by digest
  req.set_kernel("fail");
  auto bad = c.execute(req);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

class MslcRunKernel : public MslcRun {
 protected:
  int runKernel(const std::vector<std::string>& args) {
    out_.str("");
    err_.str("");
    return msl::client::mslc::runKernel(args, server_.address().c_str(), out_, err_);
  }
};

TEST_F(MslcRunKernel, CompilesExecutesAndPrints) {
  server_.compiler_.reflection_json = R"({"functions":[{"name":"k","symbol":"k","stage":"kernel","arguments":[
    {"name":"a","kind":"buffer","type":"float","index":0,"type_size":4},
    {"name":"n","kind":"buffer","type":"uint","index":1,"type_size":4},
    {"name":"big","kind":"buffer","type":"uchar","index":2,"type_size":1},
    {"name":"p","kind":"buffer","type":"P","index":4,"type_size":4}]}]})";
  std::ofstream("big.bin", std::ios::binary) << std::string(2000000, 'a');
  ASSERT_EQ(runKernel({"k.metal", "-I", "inc", "-DX", "--constant", "c=1", "--kernel", "k", "--grid", "8",
                       "--threadgroup", "4", "--buffer", "0=zeros:8", "--buffer", "1=uint:5", "--buffer",
                       "2=@big.bin", "--buffer", "4=uchar:1,2,3,4,5,6,7,8", "--out", "2=big.out",
                       "--print", "0:uchar", "--print", "1", "--print", "4", "--print", "0", "--repeat", "2",
                       "--stats"}),
            0)
      << err_.str();
  EXPECT_EQ(out_.str(), "1,1,1,1,1,1,1,1\n5\n02030405,06070809\n2.3694278e-38,2.3694278e-38\n");
  std::ifstream in("big.out", std::ios::binary);
  std::string big((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(big, std::string(2000000, 'b'));
  // The compile and the Execute's compile: the same request, for the cpu.
  const auto& compiled = server_.compiler_.last;
  const auto& ran = server_.executor_.last;
  EXPECT_EQ(ran.compile().SerializeAsString(), compiled.SerializeAsString());
  EXPECT_EQ(compiled.target().arch(), msl::v1::Target::X86_64);
  ASSERT_EQ(compiled.outputs_size(), 2);
  EXPECT_EQ(compiled.outputs(0), msl::v1::LLVM_BITCODE);
  EXPECT_EQ(compiled.outputs(1), msl::v1::REFLECTION);
  EXPECT_EQ(compiled.function_constants().at("c"), "1");
  EXPECT_EQ(compiled.files_size(), 2);
  EXPECT_EQ(ran.kernel(), "k");
  EXPECT_EQ(ran.device(), "cpu");
  EXPECT_EQ(ran.repeat(), 2u);
  EXPECT_TRUE(ran.buffers(2).has_digest());  // 2 MB went through the store
  EXPECT_NE(err_.str().find("mslc: stats: cache_hit=false"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("mslc: stats: dispatch 1: kernel_time=0.001 ms"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("mslc: stats: dispatch 2: kernel_time=0.002 ms"), std::string::npos) << err_.str();
}

TEST_F(MslcRunKernel, ReportsFailures) {
  const std::vector<std::string> common = {"--grid", "1", "--threadgroup", "1", "--buffer", "0=zeros:4"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), common.begin(), common.end());
    return args;
  };
  EXPECT_EQ(runKernel(with({"k.metal", "--kernel", "fail"})), 1);
  EXPECT_EQ(err_.str(), "mslc: error: INVALID_ARGUMENT: unknown kernel 'fail'\n");
  EXPECT_EQ(runKernel(with({"bad.metal", "--kernel", "k"})), 1);
  EXPECT_EQ(err_.str(), "bad.metal:1:2: error: boom\n1 error generated.\n");
  EXPECT_EQ(runKernel(with({"nope.metal", "--kernel", "k"})), 1);
  EXPECT_NE(err_.str().find("cannot read 'nope.metal'"), std::string::npos);
  EXPECT_EQ(runKernel(with({"k.metal", "--kernel", "k", "--buffer", "1=@missing.bin"})), 1);
  EXPECT_NE(err_.str().find("mslc: error: cannot read 'missing.bin'"), std::string::npos) << err_.str();
  EXPECT_EQ(runKernel(with({"k.metal", "--kernel", "k", "--server", "127.0.0.1:1"})), 1);
  EXPECT_NE(err_.str().find("127.0.0.1:1: UNAVAILABLE"), std::string::npos) << err_.str();
  EXPECT_EQ(runKernel({"k.metal", "--kernel", "k", "--buffer", "0=float:x"}), 1);
  EXPECT_NE(err_.str().find("mslc: error: --buffer 0=float:x: bad float value 'x'"), std::string::npos)
      << err_.str();
  EXPECT_EQ(runKernel({"--help"}), 0);
  EXPECT_NE(out_.str().find("usage: mslc run"), std::string::npos);
}

// --- issue 11: mslc as a drop-in for `metal` in a build ---------------------

// Several inputs in one call: NAME.air each, in the current directory; a
// failed one does not stop the others, and the exit status is 1.
TEST_F(MslcRun, SeveralInputsEachToNameAir) {
  std::ofstream("k2.metal") << "kernel two\n";
  ASSERT_EQ(run({"-c", "k.metal", "k2.metal", "-I", "inc"}), 0) << err_.str();
  std::ifstream k("k.air"), k2("k2.air");
  std::string a((std::istreambuf_iterator<char>(k)), {}), b((std::istreambuf_iterator<char>(k2)), {});
  EXPECT_EQ(a.rfind("small:#include", 0), 0u) << a;
  EXPECT_EQ(b, "small:kernel two\n");
  fs::remove("k.air");
  EXPECT_EQ(run({"-c", "bad.metal", "k.metal", "-I", "inc"}), 1);
  EXPECT_FALSE(fs::exists("bad.air"));
  EXPECT_TRUE(fs::exists("k.air"));
  EXPECT_EQ(run({"-c", "k.metal", "k2.metal", "-o", "x.air"}), 1);
  EXPECT_NE(err_.str().find("cannot specify -o when generating multiple output files"), std::string::npos);
  // -S -emit-llvm asks for LLVM IR and writes NAME.ll.
  ASSERT_EQ(run({"-S", "-emit-llvm", "k2.metal"}), 0) << err_.str();
  EXPECT_EQ(server_.compiler_.last.outputs(0), msl::v1::LLVM_IR);
  EXPECT_TRUE(fs::exists("k2.ll"));
}

TEST_F(MslcRun, WritesDependencyFiles) {
  fs::create_directories("out");
  ASSERT_EQ(run({"-c", "k.metal", "-I", "inc", "-o", "out/k.air", "-MD"}), 0) << err_.str();
  auto read = [](const char* path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  // As clang: next to the output, the output as target, "./" dropped.
  EXPECT_EQ(read("out/k.d"), "out/k.air: k.metal inc/a.h inc/b.h\n");
  ASSERT_EQ(run({"-c", "k.metal", "-I", "inc", "-MMD", "-MF", "deps.d", "-MT", "tgt", "-MP"}), 0) << err_.str();
  EXPECT_EQ(read("deps.d"), "tgt: k.metal inc/a.h inc/b.h\n\ninc/a.h:\n\ninc/b.h:\n");
  // Without -o: NAME.air and NAME.d in the current directory; every input its own.
  std::ofstream("k2.metal") << "kernel two\n";
  ASSERT_EQ(run({"-c", "k.metal", "k2.metal", "-I", "inc", "-MD"}), 0) << err_.str();
  EXPECT_EQ(read("k.d"), "k.air: k.metal inc/a.h inc/b.h\n");
  EXPECT_EQ(read("k2.d"), "k2.air: k2.metal\n");
}

// Inputs anywhere; diagnostics name them as spelled, as clang does.
TEST_F(MslcRun, DiagnosticsNameFilesAsSpelled) {
  const std::string abs = (fs::current_path() / "bad.metal").string();
  EXPECT_EQ(run({"-c", abs}), 1);
  EXPECT_EQ(err_.str(), abs + ":1:2: error: boom\n1 error generated.\n");
  fs::create_directories("sub");
  fs::current_path("sub");
  EXPECT_EQ(run({"-c", "../bad.metal"}), 1);
  EXPECT_EQ(err_.str(), "../bad.metal:1:2: error: boom\n1 error generated.\n");
  EXPECT_EQ(server_.compiler_.last.main_path(), "bad.metal");
  ASSERT_EQ(run({"-c", "../k.metal", "-I", "../inc"}), 0) << err_.str();
  const auto& req = server_.compiler_.last;
  EXPECT_EQ(req.main_path(), "k.metal");
  EXPECT_EQ(std::vector<std::string>(req.options().begin(), req.options().end()),
            (std::vector<std::string>{"-I", "inc"}));
  EXPECT_TRUE(fs::exists("k.air"));
  fs::current_path("..");
}

// mslc's own HTTP/2 call (FastCompile.h) against a real gRPC server: the
// same response as gRPC's client, a server's status as a result, and
// nullopt (so that mslc uses the Client) for what it does not handle.
TEST(FastCompile, SameAnswerAsTheClient) {
  FakeServer server(false);
  ClientOptions options;
  options.address = server.address();
  msl::v1::CompileRequest req;
  req.set_main_path("k.metal");
  req.mutable_main_source()->set_inline_("kernel\n");
  auto* f = req.add_files();
  f->set_path("inc/a.h");
  f->mutable_content()->set_inline_(std::string(40000, 'h'));  // DATA in three frames
  req.add_options("-DX=1");
  req.add_outputs(msl::v1::LLVM_BITCODE);
  req.add_outputs(msl::v1::PTX);  // by digest (examples/cmake's test has a response of many frames)
  auto fast = msl::client::fastCompile(options, req);
  ASSERT_TRUE(fast.has_value());
  ASSERT_TRUE(fast->ok()) << msl::client::describeStatus(fast->status());
  EXPECT_EQ(server.compiler_.last.SerializeAsString(), req.SerializeAsString());
  auto slow = Client(options).compile(req);
  ASSERT_TRUE(slow.ok());
  EXPECT_EQ((*fast)->SerializeAsString(), slow->SerializeAsString());
  EXPECT_TRUE((*fast)->success());

  // A status from the server (grpc-status, grpc-message percent-encoded).
  msl::v1::CompileRequest missing = req;
  *missing.mutable_main_source()->mutable_digest() = digestOf("not in the store: 100% é");
  auto status = msl::client::fastCompile(options, missing);
  ASSERT_TRUE(status.has_value());
  ASSERT_FALSE(status->ok());
  EXPECT_EQ(status->status().error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(status->status().error_message(), "main source blob missing");

  // Not handled: left to the Client.
  msl::v1::CompileRequest big = req;
  big.mutable_files(0)->mutable_content()->set_inline_(std::string(msl::client::kFastCompileMaxRequestBytes, 'b'));
  EXPECT_FALSE(msl::client::fastCompile(options, big).has_value());
  ClientOptions tls = options;
  tls.tls.enabled = true;
  EXPECT_FALSE(msl::client::fastCompile(tls, req).has_value());
  ClientOptions uri = options;
  uri.address = "ipv4:" + options.address;
  EXPECT_FALSE(msl::client::fastCompile(uri, req).has_value());
  ClientOptions nobody = options;
  nobody.address = "127.0.0.1:1";
  EXPECT_FALSE(msl::client::fastCompile(nobody, req).has_value());
}

// A server that accepts and never answers: past the deadline, that is the
// answer (DEADLINE_EXCEEDED), not a second wait through the Client.
TEST(FastCompile, DeadlineExceeded) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(fd, 4), 0);  // the kernel completes the handshake; nobody reads
  socklen_t len = sizeof addr;
  ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ClientOptions options;
  options.address = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  options.call_deadline = std::chrono::milliseconds(300);
  msl::v1::CompileRequest req;
  req.set_main_path("k.metal");
  auto start = std::chrono::steady_clock::now();
  auto r = msl::client::fastCompile(options, req);
  auto waited = std::chrono::steady_clock::now() - start;
  ::close(fd);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_GE(waited, std::chrono::milliseconds(290));
  EXPECT_LT(waited, std::chrono::seconds(5));
}

// mslc -c takes the fast path, and its answer is the Client's.
TEST_F(MslcRun, FastPathAndClientWriteTheSame) {
  ASSERT_EQ(run({"-c", "k.metal", "-I", "inc", "-o", "fast.air"}), 0) << err_.str();
  setenv(msl::client::mslc::kNoFastPathEnv, "1", 1);
  int rc = run({"-c", "k.metal", "-I", "inc", "-o", "slow.air"});
  unsetenv(msl::client::mslc::kNoFastPathEnv);
  ASSERT_EQ(rc, 0) << err_.str();
  auto read = [](const char* path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  };
  EXPECT_EQ(read("fast.air"), read("slow.air"));
  EXPECT_EQ(read("fast.air").rfind("small:", 0), 0u);
  // A PTX artifact the server returns by digest only: fetched through the Client.
  ASSERT_EQ(run({"-c", "k.metal", "-I", "inc", "--target", "nvptx64", "-o", "k.ptx"}), 0) << err_.str();
  EXPECT_EQ(read("k.ptx"), std::string(200000, 'p'));
}
