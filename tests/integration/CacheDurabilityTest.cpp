// Integration tests through the real msld (see DaemonFixture.h): the cache
// as a durable, bounded, self-checking store (issue 12, point 4). kill -9 in
// the middle of uploads and compiles loses nothing that was acknowledged; a
// daemon under --cache-max-bytes evicts, says so in /metrics, and still
// answers every compile correctly; msld --scrub checks the data it left.
#include "DaemonFixture.h"
#include "msl/client/Client.h"
#include "msl/v1/admin.grpc.pb.h"

#include <rocksdb/db.h>

#include <array>
#include <atomic>
#include <chrono>
#include <future>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <random>
#include <sys/wait.h>
#include <thread>

namespace msl::test {
namespace {

using msl::v1::CompileResponse;

class CacheDurabilityTest : public DaemonTest {};

// msld evicts on a thread of its own, so the bytes held may pass the bound
// for a moment after an upload: waits (at most `seconds`) until a scrape
// shows `metric` at most `bound`; false if it never does.
bool waitForMetricAtMost(Daemon &d, const std::string &metric, double bound, int seconds = 30) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  for (;;) {
    if (d.metric(metric) <= bound)
      return true;
    if (std::chrono::steady_clock::now() > deadline)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct Acked {
  msl::v1::Digest digest;
  std::string bytes;
};

// Random bytes, from tens of bytes to a few hundred KiB (blob files start at
// 64 KiB), unique per (thread, index).
std::string randomBlob(std::mt19937 &rng, int thread, int index) {
  static const size_t kSizes[] = {40, 900, 5000, 70000, 300000};
  size_t size = kSizes[rng() % 5] + rng() % 512;
  std::string out = "blob " + std::to_string(thread) + "/" + std::to_string(index) + ":";
  out.resize(size);
  for (size_t i = out.find(':') + 1; i < size; ++i)
    out[i] = char(rng());
  return out;
}

std::string kernelSource(int variant) {
  return "kernel void k(device float *o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n"
         "  o[i] = o[i] * " +
         std::to_string(variant) + ".0f + 1.0f;\n}\n";
}

// Reads `digests` with BatchReadBlobs (raw gRPC, independent of the client
// library); the bytes by position, "" plus a message for a failure.
std::vector<std::string> readAll(Daemon &d, const std::vector<msl::v1::Digest> &digests,
                                 std::vector<std::string> &errors) {
  std::vector<std::string> out;
  for (size_t at = 0; at < digests.size();) {
    msl::v1::BatchReadBlobsRequest req;
    size_t bytes = 0;
    while (at < digests.size() && (req.digests_size() == 0 || bytes + digests[at].size_bytes() < (8u << 20))) {
      bytes += size_t(digests[at].size_bytes());
      *req.add_digests() = digests[at++];
    }
    msl::v1::BatchReadBlobsResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    grpc::Status s = d.cas().BatchReadBlobs(&ctx, req, &resp);
    for (int i = 0; i < req.digests_size(); ++i) {
      if (!s.ok() || i >= resp.responses_size() || resp.responses(i).status().code() != 0) {
        errors.push_back(req.digests(i).hash() + ": " +
                         (s.ok() ? i < resp.responses_size() ? resp.responses(i).status().message() : "no response"
                                 : s.error_message()));
        out.emplace_back();
      } else {
        out.push_back(resp.responses(i).data());
      }
    }
  }
  return out;
}


// Many clients upload and compile at once; msld is killed with SIGKILL in
// the middle (no drain, no flush: only what RocksDB's WAL already holds
// survives). Restarted on the same directory, every blob whose upload was
// acknowledged is there, byte for byte, and every acknowledged compile is a
// cache hit whose artifacts are readable. msld --scrub then finds the store
// clean.
TEST_F(CacheDurabilityTest, KillDashNineLosesNothingAcknowledged) {
  Daemon &d = startDaemon();
  const std::string address = d.address();

  std::mutex mu;
  std::vector<Acked> blobs;                            // acknowledged uploads
  std::vector<std::pair<int, CompileResponse>> compiles; // acknowledged compiles, by variant
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0}; // failed calls before the kill (there should be none)

  std::vector<std::thread> threads;
  constexpr int kUploaders = 6, kCompilers = 2;
  for (int t = 0; t < kUploaders; ++t)
    threads.emplace_back([&, t] {
      msl::client::ClientOptions o;
      o.address = address;
      o.call_deadline = std::chrono::seconds(30);
      msl::client::Client client(o);
      std::mt19937 rng(1000 + t);
      for (int i = 0; !stop; i += 4) {
        std::vector<std::string> batch;
        for (int j = 0; j < 4; ++j)
          batch.push_back(randomBlob(rng, t, i + j));
        auto r = client.uploadBlobs(batch);
        if (!r.ok()) {
          if (!stop)
            ++failures;
          return; // the daemon is gone
        }
        std::lock_guard lock(mu);
        for (size_t j = 0; j < batch.size(); ++j)
          blobs.push_back({(*r)[j], std::move(batch[j])});
      }
    });
  for (int t = 0; t < kCompilers; ++t)
    threads.emplace_back([&, t] {
      msl::client::ClientOptions o;
      o.address = address;
      o.call_deadline = std::chrono::seconds(60);
      msl::client::Client client(o);
      for (int v = 1 + t; !stop; v += kCompilers) {
        auto r = client.compile(compileRequest(kernelSource(v)));
        if (!r.ok()) {
          if (!stop)
            ++failures;
          return;
        }
        if (!r->success())
          ++failures;
        std::lock_guard lock(mu);
        compiles.emplace_back(v, *r);
      }
    });

  // Let it run until a fair amount is acknowledged, then kill it mid-way.
  for (int i = 0; i < 600; ++i) {
    {
      std::lock_guard lock(mu);
      if (blobs.size() >= 400 && compiles.size() >= 6)
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop = true;
  ASSERT_EQ(::kill(d.pid(), SIGKILL), 0);
  EXPECT_EQ(d.waitExit(10), std::optional<int>(-1)) << "msld was not killed by the signal";
  for (auto &t : threads)
    t.join();
  EXPECT_EQ(failures, 0) << "calls failed before the kill:\n" << d.log();
  size_t ackedBlobs = blobs.size(), ackedCompiles = compiles.size();
  ASSERT_GT(ackedBlobs, 0u);
  ASSERT_GT(ackedCompiles, 0u);
  std::cerr << "acknowledged before kill -9: " << ackedBlobs << " blobs, " << ackedCompiles << " compiles\n";

  Daemon &again = startDaemon();
  ASSERT_TRUE(again.running()) << again.log();

  // Every acknowledged blob: present (FindMissingBlobs) and intact.
  std::vector<msl::v1::Digest> digests;
  for (const auto &b : blobs)
    digests.push_back(b.digest);
  {
    msl::client::Client client(again.address());
    auto missing = client.findMissingBlobs(digests);
    ASSERT_TRUE(missing.ok()) << missing.status().error_message();
    EXPECT_TRUE(missing->empty()) << missing->size() << " acknowledged blobs are missing, e.g. "
                                  << (missing->empty() ? "" : missing->front().hash());
  }
  std::vector<std::string> errors;
  std::vector<std::string> read = readAll(again, digests, errors);
  EXPECT_TRUE(errors.empty()) << errors.size() << " acknowledged blobs unreadable, e.g. " << errors.front();
  size_t intact = 0;
  for (size_t i = 0; i < blobs.size(); ++i)
    intact += read[i] == blobs[i].bytes;
  EXPECT_EQ(intact, blobs.size());

  // Every acknowledged compile: a hit now, with the same, readable artifacts.
  for (const auto &[variant, first] : compiles) {
    CompileResponse now;
    ASSERT_TRUE(compile(again, compileRequest(kernelSource(variant)), now).ok());
    EXPECT_TRUE(now.cache_hit()) << "variant " << variant << " was acknowledged but is not cached";
    ASSERT_EQ(now.artifacts_size(), first.artifacts_size());
    std::vector<msl::v1::Digest> artifacts;
    for (int i = 0; i < now.artifacts_size(); ++i) {
      EXPECT_EQ(now.artifacts(i).digest().hash(), first.artifacts(i).digest().hash());
      artifacts.push_back(now.artifacts(i).digest());
    }
    std::vector<std::string> artifactErrors;
    auto bytes = readAll(again, artifacts, artifactErrors);
    EXPECT_TRUE(artifactErrors.empty()) << artifactErrors.front();
    for (size_t i = 0; i < bytes.size(); ++i)
      EXPECT_EQ(sha256Hex(bytes[i]), artifacts[i].hash());
  }
  EXPECT_EQ(again.metric("msld_cas_corrupt_blobs_total"), 0);

  // Offline, the scrub re-hashes everything: clean.
  EXPECT_EQ(again.stop(), 0);
  std::string report;
  int rc = runShell("'" + binDir() + "/msld' --scrub --data-dir '" + (dir_ / "data").string() + "'", report);
  EXPECT_EQ(rc, 0) << report;
  EXPECT_NE(report.find(": clean "), std::string::npos) << report;
  EXPECT_NE(report.find("corrupt_blobs=0"), std::string::npos) << report;
  EXPECT_NE(report.find("blobs_checked="), std::string::npos) << report;
}

// --cache-max-bytes with a suffix: a small cache, filled well past its size.
// msld evicts (least recently used first), /metrics reports the evictions
// and the bytes held, the bound holds, and compiles keep answering right: an
// evicted result is compiled again, a kept one is a hit whose artifacts are
// all there.
TEST_F(CacheDurabilityTest, CappedDaemonEvictsAndStillAnswersCorrectly) {
  constexpr uint64_t kCap = 512 << 10;
  Daemon &d = startDaemon({"--cache-max-bytes", "512K", "--sync-writes"});
  EXPECT_EQ(d.metric("msld_cache_max_bytes"), double(kCap));
  EXPECT_EQ(d.metric("msld_cache_evictions_total{kind=\"blob\"}"), 0);
  EXPECT_EQ(d.metric("msld_cache_evictions_total{kind=\"action\"}"), 0);

  CompileResponse first;
  ASSERT_TRUE(compile(d, compileRequest(kernelSource(1)), first).ok());
  ASSERT_TRUE(first.success()) << diagnosticsText(first);
  EXPECT_FALSE(first.cache_hit());
  EXPECT_EQ(d.metric("msld_action_cache_entries"), 1);

  // 2 MiB of uploads through a 512 KiB cache.
  msl::client::Client client(d.address());
  std::mt19937 rng(7);
  for (int i = 0; i < 64; ++i) {
    std::string blob = "filler " + std::to_string(i) + ":";
    blob.resize(32 << 10);
    for (size_t j = 10; j < blob.size(); ++j)
      blob[j] = char(rng());
    auto r = client.uploadBlobs({blob});
    ASSERT_TRUE(r.ok()) << r.status().error_message();
    EXPECT_TRUE(waitForMetricAtMost(d, "msld_cache_bytes", double(kCap))) << d.metric("msld_cache_bytes");
  }
  EXPECT_GT(d.metric("msld_cache_evictions_total{kind=\"blob\"}"), 0);
  EXPECT_GE(d.metric("msld_cache_evictions_total{kind=\"action\"}"), 1); // the first compile's result
  EXPECT_GT(d.metric("msld_cache_evicted_bytes_total{kind=\"blob\"}"), double(1 << 20));
  EXPECT_GT(d.metric("msld_cache_bytes"), 0);
  EXPECT_LE(d.metric("msld_cache_bytes"), double(kCap));

  // The first result was evicted: it is compiled again, to the same bytes.
  CompileResponse second;
  ASSERT_TRUE(compile(d, compileRequest(kernelSource(1)), second).ok());
  ASSERT_TRUE(second.success()) << diagnosticsText(second);
  EXPECT_FALSE(second.cache_hit());
  ASSERT_EQ(second.artifacts_size(), first.artifacts_size());
  for (int i = 0; i < first.artifacts_size(); ++i)
    EXPECT_EQ(second.artifacts(i).digest().hash(), first.artifacts(i).digest().hash());

  // Many compiles through the small cache, each repeated: a repeat is
  // either a hit whose artifacts are all readable, or a fresh compile.
  for (int v = 2; v < 14; ++v) {
    CompileResponse a, b;
    ASSERT_TRUE(compile(d, compileRequest(kernelSource(v)), a).ok());
    ASSERT_TRUE(a.success());
    // Push some filler through between the two.
    std::string blob(48 << 10, char('a' + v));
    ASSERT_TRUE(client.uploadBlobs({blob}).ok());
    ASSERT_TRUE(compile(d, compileRequest(kernelSource(v)), b).ok());
    ASSERT_TRUE(b.success());
    std::vector<msl::v1::Digest> artifacts;
    for (const auto &art : b.artifacts())
      artifacts.push_back(art.digest());
    std::vector<std::string> errors;
    auto bytes = readAll(d, artifacts, errors);
    EXPECT_TRUE(errors.empty()) << "variant " << v << (b.cache_hit() ? " (a hit)" : "") << ": "
                                << errors.front();
    for (size_t i = 0; i < bytes.size(); ++i)
      EXPECT_EQ(sha256Hex(bytes[i]), artifacts[i].hash());
    EXPECT_TRUE(waitForMetricAtMost(d, "msld_cache_bytes", double(kCap))) << d.metric("msld_cache_bytes");
  }
  // Compiled (or hit) and then asked again at once: nothing pushed it out.
  CompileResponse third, hit;
  ASSERT_TRUE(compile(d, compileRequest(kernelSource(1)), third).ok());
  ASSERT_TRUE(compile(d, compileRequest(kernelSource(1)), hit).ok());
  EXPECT_TRUE(hit.cache_hit());
  EXPECT_EQ(d.metric("msld_cas_corrupt_blobs_total"), 0);
  EXPECT_EQ(d.metric("msld_action_cache_puts_dropped_total"), 0);

  // The bound and the accounting survive a restart.
  double before = d.metric("msld_cache_bytes");
  Daemon &again = startDaemon({"--cache-max-bytes", "512K"});
  EXPECT_EQ(again.metric("msld_cache_bytes"), before);
  CompileResponse fourth;
  ASSERT_TRUE(compile(again, compileRequest(kernelSource(1)), fourth).ok());
  EXPECT_TRUE(fourth.cache_hit());
}

// Overwrites the value of `key` in the store's `cas` column family with
// garbage, straight through RocksDB, as a disk fault would (msld stopped).
void damageBlob(const std::string &dbPath, const std::string &key) {
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dbPath, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto &n : names)
    cfs.push_back({n, rocksdb::ColumnFamilyOptions()});
  std::vector<rocksdb::ColumnFamilyHandle *> handles;
  rocksdb::DB *db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), dbPath, cfs, &handles, &db).ok());
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == "cas")
      EXPECT_TRUE(db->Put(rocksdb::WriteOptions(), handles[i], key, "not the artifact at all").ok());
  for (auto *h : handles)
    db->DestroyColumnFamilyHandle(h);
  delete db;
}

