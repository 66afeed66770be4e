//===- DeviceRunner.h - Execute on the device the tests are run for -------===//
//
// The kernel tests run on $MSLD_TEST_DEVICE ("cpu" when unset; "cuda:0" on a
// GPU machine, see scripts/gpu-e2e.sh). Where the daemon lacks that device:
//  - normally the tests skip, saying why (no GPU here);
//  - with $MSLD_TEST_RECORD_COMPILES set, each kernel is compiled for the
//    GPU (a compile worker with MSLD_COMPILE_RECORD_DIR records it, for the
//    replaying worker on a machine without LLVM: service/CompileRecording.h)
//    and, where a test allows it, run on the cpu instead.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "DaemonFixture.h"
#include "msl/client/Client.h"

#include <memory>
#include <string>
#include <vector>

namespace msl::test {

/// $MSLD_TEST_DEVICE, else "cpu".
std::string testDevice();

class DeviceRunner {
public:
  explicit DeviceRunner(const msl::client::Client &client, std::string device = testDevice());

  const std::string &device() const { return device_; }
  /// The device as ListDevices shows it (empty name when absent).
  const msl::v1::Device &info() const { return info_; }
  bool present() const { return !info_.name().empty(); }
  /// Recording compiles for an absent GPU ($MSLD_TEST_RECORD_COMPILES).
  bool recording() const { return recording_; }
  /// Non-empty: the tests cannot run here, and why.
  const std::string &skipReason() const { return skipReason_; }

  /// Execute on the device. Recording: compiles the kernel for the GPU,
  /// then runs it on the cpu.
  msl::client::Result<msl::v1::ExecuteResponse> execute(msl::v1::ExecuteRequest request) const;
  /// Recording: compiles `request`'s kernel for the GPU, as Execute would.
  void record(const msl::v1::ExecuteRequest &request) const;

private:
  const msl::client::Client &client_;
  std::string device_;
  msl::v1::Device info_;
  bool recording_ = false;
  std::string skipReason_;
};

/// A DaemonTest whose kernels run on $MSLD_TEST_DEVICE through runner_.
class DeviceTest : public DaemonTest {
protected:
  /// (Re)starts the daemon with `flags`, its client and the runner; skips
  /// the test where the device is absent (or, on the cpu, its worker).
  void connect(const std::vector<std::string> &flags = {});
  /// The Execute of `r` (anything with the request in `.req`) fails with
  /// `code`, its message containing `needle`.
  template <class R> void expectStatus(const R &r, grpc::StatusCode code, const std::string &needle) {
    expectExecuteStatus(r.req, code, needle);
  }
  void expectExecuteStatus(const msl::v1::ExecuteRequest &request, grpc::StatusCode code, const std::string &needle);

  std::unique_ptr<msl::client::Client> client_;
  std::unique_ptr<DeviceRunner> runner_;
};

} // namespace msl::test
