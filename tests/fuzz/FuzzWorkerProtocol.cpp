// Fuzz target: what msld decodes from its workers (service/WorkerProtocol.h,
// the frames WorkerPool reads) and what workers decode from msld. The input
// is a frame: a 4-byte length and a body. Properties: the length round-trips
// through encodeLength; a body that parses as a message serializes and
// parses again to the same message; a frame written to a pipe reads back as
// the message it held (serializations compared deterministically); the
// execution workers' split frames round-trip too, and cut or garbled ones
// are refused.
#include "WorkerProtocol.h"
#include "msl/internal/exec_worker.pb.h"
#include "msl/internal/worker.pb.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/common.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

void require(bool ok) {
  if (!ok)
    std::abort();
}

// Invalid UTF-8 in a string field is a parse failure, logged by protobuf
// each time: not worth millions of lines.
const bool kQuiet = [] {
  google::protobuf::SetLogHandler([](google::protobuf::LogLevel, const char *, int, const std::string &) {});
  return true;
}();

// Map fields serialize in hash order unless asked otherwise.
std::string deterministic(const google::protobuf::MessageLite &m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    require(m.SerializeToCodedStream(&coded));
  }
  return out;
}

template <class Message> void roundTrip(const std::string &body, bool throughPipe) {
  Message m;
  if (!m.ParseFromString(body))
    return;
  std::string once = deterministic(m);
  Message again;
  require(again.ParseFromString(once) && deterministic(again) == once);
  if (!throughPipe || once.size() > 32768)
    return;
  int fds[2];
  require(::pipe(fds) == 0);
  bool wrote = msl::service::writeMessage(fds[1], m);
  ::close(fds[1]);
  Message read;
  require(wrote && msl::service::readMessage(fds[0], read) && deterministic(read) == once);
  ::close(fds[0]);
}

// The execution workers' split frames (payload fields raw after the rest):
// a message written as one reads back as the same message, and a frame
// whose tail is cut short or garbled is refused (never a crash, never more
// than the limit allocated).
template <class Message>
void splitRoundTrip(const std::string &body, msl::service::PayloadFields fields) {
  Message m;
  if (!m.ParseFromString(body))
    return;
  std::string once = deterministic(m);
  std::string head;
  std::vector<std::string *> payloads;
  if (!msl::service::encodeSplitHead(m, fields, head, payloads))
    return;
  require(deterministic(m) == once); // the sender's message is left whole
  std::string frame = head;
  for (const std::string *p : payloads)
    frame += *p;
  if (frame.size() > 32768)
    return;
  auto readBack = [&](const std::string &bytes, Message &out, bool &split, uint32_t limit) {
    int fds[2];
    require(::pipe(fds) == 0);
    require(::write(fds[1], bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    ::close(fds[1]);
    bool ok = msl::service::readAnyMessage(fds[0], out, fields, split, limit);
    ::close(fds[0]);
    return ok;
  };
  Message read;
  bool split = false;
  require(readBack(frame, read, split, msl::service::kMaxWorkerMessageBytes) && split &&
          deterministic(read) == once);
  if (frame.size() > 8) {
    Message cut;
    require(!readBack(frame.substr(0, frame.size() - 1), cut, split, msl::service::kMaxWorkerMessageBytes) ||
            payloads.empty() || payloads.back()->empty());
    Message small;
    require(!readBack(frame, small, split, uint32_t(frame.size() - 5)));
  }
  // The input itself as the tail of a split frame after an empty message.
  Message any;
  if (body.size() <= 32768)
    (void)readBack(msl::service::encodeLength(msl::service::kSplitFrameFlag) + body, any, split, 1 << 16);

  // With a shared payload region (WorkerProtocol.h kSharedPayloadsFlag):
  // the payloads go there and the same message reads back; the region's
  // bytes are whatever the other side left, and a frame that claims more
  // than the region holds is refused.
  static std::vector<char> region(16384);
  const msl::service::SharedPayloads shared{region.data(), region.size()};
  auto readShared = [&](const std::string &bytes, Message &out, const msl::service::SharedPayloads &with) {
    int fds[2];
    require(::pipe(fds) == 0);
    require(::write(fds[1], bytes.data(), bytes.size()) == ssize_t(bytes.size()));
    ::close(fds[1]);
    bool inSplit = false;
    bool ok = msl::service::readAnyMessage(fds[0], out, fields, inSplit, msl::service::kMaxWorkerMessageBytes, with);
    ::close(fds[0]);
    return ok;
  };
  std::string sharedHead;
  std::vector<std::string *> rest;
  require(msl::service::encodeSplitFrame(m, fields, shared, sharedHead, rest));
  if (rest.empty()) { // the payloads fit: they went to the region
    Message fromShared;
    require(readShared(sharedHead, fromShared, shared) && deterministic(fromShared) == once);
    Message none; // the same frame without the region
    require(!readShared(sharedHead, none, {}) || payloads.empty());
  }
  // The input as the tail of a shared-payload frame after an empty message.
  Message tail;
  if (body.size() <= 32768)
    (void)readShared(msl::service::encodeLength(msl::service::kSplitFrameFlag | msl::service::kSharedPayloadsFlag) +
                         body,
                     tail, shared);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4)
    return 0;
  const char *bytes = reinterpret_cast<const char *>(data);
  uint32_t n = msl::service::decodeLength(bytes);
  require(msl::service::encodeLength(n) == std::string(bytes, 4));
  std::string body(bytes + 4, size - 4);
  // msld refuses a frame longer than what follows or than its limit; the
  // body it would parse is the announced bytes.
  if (n < body.size())
    body.resize(n);
  const bool pipe = size % 4 == 0; // some of the inputs also through a pipe
  roundTrip<msl::internal::WorkerHello>(body, pipe);
  roundTrip<msl::internal::WorkerResponse>(body, pipe);
  roundTrip<msl::internal::WorkerRequest>(body, pipe);
  roundTrip<msl::internal::ExecWorkerResponse>(body, pipe);
  roundTrip<msl::internal::ExecWorkerRequest>(body, pipe);
  if (pipe) {
    splitRoundTrip<msl::internal::ExecWorkerRequest>(body, msl::service::execRequestPayloads);
    splitRoundTrip<msl::internal::ExecWorkerResponse>(body, msl::service::execResponsePayloads);
  }
  return 0;
}