// msld --scrub, the one-shot mode: re-hashes every blob, drops the one that
// rotted and the cached result referencing it, reports both, and msld then
// compiles that result again (instead of finding its artifact gone).
TEST_F(CacheDurabilityTest, ScrubModeDropsACorruptArtifactAndItsResult) {
  Daemon &d = startDaemon();
  CompileResponse compiled, other;
  ASSERT_TRUE(compile(d, compileRequest(kernelSource(1)), compiled).ok());
  ASSERT_TRUE(compile(d, compileRequest(kernelSource(2)), other).ok());
  ASSERT_TRUE(compiled.success() && other.success());
  ASSERT_GE(compiled.artifacts_size(), 1);
  const msl::v1::Digest victim = compiled.artifacts(0).digest();
  EXPECT_EQ(d.stop(), 0);

  const std::string data = (dir_ / "data").string();
  damageBlob(data, victim.hash() + "/" + std::to_string(victim.size_bytes()));

  std::string report;
  const std::string scrub = "'" + binDir() + "/msld' --scrub --data-dir '" + data + "'";
  EXPECT_EQ(runShell(scrub, report), 0) << report;
  EXPECT_NE(report.find(": repaired "), std::string::npos) << report;
  EXPECT_NE(report.find("corrupt_blobs=1 "), std::string::npos) << report;
  EXPECT_NE(report.find("entries_missing_blobs=1 "), std::string::npos) << report;
  report.clear();
  EXPECT_EQ(runShell(scrub, report), 0) << report; // a second scrub: nothing left to find
  EXPECT_NE(report.find(": clean "), std::string::npos) << report;

  Daemon &again = startDaemon();
  CompileResponse recompiled, kept;
  ASSERT_TRUE(compile(again, compileRequest(kernelSource(1)), recompiled).ok());
  EXPECT_FALSE(recompiled.cache_hit()); // its result was dropped with the artifact
  ASSERT_TRUE(recompiled.success());
  ASSERT_GE(recompiled.artifacts_size(), 1);
  EXPECT_EQ(recompiled.artifacts(0).digest().hash(), victim.hash());
  ASSERT_TRUE(compile(again, compileRequest(kernelSource(2)), kept).ok());
  EXPECT_TRUE(kept.cache_hit()); // the untouched one stayed
  std::vector<std::string> errors;
  auto bytes = readAll(again, {victim}, errors);
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(sha256Hex(bytes[0]), victim.hash());
  EXPECT_EQ(again.metric("msld_cas_corrupt_blobs_total"), 0); // the scrub found it, not a read
}

