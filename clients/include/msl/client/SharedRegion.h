// A shared region: memory this process and msld on the same host both map
// (msld's --shared-regions-socket; the protocol and its guarantees:
// service/SharedRegions.h). A buffer whose contents are a range of it
// (BufferContents.shared = range(offset, length)) travels to the kernel and
// back without passing through gRPC: msld reads the range before the
// kernel runs and writes the buffer's final bytes back into it, as for a
// Metal buffer in MTLStorageModeShared; its BufferResult then has
// in_shared_region set and no bytes. The region is freed when this object
// goes (it closes the connection msld keeps the region for).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "msl/client/Client.h"
#include "msl/v1/execute.pb.h"

namespace msl::client {

class SharedRegion {
 public:
  // Asks msld at `socket_path` for a region of `size` bytes (zeroed) and
  // maps it. UNAVAILABLE when msld does not answer there,
  // FAILED_PRECONDITION with msld's reason when it refuses.
  static Result<std::unique_ptr<SharedRegion>> open(
      const std::string& socket_path, uint64_t size,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  ~SharedRegion();
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;

  // What requests name the region by.
  const std::string& token() const { return token_; }
  char* data() const { return data_; }
  uint64_t size() const { return size_; }
  // `length` bytes from `offset`, as a buffer's contents.
  msl::v1::SharedRange range(uint64_t offset, uint64_t length) const;

 private:
  SharedRegion() = default;
  std::string token_;
  char* data_ = nullptr;
  uint64_t size_ = 0;
  int connection_ = -1;
};

}  // namespace msl::client
