//===- WorkerProtocol.h - Framing between the daemon and its workers ------===//
//
// Messages are protobufs, each preceded by its length as 4 little-endian
// bytes, over a pipe. Reads and writes retry on EINTR and partial transfers.
// (The worker side blocks; msld's side, in WorkerPool, reads and writes the
// same frames without blocking, under deadlines.)
//
// Execution workers' messages carry megabytes of buffer bytes. They travel
// in split frames: the message with its payload fields (the buffers' and
// textures' bytes) emptied, then those fields' bytes raw, so that neither
// side serializes, concatenates or parses them (the only copies left are
// the pipe's):
//
//   u32 (n | kSplitFrameFlag)  n bytes: the message, payload fields empty
//   u32 count                  count u32: each payload's size
//   the payloads, in the order PayloadFields lists them
//
// count must be the number of payload fields of the parsed message, and the
// frame as a whole (n + 4 + 4 * count + the payloads) stays within the
// reader's limit. A plain frame's length never has the flag set (the limit
// is below 2^31), so a reader tells the two apart by the flag.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <string>
#include <vector>

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

/// Set in the length prefix of a split frame.
constexpr uint32_t kSplitFrameFlag = 0x80000000u;

/// A message's payload fields in a fixed order (the same on both sides).
using PayloadFields = std::vector<std::string *> (*)(google::protobuf::MessageLite &);
/// ExecWorkerRequest: each buffer's data, then each texture's data.
std::vector<std::string *> execRequestPayloads(google::protobuf::MessageLite &request);
/// ExecWorkerResponse: its buffers, then its textures.
std::vector<std::string *> execResponsePayloads(google::protobuf::MessageLite &response);

/// The head of a split frame of `message` (length, message without its
/// payloads, count, sizes); `payloads` are then written after it in order.
/// The message is left as it was. False if it does not serialize or the
/// frame would pass kMaxWorkerMessageBytes.
bool encodeSplitHead(google::protobuf::MessageLite &message, PayloadFields fields, std::string &head,
                     std::vector<std::string *> &payloads);

/// How reading the rest of a frame went.
enum class FrameRead { Ok, ReadFailed, TooLarge, Malformed };

/// Reads the rest of a frame whose prefix was `prefix` (plain or split) into
/// `message` with `read(char *, size_t)`, which fills exactly that many bytes
/// or returns false. `size` is what the frame announced so far (also when it
/// is TooLarge). Nothing is allocated past what the frame declares within
/// `limit`.
template <typename ReadFn>
FrameRead readFrameRest(uint32_t prefix, google::protobuf::MessageLite &message, PayloadFields fields,
                        uint32_t limit, uint64_t &size, ReadFn &&read) {
  const bool split = (prefix & kSplitFrameFlag) != 0;
  const uint32_t n = prefix & ~kSplitFrameFlag;
  size = n;
  if (n > limit)
    return FrameRead::TooLarge;
  std::string body(n, '\0');
  if (!read(body.data(), n))
    return FrameRead::ReadFailed;
  if (!message.ParseFromString(body))
    return FrameRead::Malformed;
  if (!split)
    return FrameRead::Ok;
  if (!fields)
    return FrameRead::Malformed; // this side takes no split frames
  std::vector<std::string *> payloads = fields(message);
  char header[4];
  if (!read(header, 4))
    return FrameRead::ReadFailed;
  if (decodeLength(header) != payloads.size())
    return FrameRead::Malformed;
  size += 4 + 4 * uint64_t(payloads.size());
  if (size > limit)
    return FrameRead::TooLarge;
  std::string sizes(4 * payloads.size(), '\0');
  if (!read(sizes.data(), sizes.size()))
    return FrameRead::ReadFailed;
  for (size_t i = 0; i < payloads.size(); ++i)
    size += decodeLength(sizes.data() + 4 * i);
  if (size > limit)
    return FrameRead::TooLarge;
  for (size_t i = 0; i < payloads.size(); ++i) {
    std::string &p = *payloads[i];
    p.clear();
    p.resize(decodeLength(sizes.data() + 4 * i));
    if (!read(p.data(), p.size()))
      return FrameRead::ReadFailed;
  }
  return FrameRead::Ok;
}

/// An execution worker's start note (ExecWorkerResponse.dispatch_starts):
/// a plain frame sent once per request, right before the kernel's first
/// dispatch, ahead of the answer. msld's deadline for the request's
/// transfer and the JIT ends at it, and the kernel's time limit starts.
bool writeDispatchStartNote(int fd);
/// Whether `response`, an ExecWorkerResponse, is the start note.
bool isDispatchStartNote(const google::protobuf::MessageLite &response);

/// Writes `message` as a split frame.
bool writeSplitMessage(int fd, google::protobuf::MessageLite &message, PayloadFields fields);
/// Reads a plain or a split frame (`fields` lists the payloads of a split
/// one), at most `limit` bytes in all; `split` says which it was (a worker
/// answers as it was asked).
bool readAnyMessage(int fd, google::protobuf::MessageLite &message, PayloadFields fields, bool &split,
                    uint32_t limit = kMaxWorkerMessageBytes);

} // namespace msl::service
