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
// is below 2^31), so a reader tells the two apart by the flag. With
// kSharedPayloadsFlag too, the payloads are not in the pipe but in a region
// of memory both sides map (see SharedPayloads).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <google/protobuf/message_lite.h>

#include <chrono>
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

/// Set, besides kSplitFrameFlag, in a split frame whose payloads are not in
/// the pipe but in the shared payload region both sides map (a memfd msld
/// makes per execution worker, WorkerPoolOptions::sharedPayloadBytes): one
/// after the other from its start, in PayloadFields order. Each side copies
/// them in once and out once (a pipe costs two copies and a page per 4 KiB
/// each way); a frame whose payloads do not fit goes through the pipe.
constexpr uint32_t kSharedPayloadsFlag = 0x40000000u;

/// A shared payload region as one side maps it; empty when there is none.
struct SharedPayloads {
  char *data = nullptr;
  size_t size = 0;
  explicit operator bool() const { return data != nullptr; }
};

/// Worker side: maps the region msld passed as `fd` (`--payload-fd N`).
/// False (and `region` empty) when fd is not a mappable region.
bool mapSharedPayloads(int fd, SharedPayloads &region);

/// Descriptors that go with a request (the memfds of the shared regions it
/// reads, ExecWorkerRequest.host_regions): one SOCK_SEQPACKET message on
/// the worker's descriptor socket, sent before the request's frame, with
/// all of them attached. At most kMaxDescriptorsPerMessage.
constexpr size_t kMaxDescriptorsPerMessage = 16;
/// msld's side; never blocks (false when the socket cannot take it now).
bool sendDescriptors(int socket, const std::vector<int> &descriptors);
/// The worker's side: the next message, which must carry exactly `count`
/// descriptors (close-on-exec); false (none kept) otherwise.
bool receiveDescriptors(int socket, size_t count, std::vector<int> &descriptors);

/// What msld passes an execution worker after its own arguments
/// (WorkerPool): `[--payload-fd N] [--descriptor-fd N]`.
struct WorkerChannels {
  int payloadFd = -1;    // the shared payload region
  int descriptorFd = -1; // the descriptor socket
};
/// Parses argv[first, argc); false on anything else.
bool parseWorkerChannels(int argc, char **argv, int first, WorkerChannels &channels);

/// A worker's wait for its next request: polls `fd` without sleeping for
/// up to `spin` (a request that follows its answer at once is read without
/// waking a sleeping core), then returns; the blocking read follows.
void awaitNextRequest(int fd, std::chrono::microseconds spin);
/// How long an execution worker spins so after each answer.
constexpr std::chrono::microseconds kNextRequestSpin{1000};

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
/// With `sharedPayloads` the frame says its payloads lie in the shared
/// region (encodeSplitFrame puts them there).
bool encodeSplitHead(google::protobuf::MessageLite &message, PayloadFields fields, std::string &head,
                     std::vector<std::string *> &payloads, bool sharedPayloads = false);
/// A split frame of `message` to send: its head, and the payloads to write
/// after it, or, when they fit in `shared`, none: they are copied to the
/// region and the head says so. False as encodeSplitHead.
bool encodeSplitFrame(google::protobuf::MessageLite &message, PayloadFields fields, const SharedPayloads &shared,
                      std::string &head, std::vector<std::string *> &payloads);

/// How reading the rest of a frame went.
enum class FrameRead { Ok, ReadFailed, TooLarge, Malformed };

/// Reads the rest of a frame whose prefix was `prefix` (plain or split) into
/// `message` with `read(char *, size_t)`, which fills exactly that many bytes
/// or returns false. `size` is what the frame announced so far (also when it
/// is TooLarge). Nothing is allocated past what the frame declares within
/// `limit`. A frame with its payloads in the shared region takes them from
/// `shared`: Malformed when there is none or they would pass its end.
template <typename ReadFn>
FrameRead readFrameRest(uint32_t prefix, google::protobuf::MessageLite &message, PayloadFields fields,
                        uint32_t limit, uint64_t &size, ReadFn &&read, const SharedPayloads &shared = {}) {
  const bool split = (prefix & kSplitFrameFlag) != 0;
  const bool inShared = split && (prefix & kSharedPayloadsFlag) != 0;
  const uint32_t n = split ? prefix & ~(kSplitFrameFlag | kSharedPayloadsFlag) : prefix;
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
  uint64_t payloadBytes = 0;
  for (size_t i = 0; i < payloads.size(); ++i)
    payloadBytes += decodeLength(sizes.data() + 4 * i);
  size += payloadBytes;
  if (size > limit)
    return FrameRead::TooLarge;
  if (inShared) {
    if (!shared || payloadBytes > shared.size)
      return FrameRead::Malformed;
    size_t at = 0;
    for (size_t i = 0; i < payloads.size(); ++i) {
      const size_t n = decodeLength(sizes.data() + 4 * i);
      payloads[i]->assign(shared.data + at, n);
      at += n;
    }
    return FrameRead::Ok;
  }
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

/// Writes `message` as a split frame; its payloads in `shared` when they fit.
bool writeSplitMessage(int fd, google::protobuf::MessageLite &message, PayloadFields fields,
                       const SharedPayloads &shared = {});
/// Reads a plain or a split frame (`fields` lists the payloads of a split
/// one), at most `limit` bytes in all; `split` says which it was (a worker
/// answers as it was asked).
bool readAnyMessage(int fd, google::protobuf::MessageLite &message, PayloadFields fields, bool &split,
                    uint32_t limit = kMaxWorkerMessageBytes, const SharedPayloads &shared = {});

} // namespace msl::service
