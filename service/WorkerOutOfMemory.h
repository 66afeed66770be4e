//===- WorkerOutOfMemory.h - How a worker ends when memory runs out -------===//
//
// A worker that hits its memory limit (msld's RLIMIT_AS / RLIMIT_DATA) exits
// with kWorkerOutOfMemoryExitCode, saying so on stderr, so msld reports a
// resource limit (RESOURCE_EXHAUSTED) rather than a crash. For the workers'
// mains only (they link LLVM, whose allocation failures report here too).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "WorkerProtocol.h"

#include <llvm/Support/ErrorHandling.h>

#include <new>
#include <unistd.h>

namespace msl::service {

inline void exitOnOutOfMemory() {
  static auto die = [] {
    static const char message[] = "msld worker: out of memory\n";
    (void)!::write(2, message, sizeof message - 1);
    ::_exit(kWorkerOutOfMemoryExitCode);
  };
  std::set_new_handler([] { die(); });
  llvm::install_bad_alloc_error_handler([](void *, const char *, bool) { die(); });
}

} // namespace msl::service
