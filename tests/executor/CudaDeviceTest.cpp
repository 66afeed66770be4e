// The CUDA device (executor/CudaDevice.h) without msld. Where no driver
// exists (CI) the "no CUDA device" path is tested and the GPU tests skip,
// saying so; on a GPU a hand-written PTX kernel (the compiler's entry
// convention: the launch block last) runs through CudaDevice directly, and
// the module load times of the JIT and of the cubin it returned are printed.
#include "CudaDevice.h"
#include "CudaDriver.h"
#include "Textures.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iostream>

namespace msl::executor {
namespace {

using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;

TEST(CudaLaunchPlanTest, DispatchThreadgroupsIsOneLaunch) {
  const uint32_t groups[3] = {3, 5, 1}, tpg[3] = {16, 8, 1};
  auto plan = planCudaLaunches(groups, tpg, nullptr);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].groups[0], 3u);
  EXPECT_EQ(plan[0].groups[1], 5u);
  EXPECT_EQ(plan[0].block[0], 16u);
  EXPECT_EQ(plan[0].origin[0], 0u);
}

TEST(CudaLaunchPlanTest, PartialEdgesLaunchApartWithTheirOwnSize) {
  // 50 x 37 threads in 16 x 8: 3 whole + 1 of 2 in x, 4 whole + 1 of 5 in y.
  const uint32_t groups[3] = {4, 5, 1}, tpg[3] = {16, 8, 1}, grid[3] = {50, 37, 1};
  auto plan = planCudaLaunches(groups, tpg, grid);
  ASSERT_EQ(plan.size(), 4u);
  uint64_t threads = 0;
  for (const auto &l : plan) {
    threads += uint64_t(l.groups[0]) * l.block[0] * l.groups[1] * l.block[1] * l.groups[2] * l.block[2];
    for (int c = 0; c < 2; ++c) {
      const bool edge = l.origin[c] != 0;
      EXPECT_EQ(l.block[c], edge ? (c == 0 ? 2u : 5u) : tpg[c]);
      EXPECT_EQ(l.groups[c], edge ? 1u : (c == 0 ? 3u : 4u));
      EXPECT_EQ(l.origin[c], edge ? (c == 0 ? 3u : 4u) : 0u);
    }
  }
  EXPECT_EQ(threads, 50u * 37u) << "every thread of the grid once, none outside it";
}

TEST(CudaLaunchPlanTest, AGridSmallerThanAThreadgroupIsOnePartialLaunch) {
  const uint32_t groups[3] = {1, 1, 1}, tpg[3] = {1024, 1, 1}, grid[3] = {1000, 1, 1};
  auto plan = planCudaLaunches(groups, tpg, grid);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].block[0], 1000u);
  EXPECT_EQ(plan[0].origin[0], 0u);
}

TEST(CudaDriverTest, DriverBuildFromTheLibraryName) {
  EXPECT_EQ(cuda::driverBuildFromPath("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04"), "580.159.04");
  EXPECT_EQ(cuda::driverBuildFromPath("/usr/lib/libcuda.so.1"), "");
  EXPECT_EQ(cuda::driverBuildFromPath("/opt/libcuda.so.x1"), "");
  EXPECT_EQ(cuda::driverBuildFromPath("/opt/other.so.1.2"), "");
}

bool haveDriver(std::string &why) {
  auto probe = probeCudaDevices();
  why = probe.unavailable();
  return probe.devices_size() > 0;
}

