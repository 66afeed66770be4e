#include "GuardedMemory.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace msl::executor {

GuardedRegion &GuardedRegion::operator=(GuardedRegion &&o) noexcept {
  if (this != &o) {
    release();
    reservation_ = o.reservation_;
    reservationBytes_ = o.reservationBytes_;
    data_ = o.data_;
    length_ = o.length_;
    o.reservation_ = o.data_ = nullptr;
    o.reservationBytes_ = o.length_ = 0;
  }
  return *this;
}

bool GuardedRegion::allocate(size_t length, std::string &error) {
  release();
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  const size_t rounded = (length + kGuardedAlignment - 1) / kGuardedAlignment * kGuardedAlignment;
  const size_t pages = (rounded + page - 1) / page * page;
  const size_t total = kGuardBefore + pages + kGuardAfter;
  void *p = ::mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    error = "cannot reserve " + std::to_string(total >> 30) + " GiB of address space for a " +
            std::to_string(length) + "-byte buffer: " + std::strerror(errno);
    return false;
  }
  reservation_ = static_cast<char *>(p);
  reservationBytes_ = total;
  char *pagesStart = reservation_ + kGuardBefore;
  if (pages && ::mprotect(pagesStart, pages, PROT_READ | PROT_WRITE) != 0) {
    error = "cannot map a " + std::to_string(length) + "-byte buffer: " + std::strerror(errno);
    release();
    return false;
  }
  data_ = pagesStart + pages - rounded;
  length_ = length;
  return true;
}

bool GuardedRegion::reuseFor(size_t length) {
  if (!reservation_)
    return false;
  const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  const size_t rounded = (length + kGuardedAlignment - 1) / kGuardedAlignment * kGuardedAlignment;
  const size_t pages = (rounded + page - 1) / page * page;
  if (pages != mappedBytes())
    return false;
  char *pagesStart = reservation_ + kGuardBefore;
  std::memset(pagesStart, 0, pages); // nothing of the previous request remains
  data_ = pagesStart + pages - rounded;
  length_ = length;
  return true;
}

void GuardedRegion::release() {
  if (reservation_)
    ::munmap(reservation_, reservationBytes_);
  reservation_ = data_ = nullptr;
  reservationBytes_ = length_ = 0;
}

} // namespace msl::executor
