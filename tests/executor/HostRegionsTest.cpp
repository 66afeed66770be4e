// Clients' shared regions as an execution worker maps them
// (executor/HostRegions.h), with the descriptors passed as msld passes them
// (service/WorkerProtocol.h sendDescriptors) over a real socketpair.
#include "HostRegions.h"
#include "WorkerProtocol.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

namespace msl::executor {
namespace {

using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;

struct Region {
  int fd = -1;
  char *base = nullptr;
  size_t size = 0;
  explicit Region(size_t bytes) : size(bytes) {
    fd = ::memfd_create("test-region", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, off_t(bytes)), 0);
    base = static_cast<char *>(::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    EXPECT_NE(base, MAP_FAILED);
  }
  ~Region() {
    ::munmap(base, size);
    ::close(fd);
  }
};

class HostRegionsTest : public ::testing::Test {
protected:
  void SetUp() override { ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets_), 0); }
  void TearDown() override {
    for (int fd : sockets_)
      ::close(fd);
  }
  // A request reading `length` bytes at `offset` of each region in turn
  // (serials 1, 2, ...), its descriptors sent as msld sends them.
  ExecWorkerRequest requestFor(const std::vector<const Region *> &regions, uint64_t offset, uint64_t length,
                               std::vector<uint64_t> serials = {}, bool send = true) {
    ExecWorkerRequest r;
    std::vector<int> fds;
    for (size_t i = 0; i < regions.size(); ++i) {
      auto *named = r.add_host_regions();
      named->set_serial(serials.empty() ? i + 1 : serials[i]);
      named->set_size(regions[i]->size);
      r.add_live_host_regions(named->serial());
      auto *b = r.add_buffers();
      b->set_length(length);
      b->mutable_host()->set_region(uint32_t(i));
      b->mutable_host()->set_offset(offset);
      b->mutable_host()->set_length(length);
      fds.push_back(regions[i]->fd);
    }
    r.add_buffers()->set_data("inline"); // one in the request, beside them
    if (send && !fds.empty())
      EXPECT_TRUE(msl::service::sendDescriptors(sockets_[0], fds));
    return r;
  }
  int sockets_[2] = {-1, -1};
};

TEST_F(HostRegionsTest, BuffersAreTheRegionsOwnPagesAndSeeTheClientsLaterWrites) {
  Region a(1 << 16), b(1 << 16);
  HostRegions regions(sockets_[1]);
  HostBuffers buffers;
  std::string error;
  std::memcpy(a.base + 4096, "first", 5);
  ASSERT_EQ(regions.prepare(requestFor({&a, &b}, 4096, 8), buffers, error), HostRegions::Result::Ok) << error;
  ASSERT_EQ(buffers.size(), 3u);
  EXPECT_EQ(buffers[0].size(), 8u);
  EXPECT_EQ(std::string(buffers[0].data(), 5), "first");
  EXPECT_TRUE(buffers[2].empty()); // the inline one
  std::memcpy(buffers[1].data(), "back", 4); // a worker's write-back reaches the client
  EXPECT_EQ(std::string(b.base + 4096, 4), "back");
  // Held by serial: the next request maps nothing new, and sees what the
  // client wrote meanwhile.
  std::memcpy(a.base + 4096, "again", 5);
  ASSERT_EQ(regions.prepare(requestFor({&a, &b}, 4096, 8), buffers, error), HostRegions::Result::Ok) << error;
  EXPECT_EQ(std::string(buffers[0].data(), 5), "again");
  EXPECT_EQ(regions.held(), 2u);
}

TEST_F(HostRegionsTest, ARangeOutsideItsRegionIsRefusedAndTheSocketStaysInStep) {
  Region a(1 << 16);
  HostRegions regions(sockets_[1]);
  HostBuffers buffers;
  std::string error;
  EXPECT_EQ(regions.prepare(requestFor({&a}, (1 << 16) - 4, 8), buffers, error), HostRegions::Result::BadRequest);
  EXPECT_NE(error.find("buffer 0"), std::string::npos) << error;
  auto huge = requestFor({&a}, 0, 8);
  huge.mutable_buffers(0)->mutable_host()->set_offset(~0ull);
  EXPECT_EQ(regions.prepare(huge, buffers, error), HostRegions::Result::BadRequest);
  auto lengths = requestFor({&a}, 0, 8);
  lengths.mutable_buffers(0)->set_length(16); // not the range's
  EXPECT_EQ(regions.prepare(lengths, buffers, error), HostRegions::Result::BadRequest);
  // Each took its own descriptors: the next request is fine.
  EXPECT_EQ(regions.prepare(requestFor({&a}, 0, 8), buffers, error), HostRegions::Result::Ok) << error;
  // A region that claims more than the memfd has is refused.
  auto bigger = requestFor({&a}, 0, 8, {7});
  bigger.mutable_host_regions(0)->set_size(1 << 20);
  EXPECT_EQ(regions.prepare(bigger, buffers, error), HostRegions::Result::BadRequest);
  EXPECT_NE(error.find("cannot map"), std::string::npos) << error;
}

