// mslc: compiles Metal Shading Language sources on an msld server, or
// (`mslc run`) runs one of its kernels there. See msl/client/MslcDriver.h and
// msl/client/MslcRun.h; `mslc --help` and `mslc run --help` for usage.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "msl/client/MslcDriver.h"
#include "msl/client/MslcRun.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  const char* address = std::getenv(msl::client::mslc::kAddressEnv);
  // A build runs mslc once per shader: its gRPC client is left to the exit
  // rather than torn down (threads joined, the channel closed), which would
  // cost milliseconds of every cache hit.
  msl::client::mslc::leaveClientsToExit(true);
  int status;
  if (!args.empty() && args.front() == "run") {
    args.erase(args.begin());
    status = msl::client::mslc::runKernel(args, address, std::cout, std::cerr);
  } else {
    status = msl::client::mslc::run(args, address, std::cout, std::cerr);
  }
  std::cout.flush();
  std::cerr.flush();
  std::_Exit(status);
}
