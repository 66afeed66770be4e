#include "GuardedMemory.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace msl::executor {

namespace {

size_t roundedLength(size_t length) {
  return (length + kGuardedAlignment - 1) / kGuardedAlignment * kGuardedAlignment;
}

size_t mappedBytesFor(size_t length) {
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  return (roundedLength(length) + page - 1) / page * page;
}

} // namespace

GuardedRegion &GuardedRegion::operator=(GuardedRegion &&o) noexcept {
  if (this != &o) {
    release();
    reservation_ = o.reservation_;
    reservationBytes_ = o.reservationBytes_;
    mapped_ = o.mapped_;
    mappedBytes_ = o.mappedBytes_;
    data_ = o.data_;
    length_ = o.length_;
    o.reservation_ = o.mapped_ = o.data_ = nullptr;
    o.reservationBytes_ = o.mappedBytes_ = o.length_ = 0;
  }
  return *this;
}

bool GuardedRegion::allocate(size_t length, std::string &error) {
  release();
  const size_t pages = mappedBytesFor(length);
  // Buffers of a huge page or more start on a huge-page boundary and ask for
  // transparent huge pages: a kernel streaming through them takes far fewer
  // TLB misses, and filling them far fewer page faults. The reservation grows
  // by one huge page so that the aligned start keeps its full guards.
  const bool huge = pages >= kHugePageBytes;
  const size_t total = kGuardBefore + pages + kGuardAfter + (huge ? kHugePageBytes : 0);
  void *p = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    error = "cannot reserve " + std::to_string(total >> 30) + " GiB of address space for a " +
            std::to_string(length) + "-byte buffer: " + std::strerror(errno);
    return false;
  }
  reservation_ = static_cast<char *>(p);
  reservationBytes_ = total;
  uintptr_t start = uintptr_t(reservation_) + kGuardBefore;
  if (huge)
    start = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  mapped_ = reinterpret_cast<char *>(start);
  if (pages && ::mprotect(mapped_, pages, PROT_READ | PROT_WRITE) != 0) {
    error = "cannot map a " + std::to_string(length) + "-byte buffer: " + std::strerror(errno);
    release();
    return false;
  }
  if (huge)
    ::madvise(mapped_, pages, MADV_HUGEPAGE); // advice: without huge pages it still works
  mappedBytes_ = pages;
  data_ = mapped_ + pages - roundedLength(length);
  length_ = length;
  return true;
}

bool GuardedRegion::reuseFor(size_t length) {
  if (!reservation_ || mappedBytesFor(length) != mappedBytes_)
    return false;
  std::memset(mapped_, 0, mappedBytes_); // nothing of the previous request remains
  data_ = mapped_ + mappedBytes_ - roundedLength(length);
  length_ = length;
  return true;
}

void GuardedRegion::release() {
  if (reservation_)
    ::munmap(reservation_, reservationBytes_);
  reservation_ = mapped_ = data_ = nullptr;
  reservationBytes_ = mappedBytes_ = length_ = 0;
}

} // namespace msl::executor