// The texture library the driver links beside a kernel that calls a hook
// defines every hook the stdlib declares (the CPU's JIT table lists them).
TEST(CudaTextureLibraryTest, DefinesEveryHookForTheDriversLinker) {
  const std::string &ptx = cudaTextureLibraryPtx();
  ASSERT_NE(ptx.find(".target sm_"), std::string::npos) << "not PTX";
  const auto hooks = textureHookSymbols();
  ASSERT_EQ(hooks.size(), 14u);
  for (const auto &[name, address] : hooks) {
    size_t at = ptx.find(std::string(name) + "(");
    ASSERT_NE(at, std::string::npos) << name;
    size_t line = ptx.rfind('\n', at) + 1;
    EXPECT_EQ(ptx.compare(line, 13, ".visible .fun"), 0) << name << ": " << ptx.substr(line, at - line);
  }
  EXPECT_EQ(ptx.find(".extern"), std::string::npos) << "the library needs nothing from elsewhere";
  EXPECT_EQ(cudaJitIdentity().rfind(std::string(kCudaJitOptions) + " textures=", 0), 0u) << cudaJitIdentity();
}

TEST(CudaDeviceTest, WithoutADriverThereIsNoDeviceAndItSaysWhy) {
  std::string why;
  if (haveDriver(why))
    GTEST_SKIP() << "this machine has a GPU: the no-device path is not reachable";
  EXPECT_FALSE(why.empty());
  EXPECT_NE(why.find("no CUDA"), std::string::npos) << why;
  std::string openWhy;
  EXPECT_EQ(CudaDevice::open(0, openWhy), nullptr);
  EXPECT_NE(openWhy.find("no CUDA"), std::string::npos) << openWhy;
}

// out[gid] += (threads in this threadgroup) * 65536 + 1, for gid from the
// launch block's origin and dispatch size as the compiler's entry does.
const char *kIdsPtx = R"(.version 7.8
.target sm_70
.address_size 64
.visible .entry ids(.param .u64 p_out, .param .align 4 .b8 p_launch[48])
{
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p_out];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r1, [p_launch];
  ld.param.u32 %r2, [p_launch+12];
  mov.u32 %r4, %ctaid.x;
  add.u32 %r4, %r4, %r1;
  mov.u32 %r5, %tid.x;
  mad.lo.u32 %r6, %r4, %r2, %r5;
  mov.u32 %r7, %ntid.x;
  mul.wide.u32 %rd2, %r6, 4;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.u32 %r8, [%rd3];
  mad.lo.u32 %r9, %r7, 65536, 1;
  add.u32 %r8, %r8, %r9;
  st.global.u32 [%rd3], %r8;
  ret;
}
)";

class CudaGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!haveDriver(why))
      GTEST_SKIP() << "no CUDA device here (" << why << "): GPU tests skipped";
    device_ = CudaDevice::open(0, why);
    ASSERT_NE(device_, nullptr) << why;
  }

  static ExecWorkerRequest idsRequest(uint32_t n, uint32_t width) {
    ExecWorkerRequest r;
    r.set_module(kIdsPtx);
    r.set_module_digest("ids-test");
    r.set_symbol("ids");
    auto *b = r.add_buffers();
    b->set_length(uint64_t(n) * 4);
    b->set_returned(true);
    auto *s = r.add_slots();
    s->set_kind(msl::internal::ExecSlot::BUFFER);
    s->set_buffer(0);
    for (uint32_t v : {(n + width - 1) / width, 1u, 1u})
      r.add_threadgroups(v);
    for (uint32_t v : {width, 1u, 1u})
      r.add_threads_per_threadgroup(v);
    for (uint32_t v : {n, 1u, 1u})
      r.add_grid_threads(v);
    return r;
  }

  std::unique_ptr<CudaDevice> device_;
};

TEST_F(CudaGpuTest, DispatchThreadsRunsEachGridThreadOnceWithItsThreadgroupsSize) {
  const uint32_t n = 1000, width = 128;
  ExecWorkerRequest r = idsRequest(n, width);
  r.set_repeat(3);
  ExecWorkerResponse resp = device_->execute(r);
  ASSERT_EQ(resp.error(), "");
  ASSERT_EQ(resp.buffers_size(), 1);
  ASSERT_EQ(resp.dispatch_time_ns_size(), 3);
  std::vector<uint32_t> got(n);
  ASSERT_EQ(resp.buffers(0).size(), size_t(n) * 4);
  std::memcpy(got.data(), resp.buffers(0).data(), got.size() * 4);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t size = i < n / width * width ? width : n % width;
    ASSERT_EQ(got[i], 3 * (size * 65536 + 1)) << i; // three dispatches on the same buffer
  }
}

