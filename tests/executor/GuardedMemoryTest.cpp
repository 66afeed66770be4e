// GuardedRegion (executor/GuardedMemory.h): where its bytes lie, that its
// guards fault on both sides, and that large regions ask for huge pages.
#include "GuardedMemory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

using msl::executor::GuardedRegion;
using msl::executor::kHugePageBytes;

namespace {

// The VmFlags line of the mapping in /proc/self/smaps that holds `p`.
std::string vmFlagsOf(const void *p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(smaps, line)) {
    uintptr_t lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line); // a mapping's first line: "lo-hi perms ..."
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= a && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

bool advisedHuge(const void *p) {
  const std::string flags = vmFlagsOf(p) + " ";
  return flags.find(" hg ") != std::string::npos;
}

GuardedRegion allocated(size_t length) {
  GuardedRegion r;
  std::string error;
  EXPECT_TRUE(r.allocate(length, error)) << error;
  return r;
}

} // namespace

TEST(GuardedRegion, LargeRegionsStartOnAHugePageAndAskForHugePages) {
  GuardedRegion r = allocated(64 << 20);
  ASSERT_NE(r.data(), nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(r.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(r.mappedBytes(), size_t(64) << 20);
  ASSERT_FALSE(vmFlagsOf(r.data()).empty()) << "no mapping in /proc/self/smaps holds the region";
  EXPECT_TRUE(advisedHuge(r.data())) << vmFlagsOf(r.data());
}

TEST(GuardedRegion, SmallRegionsStayOnSmallPages) {
  GuardedRegion r = allocated(64 << 10);
  ASSERT_FALSE(vmFlagsOf(r.data()).empty());
  EXPECT_FALSE(advisedHuge(r.data())) << vmFlagsOf(r.data());
}

TEST(GuardedRegion, BytesEndAtAPageBoundaryWhateverTheLength) {
  for (size_t length : {size_t(1), size_t(4096), size_t(5000), kHugePageBytes, kHugePageBytes + 64, size_t(3) << 20}) {
    GuardedRegion r = allocated(length);
    EXPECT_EQ(r.length(), length);
    const uintptr_t end = reinterpret_cast<uintptr_t>(r.data()) + (length + 63) / 64 * 64;
    EXPECT_EQ(end % 4096, 0u) << length;
    EXPECT_GE(r.mappedBytes(), length);
  }
}

TEST(GuardedRegionDeathTest, HugeRegionsFaultOnBothSides) {
  GuardedRegion r = allocated(kHugePageBytes + 4096);
  r.data()[0] = 1;
  r.data()[r.length() - 1] = 1;
  EXPECT_DEATH(static_cast<volatile char *>(r.data())[r.length()] = 1, "");
  EXPECT_DEATH(static_cast<volatile char *>(r.data())[-1] = 1, "");
  EXPECT_DEATH(static_cast<volatile char *>(r.data())[-(ptrdiff_t(1) << 31)] = 1, "");
  EXPECT_DEATH(static_cast<volatile char *>(r.data())[ptrdiff_t(0xFFFFFFFFu) * 16] = 1, "");
}

TEST(GuardedRegion, ReuseKeepsThePagesAndClearsThem) {
  GuardedRegion r = allocated(kHugePageBytes * 2);
  char *before = r.data();
  r.data()[123] = 7;
  ASSERT_TRUE(r.reuseFor(kHugePageBytes * 2 - 100));
  EXPECT_EQ(r.length(), kHugePageBytes * 2 - 100);
  EXPECT_EQ(before[123], 0);
  for (size_t i = 0; i < r.length(); i += 4093)
    ASSERT_EQ(r.data()[i], 0) << i;
  EXPECT_TRUE(advisedHuge(r.data()));
  EXPECT_FALSE(r.reuseFor(kHugePageBytes)); // other pages: a new allocation
}
