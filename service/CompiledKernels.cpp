#include "CompiledKernels.h"

namespace msl::service {

std::shared_ptr<const CompiledKernel> CompiledKernels::find(const std::string &compileRequest) {
  std::lock_guard lock(mu_);
  auto it = byKey_.find(compileRequest);
  if (it == byKey_.end())
    return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->kernel;
}

void CompiledKernels::keep(const std::string &compileRequest, std::shared_ptr<const CompiledKernel> kernel) {
  const size_t bytes = compileRequest.size() + kernel->module.size();
  if (bytes > options_.maxBytes || options_.maxEntries == 0)
    return;
  std::lock_guard lock(mu_);
  if (auto it = byKey_.find(compileRequest); it != byKey_.end()) {
    auto entry = it->second;
    byKey_.erase(it); // first: its key views the entry's
    bytes_ -= entry->bytes;
    lru_.erase(entry);
  }
  lru_.push_front({compileRequest, std::move(kernel), bytes});
  byKey_[lru_.front().key] = lru_.begin(); // the key's view lives in its entry
  bytes_ += bytes;
  while (lru_.size() > options_.maxEntries || bytes_ > options_.maxBytes) {
    byKey_.erase(lru_.back().key);
    bytes_ -= lru_.back().bytes;
    lru_.pop_back();
  }
}

size_t CompiledKernels::size() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

} // namespace msl::service