// Returned buffers come back through the device's pinned staging memory,
// each at its own place, in request order, with unreturned ones left out;
// a later request larger than the staging memory grows it.
TEST_F(CudaGpuTest, ReturnedBuffersComeBackWholeAndInOrder) {
  for (uint32_t n : {1000u, 3000000u}) {
    ExecWorkerRequest r = idsRequest(n, 256);
    auto *data = r.add_buffers(); // not bound: its bytes, then zeros
    data->set_data("abcdefg");
    data->set_length(11);
    data->set_returned(true);
    r.add_buffers()->set_returned(true); // empty
    auto *kept = r.add_buffers();        // not returned
    kept->set_length(64);
    ExecWorkerResponse resp = device_->execute(r);
    ASSERT_EQ(resp.error(), "");
    ASSERT_EQ(resp.buffers_size(), 3) << n;
    ASSERT_EQ(resp.buffers(0).size(), size_t(n) * 4);
    std::vector<uint32_t> got(n);
    std::memcpy(got.data(), resp.buffers(0).data(), got.size() * 4);
    for (uint32_t i = 0; i < n; ++i) {
      uint32_t size = i < n / 256 * 256 ? 256 : n % 256;
      ASSERT_EQ(got[i], size * 65536 + 1) << n << " " << i;
    }
    EXPECT_EQ(resp.buffers(1), std::string("abcdefg\0\0\0\0", 11)) << n;
    EXPECT_EQ(resp.buffers(2), "") << n;
  }
}

TEST_F(CudaGpuTest, TheLinkedCubinLoadsWithoutTheJit) {
  ExecWorkerRequest r = idsRequest(256, 256);
  ExecWorkerResponse first = device_->execute(r);
  ASSERT_EQ(first.error(), "");
  EXPECT_EQ(first.module_source(), msl::internal::MODULE_LINKED_FROM_PTX);
  ASSERT_FALSE(first.cubin().empty());
  ExecWorkerResponse again = device_->execute(r);
  EXPECT_EQ(again.module_source(), msl::internal::MODULE_LOADED_ALREADY);
  EXPECT_TRUE(again.cubin().empty());

  std::string why;
  auto fresh = CudaDevice::open(0, why); // nothing loaded yet
  ASSERT_NE(fresh, nullptr) << why;
  r.set_cubin(first.cubin());
  ExecWorkerResponse fromCubin = fresh->execute(r);
  ASSERT_EQ(fromCubin.error(), "");
  EXPECT_EQ(fromCubin.module_source(), msl::internal::MODULE_FROM_CUBIN);
  std::cout << "tiny kernel: PTX JIT link + load " << first.module_load_ns() / 1e6 << " ms, cubin load "
            << fromCubin.module_load_ns() / 1e6 << " ms\n";

  // A cubin the driver refuses falls back to the PTX.
  auto other = CudaDevice::open(0, why);
  r.set_cubin("not a cubin");
  ExecWorkerResponse refused = other->execute(r);
  ASSERT_EQ(refused.error(), "");
  EXPECT_EQ(refused.module_source(), msl::internal::MODULE_LINKED_FROM_PTX);
}

TEST_F(CudaGpuTest, BadPtxIsAnErrorAndTheDeviceLivesOn) {
  ExecWorkerRequest r = idsRequest(256, 256);
  r.set_module(".version 7.8\n.target sm_70\n.address_size 64\n.visible .entry ids( garbage");
  r.set_module_digest("bad");
  ExecWorkerResponse bad = device_->execute(r);
  EXPECT_NE(bad.error().find("cannot link"), std::string::npos) << bad.error();
  ExecWorkerResponse good = device_->execute(idsRequest(256, 256));
  EXPECT_EQ(good.error(), "");
}

} // namespace
} // namespace msl::executor
