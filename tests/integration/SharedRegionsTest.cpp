// Shared regions (service/SharedRegions.h) through the real msld: a client
// asks for one on --shared-regions-socket, binds ranges of it as buffers,
// and the kernel's writes land in it in place; bad ranges, tokens and asks
// are refused, naming the problem; a region goes with its connection.
// Kernels run on $MSLD_TEST_DEVICE (the cpu unless set).
#include "DaemonFixture.h"
#include "DeviceRunner.h"
#include "KernelRequest.h"
#include "msl/client/Client.h"
#include "msl/client/SharedRegion.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

namespace msl::test {
namespace {

using grpc::StatusCode;
using msl::client::SharedRegion;
using msl::v1::ExecuteResponse;

const char *kAxpy = R"(#include <metal_stdlib>
using namespace metal;
kernel void axpy(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                 constant float &a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  y[i] = a * x[i] + y[i];
}
)";

class SharedRegionsTest : public DeviceTest {
protected:
  void SetUp() override {
    DeviceTest::SetUp();
    socket_ = (dir_ / "regions.sock").string();
    connect({"--shared-regions-socket", socket_, "--shared-region-max-mb", "4"});
  }

  std::unique_ptr<SharedRegion> open(uint64_t size) {
    auto region = SharedRegion::open(socket_, size);
    EXPECT_TRUE(region.ok()) << msl::client::describeStatus(region.status());
    return region.ok() ? std::move(region).value() : nullptr;
  }

  /// axpy of n floats with x and y in `region` at these offsets.
  KernelRequest axpy(const SharedRegion &region, uint32_t n, uint64_t xAt, uint64_t yAt, float a) {
    KernelRequest k(kAxpy, "axpy");
    *k.req.add_buffers()->mutable_shared() = region.range(xAt, n * 4);
    *k.req.add_buffers()->mutable_shared() = region.range(yAt, n * 4);
    k.bind(0, 0);
    k.bind(1, 1);
    k.bytes(2, a);
    k.threads(n);
    k.perThreadgroup(64);
    return k;
  }

