//===- BinaryIdentity.h - Which code this process runs --------------------===//
//
// The compiler identity in the action key must change whenever the compiler
// does (ccache's compiler_check): a rebuilt worker, a new libLLVM, a patched
// libstdc++. This digest covers the executable's bytes and, for every shared
// object the process has loaded, its path and GNU build ID (the linker's
// hash of its contents), or its bytes when it has no build ID.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace msl::service {

/// "sha256:<64 hex>" of what this process runs; computed once.
const std::string &binaryIdentity();

} // namespace msl::service
