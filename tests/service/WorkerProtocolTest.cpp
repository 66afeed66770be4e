// The execution workers' split frames (service/WorkerProtocol.h): buffers
// travel raw after the rest of the message and land in the same fields;
// bounds and malformed frames are refused.
#include "WorkerProtocol.h"
#include "msl/internal/exec_worker.pb.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

namespace msl::service {
namespace {

using msl::internal::ExecWorkerRequest;
using msl::internal::ExecWorkerResponse;

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0)
        ::close(fd);
  }
  void closeWriter() {
    ::close(fds[1]);
    fds[1] = -1;
  }
};

ExecWorkerRequest sampleRequest() {
  ExecWorkerRequest r;
  r.set_module("bitcode");
  r.set_symbol("copy");
  auto *in = r.add_buffers();
  in->set_data(std::string(3 << 20, 'x')); // more than a pipe holds
  in->set_length(3 << 20);
  r.add_buffers()->set_length(16); // zeros: an empty payload
  auto *t = r.add_textures();
  t->set_width(2);
  t->set_data("texels");
  r.add_threadgroups(1);
  return r;
}

TEST(WorkerProtocolTest, SplitRequestRoundTripsAndLeavesTheSenderWhole) {
  const ExecWorkerRequest original = sampleRequest();
  ExecWorkerRequest sent = original;
  Pipe p;
  std::thread writer([&] {
    EXPECT_TRUE(writeSplitMessage(p.fds[1], sent, execRequestPayloads));
    p.closeWriter();
  });
  ExecWorkerRequest got;
  bool split = false;
  EXPECT_TRUE(readAnyMessage(p.fds[0], got, execRequestPayloads, split));
  writer.join();
  EXPECT_TRUE(split);
  EXPECT_EQ(got.SerializeAsString(), original.SerializeAsString());
  EXPECT_EQ(sent.SerializeAsString(), original.SerializeAsString());
}

TEST(WorkerProtocolTest, SplitResponseRoundTrips) {
  ExecWorkerResponse r;
  r.add_buffers(std::string(1 << 20, 'y'));
  r.add_buffers("");
  r.add_textures("abc");
  r.add_dispatch_time_ns(5);
  Pipe p;
  std::thread writer([&] {
    EXPECT_TRUE(writeSplitMessage(p.fds[1], r, execResponsePayloads));
    p.closeWriter();
  });
  ExecWorkerResponse got;
  bool split = false;
  EXPECT_TRUE(readAnyMessage(p.fds[0], got, execResponsePayloads, split));
  writer.join();
  EXPECT_EQ(got.SerializeAsString(), r.SerializeAsString());
}

// The start note (the kernel's first dispatch starts) comes as a plain frame
// ahead of the answer, on a pipe that otherwise carries split frames; the
// reader tells it from the answer, which no error or result makes a note.
TEST(WorkerProtocolTest, TheStartNoteComesAheadOfTheAnswerAndIsToldFromIt) {
  ExecWorkerResponse answer;
  answer.add_buffers("abc");
  answer.add_dispatch_time_ns(5);
  ExecWorkerResponse failed;
  failed.set_error("kernel k reads 3 argument slots");
  Pipe p;
  std::thread writer([&] {
    EXPECT_TRUE(writeDispatchStartNote(p.fds[1]));
    EXPECT_TRUE(writeSplitMessage(p.fds[1], answer, execResponsePayloads));
    EXPECT_TRUE(writeSplitMessage(p.fds[1], failed, execResponsePayloads));
    p.closeWriter();
  });
  ExecWorkerResponse got;
  bool split = true;
  ASSERT_TRUE(readAnyMessage(p.fds[0], got, execResponsePayloads, split));
  EXPECT_FALSE(split);
  EXPECT_TRUE(isDispatchStartNote(got));
  EXPECT_EQ(got.buffers_size(), 0);
  EXPECT_TRUE(got.error().empty());
  ASSERT_TRUE(readAnyMessage(p.fds[0], got, execResponsePayloads, split));
  EXPECT_TRUE(split);
  EXPECT_FALSE(isDispatchStartNote(got));
  ASSERT_EQ(got.buffers_size(), 1);
  EXPECT_EQ(got.buffers(0), "abc");
  ASSERT_TRUE(readAnyMessage(p.fds[0], got, execResponsePayloads, split));
  EXPECT_FALSE(isDispatchStartNote(got));
  EXPECT_EQ(got.error(), failed.error());
  writer.join();
}

TEST(WorkerProtocolTest, PlainFramesStillReadAndSplitOnesAreRefusedByPlainReaders) {
  ExecWorkerRequest r = sampleRequest();
  r.mutable_buffers(0)->set_data("small");
  {
    Pipe p;
    ASSERT_TRUE(writeMessage(p.fds[1], r));
    p.closeWriter();
    ExecWorkerRequest got;
    bool split = true;
    EXPECT_TRUE(readAnyMessage(p.fds[0], got, execRequestPayloads, split));
    EXPECT_FALSE(split);
    EXPECT_EQ(got.SerializeAsString(), r.SerializeAsString());
  }
  {
    Pipe p;
    ASSERT_TRUE(writeSplitMessage(p.fds[1], r, execRequestPayloads));
    p.closeWriter();
    ExecWorkerRequest got;
    EXPECT_FALSE(readMessage(p.fds[0], got));
  }
}

// Writes raw bytes and reads them as a split request with `limit`.
bool readRaw(const std::string &bytes, uint32_t limit = kMaxWorkerMessageBytes) {
  Pipe p;
  EXPECT_EQ(::write(p.fds[1], bytes.data(), bytes.size()), ssize_t(bytes.size()));
  p.closeWriter();
  ExecWorkerRequest got;
  bool split = false;
  return readAnyMessage(p.fds[0], got, execRequestPayloads, split, limit);
}