// Tens of MiB of random blobs (3 MiB each, in blob files), so that a scrub
// takes a while.
void uploadBulk(Daemon &d, int count, unsigned seed) {
  msl::client::Client client(d.address());
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    std::string blob = "big " + std::to_string(seed) + "/" + std::to_string(i) + ":";
    blob.resize(3 << 20);
    for (size_t j = 16; j < blob.size(); ++j)
      blob[j] = char(rng());
    ASSERT_TRUE(client.uploadBlobs({blob}).ok());
  }
}

// Admin.Scrub over gRPC (msld --scrub's checks on the live store): while
// clients upload and compile, and are answered, it drops the artifact that
// rotted on disk and the result referencing it, answers with the counts,
// and loses nothing that was acknowledged meanwhile; msld then compiles
// that result again.
TEST_F(CacheDurabilityTest, OnlineScrubDropsACorruptArtifactWhileServing) {
  Daemon &d = startDaemon();
  CompileResponse compiled, other;
  ASSERT_TRUE(compile(d, compileRequest(kernelSource(1)), compiled).ok());
  ASSERT_TRUE(compile(d, compileRequest(kernelSource(2)), other).ok());
  ASSERT_TRUE(compiled.success() && other.success());
  ASSERT_GE(compiled.artifacts_size(), 1);
  const msl::v1::Digest victim = compiled.artifacts(0).digest();
  uploadBulk(d, 24, 3);
  EXPECT_EQ(d.stop(), 0);
  damageBlob((dir_ / "data").string(), victim.hash() + "/" + std::to_string(victim.size_bytes()));

  Daemon &again = startDaemon();
  ASSERT_TRUE(again.running()) << again.log();
  const std::string address = again.address();
  std::mutex mu;
  std::vector<Acked> blobs;
  std::vector<int> compiledVariants;
  std::atomic<bool> stop{false}, scrubbing{false};
  std::atomic<int> failures{0}, calls{0}, callsDuringScrub{0};
  // A call that began and ended while the scrub ran.
  auto count = [&](bool startedDuring) {
    ++calls;
    if (startedDuring && scrubbing)
      ++callsDuringScrub;
  };
  std::vector<std::thread> clients;
  for (int t = 0; t < 3; ++t)
    clients.emplace_back([&, t] {
      msl::client::ClientOptions o;
      o.address = address;
      o.call_deadline = std::chrono::seconds(60);
      msl::client::Client client(o);
      std::mt19937 rng(500 + t);
      for (int i = 0; !stop; i += 2) {
        std::vector<std::string> batch = {randomBlob(rng, t, i), randomBlob(rng, t, i + 1)};
        bool during = scrubbing;
        auto r = client.uploadBlobs(batch);
        if (!r.ok()) {
          ++failures;
          return;
        }
        count(during);
        std::lock_guard lock(mu);
        for (size_t j = 0; j < batch.size(); ++j)
          blobs.push_back({(*r)[j], std::move(batch[j])});
      }
    });
  clients.emplace_back([&] {
    msl::client::ClientOptions o;
    o.address = address;
    o.call_deadline = std::chrono::seconds(60);
    msl::client::Client client(o);
    for (int v = 100; !stop; ++v) {
      bool during = scrubbing;
      auto c = client.compile(compileRequest(kernelSource(v)));
      if (!c.ok() || !c->success()) {
        ++failures;
        return;
      }
      count(during);
      std::lock_guard lock(mu);
      compiledVariants.push_back(v);
    }
  });
  for (int i = 0; i < 600 && calls < 6; ++i) // the clients are under way
    std::this_thread::sleep_for(std::chrono::milliseconds(10));

  auto admin = msl::v1::Admin::NewStub(again.channel());
  auto scrub = [&](msl::v1::ScrubResponse &response) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
    return admin->Scrub(&ctx, msl::v1::ScrubRequest(), &response);
  };
  msl::v1::ScrubResponse first;
  scrubbing = true;
  grpc::Status status = scrub(first);
  scrubbing = false;
  ASSERT_TRUE(status.ok()) << status.error_code() << ": " << status.error_message();
  EXPECT_FALSE(first.clean());
  EXPECT_TRUE(first.complete()) << first.error();
  EXPECT_EQ(first.corrupt_blobs(), 1u) << first.report();
  EXPECT_EQ(first.entries_missing_blobs(), 1u) << first.report();
  EXPECT_EQ(first.corrupt_entries(), 0u) << first.report();
  EXPECT_GE(first.blobs_checked(), 24u) << first.report();
  EXPECT_GE(first.bytes_checked(), uint64_t(24) * (3 << 20)) << first.report();
  EXPECT_GE(first.entries_checked(), 1u) << first.report();
  EXPECT_NE(first.report().find("corrupt_blobs=1 "), std::string::npos) << first.report();
  // msld kept answering: the scrub holds no lock the serving threads wait on.
  EXPECT_GT(callsDuringScrub, 0) << "no call was answered during a scrub of " << first.duration_seconds() << " s";
  std::cerr << callsDuringScrub << " calls answered during the scrub (" << first.duration_seconds() << " s)\n";

  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stop = true;
  for (auto &c : clients)
    c.join();
  EXPECT_EQ(failures, 0) << again.log();

  // Nothing acknowledged was lost.
  std::vector<msl::v1::Digest> digests;
  for (const auto &b : blobs)
    digests.push_back(b.digest);
  std::vector<std::string> errors;
  auto read = readAll(again, digests, errors);
  EXPECT_TRUE(errors.empty()) << errors.size() << " acknowledged blobs unreadable, e.g. " << errors.front();
  size_t intact = 0;
  for (size_t i = 0; i < read.size(); ++i)
    intact += read[i] == blobs[i].bytes;
  EXPECT_EQ(intact, blobs.size());
  for (int v : compiledVariants) {
    CompileResponse hit;
    ASSERT_TRUE(compile(again, compileRequest(kernelSource(v)), hit).ok());
    EXPECT_TRUE(hit.cache_hit()) << "variant " << v << " was acknowledged but is not cached";
  }

  CompileResponse recompiled, kept;
  ASSERT_TRUE(compile(again, compileRequest(kernelSource(1)), recompiled).ok());
  EXPECT_FALSE(recompiled.cache_hit()); // its result went with the artifact
  ASSERT_TRUE(recompiled.success());
  EXPECT_EQ(recompiled.artifacts(0).digest().hash(), victim.hash());
  ASSERT_TRUE(compile(again, compileRequest(kernelSource(2)), kept).ok());
  EXPECT_TRUE(kept.cache_hit());

  msl::v1::ScrubResponse second;
  status = scrub(second);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(second.clean()) << second.report();
  EXPECT_EQ(second.blobs(), second.blobs_checked());

  EXPECT_EQ(again.metric("msld_cache_scrubs_total{result=\"corrupt\"}"), 1);
  EXPECT_EQ(again.metric("msld_cache_scrubs_total{result=\"clean\"}"), 1);
  EXPECT_EQ(again.metric("msld_cache_scrub_dropped_total{kind=\"blob\"}"), 1);
  EXPECT_EQ(again.metric("msld_cache_scrub_dropped_total{kind=\"action\"}"), 1);
  EXPECT_EQ(again.metric("msld_cache_scrub_blobs_checked_total"),
            double(first.blobs_checked() + second.blobs_checked()));
  EXPECT_EQ(again.metric("msld_cache_scrub_running"), 0);
  EXPECT_EQ(again.metric("msld_cas_corrupt_blobs_total"), 1); // what the scrub found
  EXPECT_EQ(again.metric("msld_requests_total{code=\"OK\",method=\"Scrub\"}"), 2);
}

