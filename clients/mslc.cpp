// mslc: compiles a Metal Shading Language source on an msld server, or
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
  if (!args.empty() && args.front() == "run") {
    args.erase(args.begin());
    return msl::client::mslc::runKernel(args, address, std::cout, std::cerr);
  }
  return msl::client::mslc::run(args, address, std::cout, std::cerr);
}
