//===- ReplayCompileWorkerMain.cpp - msld-replay-compile-worker -----------===//
//
// A compile worker without a compiler, for GPU machines (CompileRecording.h):
// says hello with the identity recorded in $MSLD_COMPILE_REPLAY_DIR/identity,
// then answers each WorkerRequest with the response recorded for it, or a
// failed compile saying that it was not recorded. Links no LLVM.
//
//===----------------------------------------------------------------------===//
#include "CompileRecording.h"
#include "WorkerProtocol.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>

int main() {
  const char *dir = std::getenv("MSLD_COMPILE_REPLAY_DIR");
  if (!dir || !*dir) {
    std::cerr << "msld-replay-compile-worker: MSLD_COMPILE_REPLAY_DIR is not set\n";
    return 2;
  }
  std::ifstream identityFile(std::string(dir) + "/identity");
  std::string identity((std::istreambuf_iterator<char>(identityFile)), {});
  if (identity.empty()) {
    std::cerr << "msld-replay-compile-worker: " << dir << "/identity is missing\n";
    return 2;
  }
  msl::internal::WorkerHello hello;
  hello.set_compiler_identity(identity);
  if (!msl::service::writeMessage(1, hello))
    return 1;
  msl::internal::WorkerRequest request;
  while (msl::service::readMessage(0, request)) {
    msl::internal::WorkerResponse response;
    if (!msl::service::replayCompile(dir, request, response)) {
      response.Clear();
      response.set_success(false);
      auto *d = response.add_diagnostics();
      d->set_file(request.main_path());
      d->set_severity(msl::v1::Diagnostic::ERROR);
      d->set_message("msld-replay-compile-worker: this compile was not recorded (key " +
                     msl::service::recordingKey(request) + "); record it where LLVM is (scripts/gpu-e2e.sh)");
    }
    if (!msl::service::writeMessage(1, response))
      return 1;
    request.Clear();
  }
  return 0;
}