std::string splitFrame(const ExecWorkerRequest &r) {
  ExecWorkerRequest copy = r;
  std::string head;
  std::vector<std::string *> payloads;
  EXPECT_TRUE(encodeSplitHead(copy, execRequestPayloads, head, payloads));
  for (const std::string *s : payloads)
    head += *s;
  return head;
}

TEST(WorkerProtocolTest, MalformedAndOversizedSplitFramesAreRefused) {
  ExecWorkerRequest r;
  r.add_buffers()->set_data("abcd");
  const std::string frame = splitFrame(r);
  EXPECT_TRUE(readRaw(frame));
  // Cut anywhere: refused.
  for (size_t n = 0; n < frame.size(); ++n)
    EXPECT_FALSE(readRaw(frame.substr(0, n))) << n;
  // The payload count must be the message's number of payload fields.
  ExecWorkerRequest meta;
  meta.add_buffers();
  std::string metaBytes = meta.SerializeAsString();
  std::string wrongCount = encodeLength(uint32_t(metaBytes.size()) | kSplitFrameFlag) + metaBytes +
                           encodeLength(2) + encodeLength(1) + encodeLength(1) + "ab";
  EXPECT_FALSE(readRaw(wrongCount));
  // Sizes past the limit are refused before anything is allocated for them.
  std::string huge = encodeLength(uint32_t(metaBytes.size()) | kSplitFrameFlag) + metaBytes + encodeLength(1) +
                     encodeLength(0x7fffffff);
  EXPECT_FALSE(readRaw(huge, 1 << 20));
  EXPECT_FALSE(readRaw(frame, uint32_t(frame.size() - 5))); // the whole frame counts
  EXPECT_TRUE(readRaw(frame, uint32_t(frame.size() - 4)));
}

// A payload region as msld makes one (a memfd), and the worker's mapping of
// it through the fd, as the worker maps `--payload-fd`.
struct Region {
  int fd = -1;
  SharedPayloads msld, worker;
  explicit Region(size_t bytes) {
    fd = ::memfd_create("test-payloads", MFD_CLOEXEC);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(::ftruncate(fd, off_t(bytes)), 0);
    void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_NE(p, MAP_FAILED);
    msld = {static_cast<char *>(p), bytes};
    EXPECT_TRUE(mapSharedPayloads(fd, worker));
    EXPECT_EQ(worker.size, bytes);
  }
  ~Region() {
    ::munmap(msld.data, msld.size);
    ::munmap(worker.data, worker.size);
    ::close(fd);
  }
};

TEST(WorkerProtocolTest, PayloadsThatFitTravelInTheSharedRegionNotThePipe) {
  const ExecWorkerRequest original = sampleRequest(); // 3 MiB of payloads
  Region region(4 << 20);
  ExecWorkerRequest sent = original;
  Pipe p;
  // A pipe holds 64 KiB: the write would block if the payloads went into it.
  EXPECT_TRUE(writeSplitMessage(p.fds[1], sent, execRequestPayloads, region.msld));
  p.closeWriter();
  EXPECT_EQ(sent.SerializeAsString(), original.SerializeAsString());
  EXPECT_EQ(std::string(region.worker.data, 3 << 20), original.buffers(0).data());
  ExecWorkerRequest got;
  bool split = false;
  EXPECT_TRUE(readAnyMessage(p.fds[0], got, execRequestPayloads, split, kMaxWorkerMessageBytes, region.worker));
  EXPECT_TRUE(split);
  EXPECT_EQ(got.SerializeAsString(), original.SerializeAsString());
}

TEST(WorkerProtocolTest, PayloadsLargerThanTheSharedRegionGoThroughThePipe) {
  const ExecWorkerRequest original = sampleRequest();
  Region region(1 << 20);
  ExecWorkerRequest sent = original;
  Pipe p;
  std::thread writer([&] {
    EXPECT_TRUE(writeSplitMessage(p.fds[1], sent, execRequestPayloads, region.msld));
    p.closeWriter();
  });
  ExecWorkerRequest got;
  bool split = false;
  // Read with the region: the frame does not say its payloads are there.
  EXPECT_TRUE(readAnyMessage(p.fds[0], got, execRequestPayloads, split, kMaxWorkerMessageBytes, region.worker));
  writer.join();
  EXPECT_EQ(got.SerializeAsString(), original.SerializeAsString());
  EXPECT_EQ(region.worker.data[0], '\0'); // nothing was put there
}

TEST(WorkerProtocolTest, SharedPayloadFramesNeedTheRegionAndStayInsideIt) {
  ExecWorkerRequest r;
  r.add_buffers()->set_data("abcd");
  std::vector<std::string *> payloads;
  std::string head;
  ASSERT_TRUE(encodeSplitHead(r, execRequestPayloads, head, payloads, true));
  // Without a region the frame is refused.
  EXPECT_FALSE(readRaw(head));
  // With one, the payloads come from its start; past its end, refused.
  for (size_t bytes : {4096u, 4u, 3u}) {
    Region region(4096);
    std::memcpy(region.msld.data, "abcd", 4);
    SharedPayloads view{region.worker.data, bytes};
    Pipe p;
    ASSERT_EQ(::write(p.fds[1], head.data(), head.size()), ssize_t(head.size()));
    p.closeWriter();
    ExecWorkerRequest got;
    bool split = false;
    const bool ok = readAnyMessage(p.fds[0], got, execRequestPayloads, split, kMaxWorkerMessageBytes, view);
    EXPECT_EQ(ok, bytes >= 4) << bytes;
    if (ok)
      EXPECT_EQ(got.buffers(0).data(), "abcd");
  }
}

} // namespace
} // namespace msl::service