  std::string socket_;
};

TEST_F(SharedRegionsTest, ABufferInASharedRegionIsReadAndWrittenBackInPlace) {
  const uint32_t n = 1000;
  auto region = open(1 << 16);
  ASSERT_TRUE(region);
  ASSERT_EQ(region->token().size(), 32u);
  // x at 0, y at 8192; every other byte a sentinel the kernel must not touch.
  std::memset(region->data(), 0x5a, region->size());
  std::mt19937 rng(4242);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> x(n), y(n);
  for (uint32_t i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  std::memcpy(region->data(), x.data(), n * 4);
  std::memcpy(region->data() + 8192, y.data(), n * 4);
  for (float a : {1.5f, -0.25f}) {
    SCOPED_TRACE(a);
    auto r = runner_->execute(axpy(*region, n, 0, 8192, a).req);
    ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status()) << "\nmsld's log:\n" << daemon_->log();
    ASSERT_EQ(r->buffers_size(), 1) << "only y may be written";
    EXPECT_EQ(r->buffers(0).buffer(), 1u);
    EXPECT_TRUE(r->buffers(0).in_shared_region());
    EXPECT_TRUE(r->buffers(0).inline_data().empty());
    EXPECT_FALSE(r->buffers(0).has_digest());
    const float *got = reinterpret_cast<const float *>(region->data() + 8192);
    for (uint32_t i = 0; i < n; ++i) {
      // Fused or not, as the device's compiler chooses under fast math.
      const float fused = std::fma(a, x[i], y[i]), product = a * x[i];
      ASSERT_TRUE(got[i] == fused || got[i] == product + y[i]) << i << ": " << got[i] << " for " << fused;
      y[i] = got[i];
    }
    for (size_t b = n * 4; b < region->size(); ++b)
      if (b < 8192 || b >= 8192 + n * 4)
        ASSERT_EQ(uint8_t(region->data()[b]), 0x5a) << "byte " << b << " outside both ranges was written";
  }
}

TEST_F(SharedRegionsTest, BadRangesAndTokensAreRefusedNamingTheProblem) {
  auto region = open(4096);
  ASSERT_TRUE(region);
  {
    KernelRequest k = axpy(*region, 512, 0, 2048, 1); // y ends exactly at the end: fine
    auto r = runner_->execute(k.req);
    EXPECT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
  }
  expectStatus(axpy(*region, 513, 0, 2048, 1), StatusCode::INVALID_ARGUMENT,
               "buffer 1: 2052 bytes from offset 2048 are past the end of its shared region (4096 bytes)");
  expectStatus(axpy(*region, 4, 0, ~0ull - 3, 1), StatusCode::INVALID_ARGUMENT, "past the end of its shared region");
  {
    KernelRequest k = axpy(*region, 4, 0, 64, 1);
    k.req.mutable_buffers(0)->mutable_shared()->set_region(std::string(32, '0'));
    expectStatus(k, StatusCode::INVALID_ARGUMENT, "buffer 0 names shared region '" + std::string(32, '0') +
                                                      "', which msld does not have");
  }
  {
    KernelRequest k = axpy(*region, 4, 0, 64, 1);
    k.req.mutable_buffers(0)->mutable_shared()->set_region(std::string(100000, 'x'));
    expectStatus(k, StatusCode::INVALID_ARGUMENT, "names shared region 'xxxx");
  }
  // The region still works after all that.
  auto r = runner_->execute(axpy(*region, 16, 0, 64, 2).req);
  EXPECT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
}

TEST_F(SharedRegionsTest, TheSocketRefusesBadAsksAndARegionGoesWithItsConnection) {
  for (uint64_t size : {uint64_t(0), uint64_t(4 << 20) + 1}) {
    auto r = SharedRegion::open(socket_, size);
    ASSERT_FALSE(r.ok()) << size;
    EXPECT_EQ(r.status().error_code(), StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(r.status().error_message().find("a shared region is 1 to 4194304 bytes"), std::string::npos)
        << r.status().error_message();
  }
  // Not the protocol: refused in words. A silent connection does not hold
  // up others.
  auto raw = [&] {
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr), 0);
    return fd;
  };
  int silent = raw();
  int junk = raw();
  ASSERT_EQ(::send(junk, "GET / HTTP/1.1\r\n", 16, 0), 16);
  char answer[256] = {};
  ssize_t got = ::recv(junk, answer, sizeof answer - 1, 0);
  ASSERT_GT(got, 0);
  EXPECT_EQ(std::string(answer, size_t(got)), "ERR not a shared region request (it starts with \"MSLDSHM1\")\n");
  ::close(junk);
  auto region = open(4096);
  ASSERT_TRUE(region) << "asked while another connection says nothing";
  ::close(silent);

  EXPECT_EQ(daemon_->metric("msld_shared_regions"), 1);
  EXPECT_EQ(daemon_->metric("msld_shared_region_bytes"), 4096);

  // Served while open; once its client lets go, its token names nothing.
  std::memset(region->data(), 0, 4096);
  KernelRequest k = axpy(*region, 16, 0, 64, 2);
  ASSERT_TRUE(runner_->execute(k.req).ok());
  region.reset();
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    auto r = runner_->execute(k.req);
    gone = !r.ok() && r.status().error_message().find("which msld does not have") != std::string::npos;
    if (!gone)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(gone) << "the region outlived its connection";
  EXPECT_EQ(daemon_->metric("msld_shared_regions"), 0);
}