TEST_F(HostRegionsTest, MissingDescriptorsAreOutOfStep) {
  Region a(4096);
  HostRegions regions(sockets_[1]);
  HostBuffers buffers;
  std::string error;
  ::shutdown(sockets_[0], SHUT_WR); // none will come
  EXPECT_EQ(regions.prepare(requestFor({&a}, 0, 8, {}, false), buffers, error), HostRegions::Result::OutOfStep);
  HostRegions without(-1);
  EXPECT_EQ(without.prepare(requestFor({&a}, 0, 8, {}, false), buffers, error), HostRegions::Result::BadRequest);
}

TEST_F(HostRegionsTest, RegionsMsldLetGoOfAndTheLeastRecentlyUsedAreUnmapped) {
  std::vector<std::pair<char *, size_t>> mapped, unmapped;
  HostRegions regions(sockets_[1],
                      {[&](char *p, size_t n) { mapped.push_back({p, n}); },
                       [&](char *p, size_t n) { unmapped.push_back({p, n}); }},
                      2);
  Region a(4096), b(4096), c(4096);
  HostBuffers buffers;
  std::string error;
  ASSERT_EQ(regions.prepare(requestFor({&a}, 0, 8, {1}), buffers, error), HostRegions::Result::Ok);
  ASSERT_EQ(regions.prepare(requestFor({&b}, 0, 8, {2}), buffers, error), HostRegions::Result::Ok);
  // 1 is no longer live (its request lists only 2 and 3): dropped.
  auto third = requestFor({&c}, 0, 8, {3});
  third.add_live_host_regions(2);
  ASSERT_EQ(regions.prepare(third, buffers, error), HostRegions::Result::Ok);
  EXPECT_EQ(regions.held(), 2u);
  ASSERT_EQ(unmapped.size(), 1u);
  EXPECT_EQ(unmapped[0], mapped[0]);
  // All live, but at most 2 kept: the least recently used (2) goes.
  auto again = requestFor({&a}, 0, 8, {4});
  again.add_live_host_regions(2);
  again.add_live_host_regions(3);
  ASSERT_EQ(regions.prepare(again, buffers, error), HostRegions::Result::Ok);
  EXPECT_EQ(regions.held(), 2u);
  ASSERT_EQ(unmapped.size(), 2u);
  EXPECT_EQ(unmapped[1], mapped[1]);
  EXPECT_EQ(mapped.size(), 4u);
}

TEST(WorkerDescriptorsTest, AMessageCarriesExactlyTheDescriptorsItWasSentWith) {
  int s[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s), 0);
  Region a(4096), b(4096);
  ASSERT_TRUE(msl::service::sendDescriptors(s[0], {a.fd, b.fd}));
  std::vector<int> got;
  EXPECT_FALSE(msl::service::receiveDescriptors(s[1], 1, got)); // two came: refused, closed
  EXPECT_TRUE(got.empty());
  ASSERT_TRUE(msl::service::sendDescriptors(s[0], {a.fd}));
  ASSERT_TRUE(msl::service::receiveDescriptors(s[1], 1, got));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(::lseek(got[0], 0, SEEK_END), 4096); // the same memfd
  ::close(got[0]);
  EXPECT_FALSE(msl::service::sendDescriptors(s[0], {}));
  EXPECT_FALSE(msl::service::sendDescriptors(s[0], std::vector<int>(msl::service::kMaxDescriptorsPerMessage + 1, a.fd)));
  ::close(s[0]);
  ::close(s[1]);
}

TEST(WorkerDescriptorsTest, TheWorkersChannelFlagsParse) {
  const char *argv[] = {"w", "--device", "0", "--payload-fd", "3", "--descriptor-fd", "4"};
  msl::service::WorkerChannels c;
  ASSERT_TRUE(msl::service::parseWorkerChannels(7, const_cast<char **>(argv), 3, c));
  EXPECT_EQ(c.payloadFd, 3);
  EXPECT_EQ(c.descriptorFd, 4);
  const char *bad[] = {"w", "--descriptor-fd", "x4"};
  EXPECT_FALSE(msl::service::parseWorkerChannels(3, const_cast<char **>(bad), 1, c));
  const char *odd[] = {"w", "--descriptor-fd"};
  EXPECT_FALSE(msl::service::parseWorkerChannels(2, const_cast<char **>(odd), 1, c));
  const char *other[] = {"w", "--other", "1"};
  EXPECT_FALSE(msl::service::parseWorkerChannels(3, const_cast<char **>(other), 1, c));
}

} // namespace
} // namespace msl::executor
