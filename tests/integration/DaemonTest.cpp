// Integration tests: the real msld, real workers, real RocksDB, over gRPC
// and HTTP on loopback.
#include "DaemonFixture.h"
#include "msl/client/Client.h"

#include <nlohmann/json.hpp>
#include <rocksdb/db.h>

#include <csignal>
#include <fstream>
#include <sys/wait.h>
#include <future>
#include <thread>

namespace msl::test {
namespace {

using msl::v1::ArtifactKind;
using msl::v1::CompileResponse;
using msl::v1::Target;

// A source whose preprocessing makes 2^n initializers: slow and memory-hungry
// on purpose (n = 20 takes about 2 s and 300 MB here).
int countOf(const std::string &text, const std::string &needle) {
  int n = 0;
  for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1))
    ++n;
  return n;
}

class MsldTest : public DaemonTest {};

TEST_F(MsldTest, ExamplesCompileToPtxWithOneEntryPerKernelAndReflection) {
  Daemon &d = startDaemon();
  const std::map<std::string, std::vector<std::string>> kernelsOf = {
      {"examples/saxpy.metal", {"saxpy"}},
      {"examples/reduce.metal", {"reduce_sum", "reduce_sum_dynamic"}},
      {"examples/histogram.metal", {"histogram"}}};
  for (const auto &[path, kernels] : kernelsOf) {
    std::string source = readSourceFile(path);
    ASSERT_FALSE(source.empty()) << path;
    CompileResponse resp;
    auto s = compile(d, compileRequest(source, {}, Target::NVPTX64), resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_TRUE(resp.success()) << path << "\n" << diagnosticsText(resp);
    std::string ptx = artifact(resp, msl::v1::PTX);
    EXPECT_EQ(countOf(ptx, ".visible .entry"), int(kernels.size())) << ptx;
    auto reflection = nlohmann::json::parse(artifact(resp, msl::v1::REFLECTION));
    ASSERT_EQ(reflection["functions"].size(), kernels.size());
    for (const auto &k : kernels) {
      EXPECT_NE(ptx.find(".entry " + k + "("), std::string::npos) << k;
      bool found = false;
      for (const auto &jk : reflection["functions"])
        found |= jk["name"] == k;
      EXPECT_TRUE(found) << k;
    }
  }
}

TEST_F(MsldTest, SaxpyReflectionNamesBindingsAndBuiltins) {
  Daemon &d = startDaemon();
  CompileResponse resp;
  ASSERT_TRUE(compile(d, compileRequest(readSourceFile("examples/saxpy.metal")), resp).ok());
  ASSERT_TRUE(resp.success()) << diagnosticsText(resp);
  // x86-64 default outputs: bitcode (magic 'BC' 0xC0DE) and reflection.
  std::string bc = artifact(resp, msl::v1::LLVM_BITCODE);
  ASSERT_GE(bc.size(), 4u);
  EXPECT_EQ(bc.substr(0, 4), std::string("BC\xC0\xDE", 4));
  auto k = nlohmann::json::parse(artifact(resp, msl::v1::REFLECTION))["functions"][0];
  EXPECT_EQ(k["name"], "saxpy");
  int buffers = 0, builtins = 0;
  for (const auto &a : k["arguments"]) {
    if (a["kind"] == "buffer") {
      ++buffers;
      EXPECT_TRUE(a["address_space"] == "device" || a["address_space"] == "constant") << a;
      EXPECT_TRUE(a.contains("index")) << a;
    } else if (a["kind"] == "builtin") {
      ++builtins;
      EXPECT_EQ(a["builtin"], "thread_position_in_grid");
    }
  }
  EXPECT_GE(buffers, 3);
  EXPECT_EQ(builtins, 1);
}

TEST_F(MsldTest, VertexAndFragmentFunctionsAreReflected) {
  Daemon &d = startDaemon();
  CompileResponse resp;
  ASSERT_TRUE(compile(d, compileRequest(readSourceFile("examples/textured_quad.metal")), resp).ok());
  ASSERT_TRUE(resp.success()) << diagnosticsText(resp);
  auto functions = nlohmann::json::parse(artifact(resp, msl::v1::REFLECTION))["functions"];
  ASSERT_EQ(functions.size(), 2u) << functions;
  const auto &vs = functions[0], &fs = functions[1];
  EXPECT_EQ(vs["stage"], "vertex");
  EXPECT_EQ(vs["arguments"][0]["kind"], "stage_in");
  EXPECT_EQ(vs["arguments"][0]["members"][1]["attributes"][0], "attribute:1");
  EXPECT_EQ(vs["outputs"][0]["attributes"][0], "position");
  EXPECT_EQ(vs["outputs"][1]["attributes"][0], "user:uv");
  EXPECT_EQ(fs["stage"], "fragment");
  EXPECT_EQ(fs["arguments"][1]["kind"], "texture");
  EXPECT_EQ(fs["arguments"][1]["index"], 0);
  EXPECT_EQ(fs["arguments"][2]["kind"], "sampler");
  EXPECT_EQ(fs["outputs"][0]["attributes"][0], "color:0");
}

TEST_F(MsldTest, BrokenSourceReportsLineAndColumn) {
  Daemon &d = startDaemon();
  CompileResponse resp;
  std::string source = "#include <metal_stdlib>\n"
                       "using namespace metal;\n"
                       "kernel void k(device float* a [[buffer(0)]]) {\n"
                       "  a[0] = undeclared_thing;\n"
                       "}\n";
  ASSERT_TRUE(compile(d, compileRequest(source), resp).ok());
  EXPECT_FALSE(resp.success());
  ASSERT_GE(resp.diagnostics_size(), 1);
  const auto &diag = resp.diagnostics(0);
  EXPECT_EQ(diag.file(), "main.metal");
  EXPECT_EQ(diag.line(), 4u);
  EXPECT_EQ(diag.column(), 10u);
  EXPECT_EQ(diag.severity(), msl::v1::Diagnostic::ERROR);
  EXPECT_NE(diag.message().find("undeclared_thing"), std::string::npos);
  EXPECT_EQ(resp.artifacts_size(), 0);
}

TEST_F(MsldTest, OptionsChangeTheOutput) {
  Daemon &d = startDaemon();
  const std::string source = "kernel void k(device float* a [[buffer(0)]]) {\n"
                             "#ifdef SCALE\n  a[0] = a[1] * SCALE;\n#else\n  a[0] = a[1] + a[2];\n#endif\n}\n";
  auto ir = [&](std::vector<std::string> options) {
    CompileResponse resp;
    auto s = compile(d, compileRequest(source, options, Target::X86_64, {msl::v1::LLVM_IR}), resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_TRUE(resp.success()) << diagnosticsText(resp);
    return artifact(resp, msl::v1::LLVM_IR);
  };
  std::string plain = ir({});
  std::string scaled = ir({"-D", "SCALE=3.5f"});
  EXPECT_NE(plain.find("fadd"), std::string::npos);
  EXPECT_NE(scaled.find("3.5"), std::string::npos);
  EXPECT_EQ(plain.find("3.5"), std::string::npos);
  // -ffast-math is the default; -fno-fast-math removes the fast flags.
  EXPECT_NE(plain.find("fadd fast"), std::string::npos) << plain;
  EXPECT_EQ(ir({"-fno-fast-math"}).find("fadd fast"), std::string::npos);
}

TEST_F(MsldTest, WarningsFollowWerrorAndW) {
  Daemon &d = startDaemon();
  const std::string source = "kernel void k(device int* a [[buffer(0)]]) { int unused = 1; }\n";
  auto run = [&](std::vector<std::string> options) {
    CompileResponse resp;
    EXPECT_TRUE(compile(d, compileRequest(source, options), resp).ok());
    return resp;
  };
  CompileResponse warned = run({"-Wunused-variable"});
  EXPECT_TRUE(warned.success());
  ASSERT_EQ(warned.diagnostics_size(), 1) << diagnosticsText(warned);
  EXPECT_EQ(warned.diagnostics(0).severity(), msl::v1::Diagnostic::WARNING);
  CompileResponse failed = run({"-Wunused-variable", "-Werror"});
  EXPECT_FALSE(failed.success());
  ASSERT_GE(failed.diagnostics_size(), 1);
  EXPECT_EQ(failed.diagnostics(0).severity(), msl::v1::Diagnostic::ERROR);
  CompileResponse quiet = run({"-Wunused-variable", "-W"});
  EXPECT_TRUE(quiet.success());
  EXPECT_EQ(quiet.diagnostics_size(), 0) << diagnosticsText(quiet);
}

TEST_F(MsldTest, RepeatIsACacheHitSeenInMetrics) {
  Daemon &d = startDaemon();
  auto req = compileRequest(readSourceFile("examples/histogram.metal"));
  CompileResponse first, second;
  ASSERT_TRUE(compile(d, req, first).ok());
  ASSERT_TRUE(compile(d, req, second).ok());
  EXPECT_FALSE(first.cache_hit());
  EXPECT_TRUE(second.cache_hit());
  EXPECT_EQ(first.action_key(), second.action_key());
  EXPECT_EQ(artifact(first, msl::v1::LLVM_BITCODE), artifact(second, msl::v1::LLVM_BITCODE));
  EXPECT_EQ(d.metric("msld_action_cache_hits_total"), 1);
  EXPECT_EQ(d.metric("msld_action_cache_misses_total"), 1);
  EXPECT_EQ(d.metric("msld_requests_total{code=\"OK\",method=\"Compile\"}"), 2);
  EXPECT_EQ(d.metric("msld_compile_duration_seconds_count{cache=\"hit\"}"), 1);
  EXPECT_GT(d.metric("msld_cas_blobs"), 0);
  EXPECT_GT(d.metric("msld_cas_bytes"), 0);
  // A different option is a different action.
  CompileResponse other;
  ASSERT_TRUE(compile(d, compileRequest(readSourceFile("examples/histogram.metal"), {"-DX"}), other).ok());
  EXPECT_FALSE(other.cache_hit());
  EXPECT_NE(other.action_key(), first.action_key());
}

TEST_F(MsldTest, CacheSurvivesRestart) {
  auto req = compileRequest(readSourceFile("examples/saxpy.metal"), {}, Target::NVPTX64);
  CompileResponse before, after;
  ASSERT_TRUE(compile(startDaemon(), req, before).ok());
  EXPECT_FALSE(before.cache_hit());
  EXPECT_EQ(daemon_->stop(), 0);
  Daemon &d = startDaemon();
  ASSERT_TRUE(compile(d, req, after).ok());
  EXPECT_TRUE(after.cache_hit());
  EXPECT_EQ(artifact(before, msl::v1::PTX), artifact(after, msl::v1::PTX));
  EXPECT_EQ(d.metric("msld_action_cache_misses_total"), 0);
}

// --listen-unix: the same services on a Unix socket beside the TCP port,
// one store behind both; a path holding anything but a socket is refused.
TEST_F(MsldTest, ServesTheSameServicesOnAUnixSocket) {
  const std::string socket = (dir_ / "msld.sock").string();
  Daemon &d = startDaemon({"--listen-unix", socket});
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  auto channel = grpc::CreateCustomChannel("unix:" + socket, grpc::InsecureChannelCredentials(), args);
  auto overUnix = msl::v1::Compiler::NewStub(channel);
  auto req = compileRequest(readSourceFile("examples/saxpy.metal"), {}, Target::NVPTX64);
  CompileResponse first, second;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  grpc::Status s = overUnix->Compile(&ctx, req, &first);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_TRUE(first.success()) << diagnosticsText(first);
  EXPECT_FALSE(first.cache_hit());
  ASSERT_TRUE(compile(d, req, second).ok()); // over TCP
  EXPECT_TRUE(second.cache_hit());
  EXPECT_EQ(artifact(first, msl::v1::PTX), artifact(second, msl::v1::PTX));
  EXPECT_EQ(daemon_->stop(), 0);

  // A socket left behind is replaced; a regular file is not touched.
  EXPECT_TRUE(startDaemon({"--listen-unix", socket}).running());
  EXPECT_EQ(daemon_->stop(), 0);
  const std::string file = (dir_ / "not-a-socket").string();
  std::ofstream(file) << "keep me";
  Daemon refused((dir_ / "data2").string(), {"--listen-unix", file});
  EXPECT_FALSE(refused.start());
  EXPECT_NE(refused.log().find("it exists and is not a socket"), std::string::npos) << refused.log();
  std::ifstream in(file);
  std::string kept((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(kept, "keep me");
}

// Flips the last byte of every value in the store's `cas` column family, as
// a disk fault would, while msld is stopped.
void corruptEveryBlob(const std::string &dbPath) {
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dbPath, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto &n : names)
    cfs.push_back({n, rocksdb::ColumnFamilyOptions()});
  std::vector<rocksdb::ColumnFamilyHandle *> handles;
  rocksdb::DB *db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), dbPath, cfs, &handles, &db).ok());
  int corrupted = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] != "cas")
      continue;
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), handles[i]));
    std::vector<std::pair<std::string, std::string>> damaged;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string v = it->value().ToString();
      if (v.empty())
        continue;
      v.back() ^= 0x5a;
      damaged.emplace_back(it->key().ToString(), v);
    }
    for (auto &[k, v] : damaged)
      ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), handles[i], k, v).ok());
    corrupted += int(damaged.size());
  }
  EXPECT_GT(corrupted, 0);
  for (auto *h : handles)
    db->DestroyColumnFamilyHandle(h);
  delete db;
}

