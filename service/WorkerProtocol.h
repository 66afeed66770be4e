//===- WorkerProtocol.h - Framing between the daemon and its workers ------===//
//
// Messages are protobufs, each preceded by its length as 4 little-endian
// bytes, over a pipe. Reads and writes retry on EINTR and partial transfers.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <google/protobuf/message_lite.h>

namespace msl::service {

/// Largest message either side accepts (a bound on what a worker can make
/// the daemon allocate).
constexpr uint32_t kMaxWorkerMessageBytes = 512u << 20;

/// False on EOF or error.
bool writeMessage(int fd, const google::protobuf::MessageLite &message);
bool readMessage(int fd, google::protobuf::MessageLite &message);

} // namespace msl::service