// One scrub at a time: Scrub calls made together over a store of tens of
// MiB (each scrub reads it all) find one running, FAILED_PRECONDITION.
TEST_F(CacheDurabilityTest, ConcurrentScrubsAreRefusedWhileOneRuns) {
  Daemon &d = startDaemon();
  uploadBulk(d, 24, 11);
  auto admin = msl::v1::Admin::NewStub(d.channel());
  int refused = 0, ok = 0;
  for (int round = 0; round < 5 && refused == 0; ++round) {
    std::vector<std::future<grpc::Status>> calls;
    for (int i = 0; i < 3; ++i)
      calls.push_back(std::async(std::launch::async, [&] {
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
        msl::v1::ScrubResponse response;
        grpc::Status s = admin->Scrub(&ctx, msl::v1::ScrubRequest(), &response);
        if (s.ok())
          EXPECT_TRUE(response.clean()) << response.report();
        return s;
      }));
    for (auto &c : calls) {
      grpc::Status s = c.get();
      if (s.ok()) {
        ++ok;
      } else {
        EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
        EXPECT_NE(s.error_message().find("a scrub is already running"), std::string::npos) << s.error_message();
        ++refused;
      }
    }
  }
  EXPECT_GT(refused, 0) << "three Scrub calls at once never overlapped";
  EXPECT_GT(ok, 0);
  EXPECT_EQ(d.metric("msld_requests_total{code=\"FAILED_PRECONDITION\",method=\"Scrub\"}"), double(refused));
}

} // namespace
} // namespace msl::test