TEST_F(MsldTest, CorruptBlobIsNeverServed) {
  Daemon &d = startDaemon();
  CompileResponse compiled;
  auto req = compileRequest(readSourceFile("examples/saxpy.metal"));
  ASSERT_TRUE(compile(d, req, compiled).ok());
  ASSERT_TRUE(compiled.success());
  ASSERT_GE(compiled.artifacts_size(), 1);
  msl::v1::Digest artifactDigest = compiled.artifacts(0).digest();
  EXPECT_EQ(d.stop(), 0);

  corruptEveryBlob((dir_ / "data").string());

  Daemon &again = startDaemon();
  msl::v1::BatchReadBlobsRequest read;
  *read.add_digests() = artifactDigest;
  msl::v1::BatchReadBlobsResponse readResp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(again.cas().BatchReadBlobs(&ctx, read, &readResp).ok());
  ASSERT_EQ(readResp.responses_size(), 1);
  EXPECT_EQ(readResp.responses(0).status().code(), int(grpc::StatusCode::NOT_FOUND));
  EXPECT_TRUE(readResp.responses(0).data().empty());
  EXPECT_GE(again.metric("msld_cas_corrupt_blobs_total"), 1);

  // The cached compile whose artifacts rotted is compiled again, not served.
  CompileResponse recompiled;
  ASSERT_TRUE(compile(again, req, recompiled).ok());
  EXPECT_FALSE(recompiled.cache_hit());
  EXPECT_TRUE(recompiled.success());
  EXPECT_EQ(artifact(recompiled, compiled.artifacts(0).kind()), artifact(compiled, compiled.artifacts(0).kind()));
}

