#include "HostRegions.h"

#include "WorkerProtocol.h"

#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace msl::executor {

HostRegions::HostRegions(int socket, Hooks hooks, size_t keep)
    : socket_(socket), hooks_(std::move(hooks)), keep_(keep) {}

HostRegions::~HostRegions() {
  while (!held_.empty())
    drop(held_.begin());
}

void HostRegions::drop(std::map<uint64_t, Held>::iterator it) {
  if (hooks_.unmapping)
    hooks_.unmapping(it->second.base, it->second.size);
  ::munmap(it->second.base, it->second.size);
  held_.erase(it);
}

HostRegions::Result HostRegions::prepare(const msl::internal::ExecWorkerRequest &request, HostBuffers &buffers,
                                         std::string &error) {
  buffers.assign(size_t(request.buffers_size()), {});
  const size_t count = size_t(request.host_regions_size());
  std::vector<int> fds;
  if (count > 0) {
    if (socket_ < 0) {
      error = "the request names shared regions, and this worker has no descriptor socket";
      return Result::BadRequest;
    }
    if (!service::receiveDescriptors(socket_, count, fds)) {
      error = "the request's " + std::to_string(count) + " region descriptors did not come";
      return Result::OutOfStep;
    }
  }
  // Regions msld let go of first: their pages may be pinned.
  const std::set<uint64_t> live(request.live_host_regions().begin(), request.live_host_regions().end());
  for (auto it = held_.begin(); it != held_.end();)
    if (!live.count(it->first))
      drop(it++);
    else
      ++it;
  const uint64_t use = ++uses_;
  std::vector<Held *> regions(count, nullptr);
  Result result = Result::Ok;
  for (size_t i = 0; i < count; ++i) {
    const auto &r = request.host_regions(int(i));
    auto found = held_.find(r.serial());
    if (found == held_.end()) {
      struct stat st;
      void *base = MAP_FAILED;
      if (::fstat(fds[i], &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && uint64_t(st.st_size) >= r.size())
        base = ::mmap(nullptr, size_t(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
      if (base == MAP_FAILED) {
        error = "cannot map shared region " + std::to_string(i) + " of the request (" + std::to_string(r.size()) +
                " bytes)";
        result = Result::BadRequest;
        break;
      }
      found = held_.emplace(r.serial(), Held{static_cast<char *>(base), size_t(st.st_size), use}).first;
      if (hooks_.mapped)
        hooks_.mapped(found->second.base, found->second.size);
    }
    found->second.lastUse = use;
    regions[i] = &found->second;
  }
  for (int fd : fds)
    ::close(fd); // a held region stays mapped without its descriptor
  for (int i = 0; i < request.buffers_size() && result == Result::Ok; ++i) {
    const auto &b = request.buffers(i);
    if (!b.has_host())
      continue;
    const auto &h = b.host();
    if (h.region() >= count || !b.data().empty() || h.length() != b.length() ||
        h.offset() > regions[h.region()]->size || h.length() > regions[h.region()]->size - h.offset()) {
      error = "buffer " + std::to_string(i) + "'s host range is not within its shared region";
      result = Result::BadRequest;
      break;
    }
    buffers[size_t(i)] = {regions[h.region()]->base + h.offset(), size_t(h.length())};
  }
  // At most keep_ held, the least recently used dropped (never one this
  // request reads: those were used last).
  while (held_.size() > keep_) {
    auto oldest = held_.begin();
    for (auto it = held_.begin(); it != held_.end(); ++it)
      if (it->second.lastUse < oldest->second.lastUse)
        oldest = it;
    if (oldest->second.lastUse == use)
      break;
    drop(oldest);
  }
  if (result != Result::Ok)
    buffers.assign(size_t(request.buffers_size()), {});
  return result;
}

bool HostRegions::run(const msl::internal::ExecWorkerRequest &request, msl::internal::ExecWorkerResponse &response,
                      const std::function<msl::internal::ExecWorkerResponse(const HostBuffers &)> &execute,
                      std::string &why) {
  response.Clear();
  switch (prepare(request, buffers_, why)) {
  case Result::Ok:
    response = execute(buffers_);
    return true;
  case Result::BadRequest:
    response.set_error(why);
    return true;
  case Result::OutOfStep:
    return false;
  }
  return false;
}

} // namespace msl::executor
