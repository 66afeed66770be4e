#include "DeviceRunner.h"

#include <cstdlib>

namespace msl::test {

std::string testDevice() {
  const char *d = std::getenv("MSLD_TEST_DEVICE");
  return d && *d ? d : "cpu";
}

DeviceRunner::DeviceRunner(const msl::client::Client &client, std::string device)
    : client_(client), device_(std::move(device)) {
  auto devices = client_.listDevices();
  if (!devices.ok()) {
    skipReason_ = "ListDevices failed: " + msl::client::describeStatus(devices.status());
    return;
  }
  for (const auto &d : devices->devices())
    if (d.name() == device_)
      info_ = d;
  if (present())
    return;
  const char *record = std::getenv("MSLD_TEST_RECORD_COMPILES");
  recording_ = device_ != "cpu" && record && *record;
  if (!recording_)
    skipReason_ = "msld has no device " + device_ + " on this machine (it lists " +
                  std::to_string(devices->devices_size()) + "; MSLD_TEST_DEVICE names the device to test)";
}

void DeviceRunner::record(const msl::v1::ExecuteRequest &request) const {
  if (!request.has_compile())
    return;
  // What ExecuteService compiles for a GPU (the H200's SM unless told).
  msl::v1::CompileRequest compile = request.compile();
  const char *sm = std::getenv("MSLD_TEST_RECORD_SM");
  compile.mutable_target()->set_arch(msl::v1::Target::NVPTX64);
  compile.mutable_target()->set_cpu(sm && *sm ? sm : "sm_90");
  compile.clear_outputs();
  compile.add_outputs(msl::v1::PTX);
  compile.add_outputs(msl::v1::REFLECTION);
  auto compiled = client_.compile(compile);
  if (!compiled.ok() || !compiled->success())
    ADD_FAILURE() << "recording the compile for " << device_ << " failed: "
                  << (compiled.ok() ? "the kernel does not compile for nvptx64"
                                    : msl::client::describeStatus(compiled.status()));
}

msl::client::Result<msl::v1::ExecuteResponse> DeviceRunner::execute(msl::v1::ExecuteRequest request) const {
  if (recording_) {
    record(request);
    request.set_device("cpu");
  } else {
    request.set_device(device_);
  }
  return client_.execute(request);
}

void DeviceTest::connect(const std::vector<std::string> &flags) {
  if (testDevice() == "cpu" || std::getenv("MSLD_TEST_RECORD_COMPILES"))
    REQUIRE_EXEC_WORKER();
  client_ = std::make_unique<msl::client::Client>(startDaemon(flags).address());
  runner_ = std::make_unique<DeviceRunner>(*client_);
  if (!runner_->skipReason().empty())
    GTEST_SKIP() << runner_->skipReason();
}

void DeviceTest::expectExecuteStatus(const msl::v1::ExecuteRequest &request, grpc::StatusCode code,
                                     const std::string &needle) {
  SCOPED_TRACE(needle);
  auto result = runner_->execute(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().error_code(), code) << result.status().error_message();
  EXPECT_NE(result.status().error_message().find(needle), std::string::npos) << result.status().error_message();
}

} // namespace msl::test
