// Unit tests of service/AdminService.h on a real store, without gRPC: a
// scrub runs on a thread of its own, one at a time (a second is refused at
// once), and stops when its caller goes away or msld shuts down. The scrub
// is held where it finds a blob that rotted on disk: the store's warning
// handler, which the scrub calls on its thread, waits for the test.
#include "AdminService.h"
#include "Metrics.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>

namespace msl::service {
namespace {

using namespace std::chrono_literals;

// A gate the scrub's thread waits at (from the warning handler) until the
// test opens it.
class Gate {
public:
  void arriveAndWait() {
    std::unique_lock lock(mu_);
    arrived_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
  }
  bool waitForArrival() {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, 30s, [&] { return arrived_; });
  }
  void open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }

private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool arrived_ = false, open_ = false;
};

class AdminServiceTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "msld-admin-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    // 20 good blobs and one that rots, written with the store closed.
    {
      auto store = cache::ContentStore::open(options());
      ASSERT_TRUE(store) << store.status().toString();
      for (int i = 0; i < 20; ++i)
        ASSERT_TRUE((*store)->putBytes("good blob " + std::to_string(i)));
      auto rotten = (*store)->putBytes("rotten blob");
      ASSERT_TRUE(rotten);
      rotten_ = *rotten;
    }
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto &n : names)
      cfs.push_back({n, rocksdb::ColumnFamilyOptions()});
    std::vector<rocksdb::ColumnFamilyHandle *> handles;
    rocksdb::DB *db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), path(), cfs, &handles, &db).ok());
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == "cas")
        EXPECT_TRUE(db->Put(rocksdb::WriteOptions(), handles[i], rotten_.toString(), "rotten bloB").ok());
    for (auto *h : handles)
      db->DestroyColumnFamilyHandle(h);
    delete db;

    cache::StoreOptions o = options();
    o.warning_handler = [this](std::string_view message) {
      if (message.rfind("scrub: corrupt blob", 0) == 0)
        gate_.arriveAndWait();
    };
    auto store = cache::ContentStore::open(o);
    ASSERT_TRUE(store) << store.status().toString();
    store_ = store.take();
  }
  void TearDown() override {
    gate_.open();
    admin_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string path() const { return (std::filesystem::path(dir_) / "db").string(); }
  cache::StoreOptions options() const {
    cache::StoreOptions o;
    o.path = path();
    o.warning_handler = [](std::string_view) {};
    return o;
  }
  AdminService &admin() {
    if (!admin_)
      admin_ = std::make_unique<AdminService>(*store_, &metrics_, [this] { ++scrubbed_; });
    return *admin_;
  }
  // Starts a scrub; its reply arrives in the returned future.
  std::future<ScrubReply> startScrub(std::shared_ptr<std::atomic<bool>> cancel = nullptr) {
    if (!cancel)
      cancel = std::make_shared<std::atomic<bool>>(false);
    auto promise = std::make_shared<std::promise<ScrubReply>>();
    auto future = promise->get_future();
    admin().scrub(msl::v1::ScrubRequest(), cancel, [promise](ScrubReply r) { promise->set_value(std::move(r)); });
    return future;
  }
  static ScrubReply get(std::future<ScrubReply> &f) {
    EXPECT_EQ(f.wait_for(60s), std::future_status::ready) << "the scrub did not answer";
    return f.get();
  }

  std::string dir_;
  cache::Digest rotten_;
  Gate gate_;
  std::unique_ptr<cache::ContentStore> store_;
  prometheus::Registry registry_;
  ServiceMetrics metrics_{registry_};
  std::atomic<int> scrubbed_{0};
  std::unique_ptr<AdminService> admin_;
};

TEST_F(AdminServiceTest, OneScrubAtATimeAndTheSecondIsRefusedAtOnce) {
  auto first = startScrub();
  ASSERT_TRUE(gate_.waitForArrival()) << "the scrub did not reach the rotten blob";
  EXPECT_TRUE(admin().scrubRunning());
  EXPECT_EQ(metrics_.scrubRunning.Value(), 1);

  // Refused on this thread, before it returns: no second full read starts.
  auto second = startScrub();
  ASSERT_EQ(second.wait_for(0s), std::future_status::ready);
  ScrubReply refused = second.get();
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.status.error_message().find("a scrub is already running"), std::string::npos)
      << refused.status.error_message();

  gate_.open();
  ScrubReply done = get(first);
  ASSERT_TRUE(done.status.ok()) << done.status.error_message();
  EXPECT_FALSE(done.response.clean());
  EXPECT_TRUE(done.response.complete());
  EXPECT_EQ(done.response.corrupt_blobs(), 1u);
  EXPECT_EQ(done.response.blobs_checked(), 21u);
  EXPECT_EQ(done.response.blobs(), 20u); // the rotten one is gone
  EXPECT_NE(done.response.report().find("corrupt_blobs=1"), std::string::npos) << done.response.report();
  EXPECT_FALSE(store_->contains(rotten_));
  EXPECT_FALSE(admin().scrubRunning());
  EXPECT_EQ(scrubbed_, 1);

  // The answer came after the scrub let go: the next one starts at once.
  auto third = startScrub();
  ScrubReply clean = get(third);
  ASSERT_TRUE(clean.status.ok()) << clean.status.error_message();
  EXPECT_TRUE(clean.response.clean());
  EXPECT_EQ(clean.response.blobs_checked(), 20u);

  EXPECT_EQ(metrics_.scrubsCorrupt.Value(), 1);
  EXPECT_EQ(metrics_.scrubsClean.Value(), 1);
  EXPECT_EQ(metrics_.scrubsIncomplete.Value(), 0);
  EXPECT_EQ(metrics_.scrubDroppedBlobs.Value(), 1);
  EXPECT_EQ(metrics_.scrubBlobsChecked.Value(), 41);
  EXPECT_EQ(metrics_.scrubRunning.Value(), 0);
}

TEST_F(AdminServiceTest, ACallerThatGoesAwayStopsItsScrub) {
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  auto first = startScrub(cancel);
  ASSERT_TRUE(gate_.waitForArrival());
  *cancel = true; // what ScrubReactor::OnCancel does
  gate_.open();
  ScrubReply done = get(first);
  EXPECT_EQ(done.status.error_code(), grpc::StatusCode::CANCELLED);
  EXPECT_NE(done.status.error_message().find("stopped after"), std::string::npos) << done.status.error_message();
  EXPECT_EQ(metrics_.scrubsIncomplete.Value(), 1);
  EXPECT_FALSE(store_->contains(rotten_)); // what it had found is dropped
  auto again = startScrub();
  EXPECT_TRUE(get(again).status.ok());
}

TEST_F(AdminServiceTest, ShutdownStopsARunningScrubAndRefusesNewOnes) {
  auto cancel = std::make_shared<std::atomic<bool>>(false);
  auto first = startScrub(cancel);
  ASSERT_TRUE(gate_.waitForArrival());
  std::thread stopper([&] { admin().shutdown(); }); // waits for the scrub's thread
  // shutdown() cancels the scrub (through the caller's flag), then joins.
  for (int i = 0; i < 3000 && !*cancel; ++i)
    std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(*cancel) << "shutdown() did not cancel the running scrub";
  gate_.open();
  ScrubReply done = get(first);
  stopper.join();
  EXPECT_EQ(done.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(done.status.error_message().find("shutting down"), std::string::npos) << done.status.error_message();
  auto later = startScrub();
  ScrubReply refused = get(later);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

} // namespace
} // namespace msl::service