TEST_F(MsldTest, CrashingCompileLeavesTheDaemonServing) {
  Daemon &d = startDaemon();
  CompileResponse resp;
  auto s = compile(d, compileRequest("#pragma clang __debug crash\nkernel void k() {}\n"), resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_NE(s.error_message().find("crashed"), std::string::npos) << s.error_message();
  EXPECT_EQ(d.metric("msld_worker_crashes_total"), 1);
  // Both workers still answer (the crashed one was replaced).
  for (int i = 0; i < 3; ++i) {
    CompileResponse ok;
    ASSERT_TRUE(compile(d, compileRequest(readSourceFile("examples/saxpy.metal"),
                                          {"-DN" + std::to_string(i)}), ok).ok());
    EXPECT_TRUE(ok.success());
  }
  // The crash was not cached: it crashes again.
  CompileResponse again;
  EXPECT_EQ(compile(d, compileRequest("#pragma clang __debug crash\nkernel void k() {}\n"), again)
                .error_code(),
            grpc::StatusCode::INTERNAL);
}

TEST_F(MsldTest, CompilePastItsTimeLimitIsStopped) {
  Daemon &d = startDaemon({"--compile-timeout-ms", "300"});
  CompileResponse resp;
  auto s = compile(d, compileRequest(macroBomb(21)), resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  EXPECT_EQ(d.metric("msld_worker_timeouts_total"), 1);
  // The daemon serves on. (A kernel without the stdlib: a fresh worker's
  // first stdlib compile builds its precompiled header, which can pass
  // 300 ms on a loaded machine.)
  CompileResponse ok;
  auto serves = compile(d, compileRequest("kernel void k(device int *o [[buffer(0)]]) { o[0] = 1; }\n"), ok);
  ASSERT_TRUE(serves.ok()) << serves.error_message();
  EXPECT_TRUE(ok.success()) << diagnosticsText(ok);
}

TEST_F(MsldTest, CompilePastItsMemoryLimitFailsAlone) {
  Daemon &d = startDaemon({"--compile-memory-mb", "400"});
  CompileResponse resp;
  auto s = compile(d, compileRequest(macroBomb(21)), resp);
  // A resource error naming the limit, not "crashed the compiler".
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("memory"), std::string::npos) << s.error_message();
  EXPECT_EQ(d.metric("msld_worker_memory_limit_kills_total"), 1);
  EXPECT_EQ(d.metric("msld_worker_crashes_total"), 0);
  CompileResponse ok;
  ASSERT_TRUE(compile(d, compileRequest(readSourceFile("examples/saxpy.metal")), ok).ok());
  EXPECT_TRUE(ok.success());
}

TEST_F(MsldTest, HostFilesAreInvisible) {
  Daemon &d = startDaemon();
  for (const char *include : {"/etc/passwd", "../../../../etc/passwd", "etc/passwd"}) {
    CompileResponse resp;
    std::string source = std::string("#include \"") + include + "\"\nkernel void k() {}\n";
    ASSERT_TRUE(compile(d, compileRequest(source), resp).ok());
    EXPECT_FALSE(resp.success()) << include;
    ASSERT_GE(resp.diagnostics_size(), 1);
    EXPECT_EQ(resp.diagnostics(0).line(), 1u);
    EXPECT_NE(resp.diagnostics(0).message().find("not found"), std::string::npos)
        << resp.diagnostics(0).message();
    EXPECT_EQ(diagnosticsText(resp).find("root:"), std::string::npos);
  }
}

TEST_F(MsldTest, HeadersComeFromTheRequest) {
  Daemon &d = startDaemon();
  auto req = compileRequest("#include \"inc/scale.h\"\n#include <common.h>\n"
                            "kernel void k(device float* a [[buffer(0)]]) { a[0] = SCALE * OFFSET; }\n",
                            {"-I", "lib"});
  auto *f = req.add_files();
  f->set_path("inc/scale.h");
  f->mutable_content()->set_inline_("#define SCALE 2.0f\n");
  f = req.add_files();
  f->set_path("lib/common.h");
  f->mutable_content()->set_inline_("#define OFFSET 4.0f\n");
  CompileResponse resp;
  ASSERT_TRUE(compile(d, req, resp).ok());
  EXPECT_TRUE(resp.success()) << diagnosticsText(resp);
  // Changing a header's content changes the action.
  f->mutable_content()->set_inline_("#define OFFSET 5.0f\n");
  CompileResponse changed;
  ASSERT_TRUE(compile(d, req, changed).ok());
  EXPECT_FALSE(changed.cache_hit());
  EXPECT_NE(changed.action_key(), resp.action_key());
}

TEST_F(MsldTest, FunctionConstantsSpecializeAndKeyTheCompile) {
  Daemon &d = startDaemon();
  const std::string source = "constant float scale [[function_constant(0)]];\n"
                             "constant float s = is_function_constant_defined(scale) ? scale : 8.0;\n"
                             "kernel void k(device float* a [[buffer(0)]]) { a[0] = a[1] * s; }\n";
  auto compileWith = [&](std::map<std::string, std::string> constants, CompileResponse &resp) {
    auto req = compileRequest(source, {}, Target::X86_64, {msl::v1::LLVM_IR});
    req.mutable_function_constants()->insert(constants.begin(), constants.end());
    auto s = compile(d, req, resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_TRUE(resp.success()) << diagnosticsText(resp);
    return artifact(resp, msl::v1::LLVM_IR);
  };
  CompileResponse undefined, byIndex, byName, again;
  EXPECT_NE(compileWith({}, undefined).find("8.000000e+00"), std::string::npos);
  EXPECT_NE(compileWith({{"0", "0.25"}}, byIndex).find("2.500000e-01"), std::string::npos);
  EXPECT_NE(compileWith({{"scale", "0.75"}}, byName).find("7.500000e-01"), std::string::npos);
  EXPECT_FALSE(byName.cache_hit());
  compileWith({{"scale", "0.75"}}, again);
  EXPECT_TRUE(again.cache_hit()) << "the same constants are the same action";

  auto bad = compileRequest(source);
  (*bad.mutable_function_constants())["not a key"] = "1";
  CompileResponse resp;
  auto s = compile(d, bad, resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("not a key"), std::string::npos) << s.error_message();
}

TEST_F(MsldTest, BadRequestsAreInvalidArgument) {
  Daemon &d = startDaemon();
  struct Case {
    const char *what;
    msl::v1::CompileRequest request;
    const char *mentions;
  };
  std::vector<Case> cases;
  cases.push_back({"no source", msl::v1::CompileRequest(), "main_source"});
  cases.push_back({"unknown -std", compileRequest("kernel void k() {}", {"-std=metal9.9"}), "ios-metal2.0"});
  cases.push_back({"empty -std", compileRequest("kernel void k() {}", {"-std="}), "osx-metal1.1"});
  cases.push_back({"unknown option", compileRequest("kernel void k() {}", {"-fplugin=x.so"}), "-fplugin"});
  auto escaping = compileRequest("kernel void k() {}");
  escaping.add_files()->set_path("../secret.h");
  escaping.mutable_files(0)->mutable_content()->set_inline_("x");
  cases.push_back({"path with ..", escaping, "../secret.h"});
  auto badDigest = compileRequest("");
  badDigest.mutable_main_source()->mutable_digest()->set_hash("not-a-sha256");
  cases.push_back({"malformed digest", badDigest, "malformed"});
  auto ptxForX86 = compileRequest("kernel void k() {}", {}, Target::X86_64, {msl::v1::PTX});
  cases.push_back({"PTX for x86", ptxForX86, "PTX"});
  for (auto &c : cases) {
    CompileResponse resp;
    auto s = compile(d, c.request, resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.what;
    EXPECT_NE(s.error_message().find(c.mentions), std::string::npos) << c.what << ": " << s.error_message();
  }
  EXPECT_EQ(d.metric("msld_requests_total{code=\"INVALID_ARGUMENT\",method=\"Compile\"}"), double(cases.size()));

  // A digest of a blob the store does not have.
  auto missing = compileRequest("");
  missing.mutable_main_source()->mutable_digest()->set_hash(std::string(64, 'a'));
  missing.mutable_main_source()->mutable_digest()->set_size_bytes(3);
  CompileResponse resp;
  EXPECT_EQ(compile(d, missing, resp).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(MsldTest, CasVerifiesDigestsOnUpload) {
  Daemon &d = startDaemon();
  const std::string data = "kernel void k() {}\n";
  msl::v1::BatchUpdateBlobsRequest up;
  auto *good = up.add_requests();
  good->mutable_digest()->set_hash(sha256Hex("something else"));
  good->mutable_digest()->set_size_bytes(data.size());
  good->set_data(data);
  msl::v1::BatchUpdateBlobsResponse upResp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(d.cas().BatchUpdateBlobs(&ctx, up, &upResp).ok());
  ASSERT_EQ(upResp.responses_size(), 1);
  EXPECT_EQ(upResp.responses(0).status().code(), int(grpc::StatusCode::INVALID_ARGUMENT));
  EXPECT_NE(upResp.responses(0).status().message().find("mismatch"), std::string::npos);

  // The blob did not land: FindMissingBlobs still lists it.
  msl::v1::FindMissingBlobsRequest find;
  *find.add_blob_digests() = good->digest();
  msl::v1::FindMissingBlobsResponse findResp;
  grpc::ClientContext ctx2;
  ASSERT_TRUE(d.cas().FindMissingBlobs(&ctx2, find, &findResp).ok());
  EXPECT_EQ(findResp.missing_blob_digests_size(), 1);
}

TEST_F(MsldTest, SourceByDigestAfterUpload) {
  Daemon &d = startDaemon();
  // Inline and by-digest sources are the same action: the second is a hit.
  std::string source = readSourceFile("examples/saxpy.metal");
  CompileResponse inlineResp;
  ASSERT_TRUE(compile(d, compileRequest(source), inlineResp).ok());
  msl::v1::BatchUpdateBlobsRequest up;
  auto *r = up.add_requests();
  r->mutable_digest()->set_hash(sha256Hex(source));
  r->mutable_digest()->set_size_bytes(source.size());
  r->set_data(source);
  msl::v1::BatchUpdateBlobsResponse upResp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(d.cas().BatchUpdateBlobs(&ctx, up, &upResp).ok());
  ASSERT_EQ(upResp.responses(0).status().code(), 0) << upResp.responses(0).status().message();
  msl::v1::CompileRequest byDigest = compileRequest("");
  *byDigest.mutable_main_source()->mutable_digest() = r->digest();
  CompileResponse resp;
  ASSERT_TRUE(compile(d, byDigest, resp).ok());
  EXPECT_TRUE(resp.cache_hit());
  EXPECT_EQ(resp.action_key(), inlineResp.action_key());
}

TEST_F(MsldTest, IdenticalConcurrentCompilesRunOnce) {
  Daemon &d = startDaemon();
  auto req = compileRequest(macroBomb(17));
  const int n = 6;
  std::vector<std::future<CompileResponse>> futures;
  for (int i = 0; i < n; ++i)
    futures.push_back(std::async(std::launch::async, [&] {
      CompileResponse resp;
      EXPECT_TRUE(compile(d, req, resp).ok());
      return resp;
    }));
  std::set<std::string> keys;
  for (auto &f : futures)
    keys.insert(f.get().action_key());
  EXPECT_EQ(keys.size(), 1u);
  // Exactly one compile ran: every other request shared it or hit the cache.
  double shared = d.metric("msld_compiles_deduplicated_total");
  double hits = d.metric("msld_action_cache_hits_total");
  EXPECT_EQ(shared + hits, n - 1);
  EXPECT_EQ(d.metric("msld_action_cache_misses_total") - shared, 1);
}

TEST_F(MsldTest, SigtermDrainsInFlightWork) {
  Daemon &d = startDaemon();
  auto pending = std::async(std::launch::async, [&] {
    CompileResponse resp;
    auto s = compile(d, compileRequest(macroBomb(20)), resp);
    return std::make_pair(s.ok(), resp.success());
  });
  // Once the compile is running in a worker, ask the daemon to stop.
  for (int i = 0; i < 1500 && d.metric("msld_compiles_in_flight") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(d.metric("msld_compiles_in_flight"), 1);
  EXPECT_EQ(d.stop(), 0);
  auto [rpcOk, compiled] = pending.get();
  EXPECT_TRUE(rpcOk);
  EXPECT_TRUE(compiled);
}

} // namespace
} // namespace msl::test

namespace msl::test {
namespace {

// Runs a shell command, returning its exit status and output (stdout+stderr).
std::pair<int, std::string> run(const std::string &command) {
  std::string output;
  FILE *p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p)
    return {-1, ""};
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, p)) > 0)
    output.append(buffer, n);
  int status = ::pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

void writeFile(const std::filesystem::path &path, const std::string &text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

TEST_F(MsldTest, HealthServiceSaysServing) {
  Daemon &d = startDaemon();
  msl::client::Client client(d.address());
  auto health = client.waitUntilHealthy(std::chrono::seconds(10));
  ASSERT_TRUE(health.ok()) << health.status().error_message();
  EXPECT_EQ(health->source, msl::client::HealthSource::kHealthService);
}

TEST_F(MsldTest, MslcSendsHeadersAndWritesTheArtifact) {
  Daemon &d = startDaemon();
  std::filesystem::path work = dir_ / "project";
  writeFile(work / "shaders/main.metal",
            "#include <metal_stdlib>\n#include \"local.h\"\n#include <shared/params.h>\n"
            "using namespace metal;\n"
            "kernel void k(device float* a [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
            "  a[i] = LOCAL_SCALE * PARAM_OFFSET;\n}\n");
  writeFile(work / "shaders/local.h", "#define LOCAL_SCALE 2.0f\n");
  writeFile(work / "include/shared/params.h", "#define PARAM_OFFSET 3.0f\n");
  std::string mslc = binDir() + "/mslc";
  auto [status, output] = run("cd " + work.string() + " && MSLD_ADDRESS=" + d.address() + " " +
                              mslc + " -c shaders/main.metal -o out.ptx -I include --target nvptx64");
  EXPECT_EQ(status, 0) << output;
  std::ifstream in(work / "out.ptx");
  std::string ptx((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(ptx.find(".visible .entry k("), std::string::npos) << ptx;

  // Errors print like clang and exit 1.
  writeFile(work / "shaders/local.h", "#define LOCAL_SCALE 2.0f\nconstant float broken = ;\n");
  auto [badStatus, badOutput] = run("cd " + work.string() + " && " + mslc + " --server " +
                                    d.address() + " -c shaders/main.metal -o out.ptx -I include");
  EXPECT_EQ(badStatus, 1) << badOutput;
  EXPECT_NE(badOutput.find("shaders/local.h:2:25: error: "), std::string::npos) << badOutput;
  EXPECT_NE(badOutput.find(": error: "), std::string::npos) << badOutput;
}

} // namespace
} // namespace msl::test
