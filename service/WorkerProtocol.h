//===- WorkerProtocol.h - Framing between the daemon and its workers ------===//
//
// Messages are protobufs, each preceded by its length as 4 little-endian
// bytes, over a pipe. Reads and writes retry on EINTR and partial transfers.
// (The worker side blocks; msld's side, in WorkerPool, reads and writes the
// same frames without blocking, under deadlines.)
//
//===----------------------------------------------------------------------===//
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <string>

namespace msl::service {

/// Largest message either side accepts (a bound on what a worker can make
/// the daemon allocate; WorkerPoolOptions::maxResponseBytes may be lower).
constexpr uint32_t kMaxWorkerMessageBytes = 512u << 20;

/// Exit status with which a worker says it ran out of memory (its limit).
constexpr int kWorkerOutOfMemoryExitCode = 86;
/// Exit status with which an execution worker says its kernel faulted (an
/// out-of-bounds access, a trap); its last stderr line says how.
constexpr int kWorkerKernelFaultExitCode = 87;

/// False on EOF or error.
bool writeMessage(int fd, const google::protobuf::MessageLite &message);
bool readMessage(int fd, google::protobuf::MessageLite &message);

/// The 4-byte length prefix of a frame.
std::string encodeLength(uint32_t n);
uint32_t decodeLength(const char header[4]);

} // namespace msl::service