// The worker maps a region once and keeps it (HostRegions.h): what a
// client writes between requests must still be what the next one reads,
// regions of two clients must stay apart (also in one request), and a
// region opened after another closed is a region of its own.
TEST_F(SharedRegionsTest, RegionsOfTwoClientsStayApartAndEachRequestReadsTheirLatestBytes) {
  const uint32_t n = 256;
  auto a = open(1 << 14), b = open(1 << 14);
  ASSERT_TRUE(a && b);
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> small(-50, 50); // exact in float
  auto fill = [&](SharedRegion &r, uint64_t at) {
    std::vector<float> v(n);
    for (float &f : v)
      f = float(small(rng));
    std::memcpy(r.data() + at, v.data(), n * 4);
    return v;
  };
  auto check = [&](SharedRegion &r, uint64_t at, const std::vector<float> &want, const char *what) {
    ASSERT_EQ(std::memcmp(r.data() + at, want.data(), n * 4), 0) << what;
  };
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    auto xa = fill(*a, 0), ya = fill(*a, 4096), xb = fill(*b, 0), yb = fill(*b, 4096);
    ASSERT_TRUE(runner_->execute(axpy(*a, n, 0, 4096, 2).req).ok());
    ASSERT_TRUE(runner_->execute(axpy(*b, n, 0, 4096, 3).req).ok());
    for (uint32_t i = 0; i < n; ++i) {
      ya[i] += 2 * xa[i];
      yb[i] += 3 * xb[i];
    }
    check(*a, 4096, ya, "a's y");
    check(*b, 4096, yb, "b's y");
    // x from a's region, y in b's: one request, two regions.
    KernelRequest both(kAxpy, "axpy");
    *both.req.add_buffers()->mutable_shared() = a->range(0, n * 4);
    *both.req.add_buffers()->mutable_shared() = b->range(8192, n * 4);
    both.bind(0, 0);
    both.bind(1, 1);
    both.bytes(2, -1.0f);
    both.threads(n);
    both.perThreadgroup(64);
    auto y = fill(*b, 8192);
    auto r = runner_->execute(both.req);
    ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
    for (uint32_t i = 0; i < n; ++i)
      y[i] -= xa[i];
    check(*b, 8192, y, "y in b from x in a");
    check(*a, 4096, ya, "a's y, untouched");
  }
  a.reset(); // closed: a new region is not the old one
  auto c = open(1 << 14);
  ASSERT_TRUE(c);
  auto x = fill(*c, 0), y = fill(*c, 4096);
  ASSERT_TRUE(runner_->execute(axpy(*c, n, 0, 4096, 1).req).ok());
  for (uint32_t i = 0; i < n; ++i)
    y[i] += x[i];
  check(*c, 4096, y, "c's y");
}

// A call whose worker writes into its region is answered once that worker
// is stopped (ExecuteService::cancel): here the client's own deadline ends
// a runaway kernel's call; msld stops it and serves on, and the range the
// kernel wrote into stays as it was (nothing of a stopped kernel returns).
TEST_F(SharedRegionsTest, ARunawayKernelsCallEndsAtItsDeadlineAndItsRegionStaysAsItWas) {
  auto region = open(4096);
  ASSERT_TRUE(region);
  std::memset(region->data(), 0x11, 4096);
  KernelRequest spin(kSpinForeverSource, "spin");
  *spin.req.add_buffers()->mutable_shared() = region->range(0, 64);
  spin.bind(0, 0);
  spin.threads(16);
  spin.perThreadgroup(16);
  spin.req.set_timeout_ms(60000);
  // Compiled and JIT-compiled first (a short deadline should end the
  // kernel, not its compile).
  {
    KernelRequest warm = spin;
    warm.req.set_timeout_ms(300);
    auto r = runner_->execute(warm.req);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().error_code(), StatusCode::DEADLINE_EXCEEDED) << msl::client::describeStatus(r.status());
  }
  for (size_t i = 0; i < 4096; ++i)
    ASSERT_EQ(uint8_t(region->data()[i]), 0x11) << "byte " << i << " after msld's own time limit";
  auto stub = msl::v1::Executor::NewStub(client_->channel());
  spin.req.set_device(runner_->recording() ? "cpu" : runner_->device()); // as runner_->execute would
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(500));
  msl::v1::ExecuteResponse resp;
  grpc::Status s = stub->Execute(&ctx, spin.req, &resp);
  EXPECT_EQ(s.error_code(), StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  // msld stops the worker within moments and serves on.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (size_t i = 0; i < 4096; ++i)
    ASSERT_EQ(uint8_t(region->data()[i]), 0x11) << "byte " << i << " after the client's deadline";
  auto r = runner_->execute(axpy(*region, 16, 128, 1024, 2).req);
  EXPECT_TRUE(r.ok()) << msl::client::describeStatus(r.status()) << "\nmsld's log:\n" << daemon_->log();
}

TEST_F(SharedRegionsTest, WithoutTheSocketASharedRangeIsRefusedSayingSo) {
  auto region = open(4096);
  ASSERT_TRUE(region);
  KernelRequest k = axpy(*region, 16, 0, 64, 2);
  connect({}); // another msld, without --shared-regions-socket
  expectStatus(k, StatusCode::INVALID_ARGUMENT, "(it serves none: --shared-regions-socket)");
}

} // namespace
} // namespace msl::test
