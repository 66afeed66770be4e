//===- GuardedMemory.h - Memory that faults on out-of-bounds access -------===//
//
// A GuardedRegion is `length` read/write bytes inside a reservation whose
// rest is PROT_NONE (MAP_NORESERVE: address space only, no memory): 32 GiB
// before the bytes and 64 GiB after them, so that any 32-bit index from the
// start, signed or unsigned, at an element size of up to 16 bytes, lands in
// the guard and faults (SIGSEGV) instead of reading or writing memory that
// is not this buffer's. The bytes end at a page boundary (their start is
// rounded down to kGuardedAlignment), so even a one-element overrun past a
// buffer whose length is a multiple of that alignment faults.
//
// PROT_NONE reservations count against RLIMIT_AS but not RLIMIT_DATA: a
// process using these must be limited with RLIMIT_DATA (or a cgroup).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace msl::executor {

constexpr size_t kGuardBefore = size_t(32) << 30;
constexpr size_t kGuardAfter = size_t(64) << 30;
/// The alignment of a region's first byte.
constexpr size_t kGuardedAlignment = 64;
/// Regions this large or larger are mapped from a boundary of this size and
/// advised to use transparent huge pages (x86-64's 2 MiB).
constexpr size_t kHugePageBytes = size_t(2) << 20;

class GuardedRegion {
public:
  GuardedRegion() = default;
  GuardedRegion(GuardedRegion &&o) noexcept { *this = std::move(o); }
  GuardedRegion &operator=(GuardedRegion &&o) noexcept;
  GuardedRegion(const GuardedRegion &) = delete;
  GuardedRegion &operator=(const GuardedRegion &) = delete;
  ~GuardedRegion() { release(); }

  /// Reserves and maps `length` zeroed bytes; false with `error` set when the
  /// address space or memory is not there.
  bool allocate(size_t length, std::string &error);
  /// Makes this allocated region `length` zeroed bytes again, as allocate()
  /// would, when that takes the same pages (no new mapping, no page faults:
  /// the pages are cleared); false, and unchanged, otherwise.
  bool reuseFor(size_t length);
  /// The bytes the region maps read/write (0 when not allocated).
  size_t mappedBytes() const { return mappedBytes_; }
  void release();

  char *data() const { return data_; }
  size_t length() const { return length_; }

private:
  char *reservation_ = nullptr;
  size_t reservationBytes_ = 0;
  char *mapped_ = nullptr; // the read/write pages inside the reservation
  size_t mappedBytes_ = 0;
  char *data_ = nullptr;
  size_t length_ = 0;
};

} // namespace msl::executor
