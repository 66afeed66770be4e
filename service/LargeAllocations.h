//===- LargeAllocations.h - Keep big request buffers mapped ---------------===//
//
// msld and its execution workers move buffers of megabytes per request.
// glibc serves allocations above its mmap threshold (128 KiB at first) with
// fresh mappings and unmaps them on free, so every request paid a page fault
// and a page clear per 4 KiB of every copy of every buffer (most of an
// Execute's overhead: bench/RESULTS.md). From the heap, and with up to
// 256 MiB of freed memory kept mapped, the next request reuses the pages.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <malloc.h>

namespace msl::service {

inline void reuseLargeAllocations() {
  ::mallopt(M_MMAP_THRESHOLD, 64 << 20);
  ::mallopt(M_TRIM_THRESHOLD, 256 << 20);
}

} // namespace msl::service
