// mslc: compiles a Metal Shading Language source on an msld server.
// See msl/client/MslcDriver.h; `mslc --help` for usage.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "msl/client/MslcDriver.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  std::vector<std::string> args(argv + 1, argv + argc);
  return msl::client::mslc::run(args, std::getenv(msl::client::mslc::kAddressEnv), std::cout,
                                std::cerr);
}
