// Execute over msld's local socket without gRPC (service/LocalCalls.h)
// through the real msld: the same results as over gRPC, errors as statuses
// on a connection that serves on, hostile frames refused, tokens and roles
// as over gRPC, and a call whose client leaves or whose deadline passes
// stopped while msld serves on. Kernels run on $MSLD_TEST_DEVICE.
#include "DaemonFixture.h"
#include "DeviceRunner.h"
#include "KernelRequest.h"
#include "msl/client/Client.h"
#include "msl/client/SharedRegion.h"
#include "msl/v1/local.pb.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <random>

namespace msl::test {
namespace {

using grpc::StatusCode;
using Clock = std::chrono::steady_clock;

const char *kScale = R"(#include <metal_stdlib>
using namespace metal;
kernel void scale(device const float *x [[buffer(0)]], device float *y [[buffer(1)]],
                  constant float &a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  y[i] = a * x[i] + 1.0f;
}
)";

KernelRequest scaleRequest(const std::vector<float> &x, float a) {
  KernelRequest k(kScale, "scale");
  k.bindNew(0, x);
  k.bindNew(1, std::vector<float>(x.size(), 0.0f));
  k.bytes(2, a);
  k.threads(uint32_t(x.size()));
  k.perThreadgroup(64);
  return k;
}

KernelRequest endlessRequest() {
  KernelRequest k(kSpinForeverSource, "spin");
  k.bindNew(0, std::vector<uint32_t>(1, 0));
  k.threads(1);
  k.perThreadgroup(1);
  return k;
}

/// A raw connection to the local socket, for what msl::client never sends.
class RawConnection {
public:
  explicit RawConnection(const std::string &path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.data(), path.size());
    if (::connect(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0)
      ADD_FAILURE() << "connect " << path << ": " << std::strerror(errno);
  }
  ~RawConnection() { ::close(fd_); }
  void send(const std::string &bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL), ssize_t(bytes.size()));
  }
  /// What msld sent within `wait`, up to `most` bytes (fewer when it closed).
  std::string receive(size_t most, std::chrono::milliseconds wait = std::chrono::seconds(30)) {
    std::string out;
    const auto deadline = Clock::now() + wait;
    while (out.size() < most && Clock::now() < deadline) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0)
        continue;
      char buffer[4096];
      ssize_t n = ::recv(fd_, buffer, std::min(sizeof buffer, most - out.size()), 0);
      if (n <= 0)
        break;
      out.append(buffer, size_t(n));
    }
    return out;
  }
  /// Whether msld closed the connection within `wait`.
  bool closedWithin(std::chrono::milliseconds wait) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, int(wait.count())) <= 0)
      return false;
    char c;
    return ::recv(fd_, &c, 1, MSG_DONTWAIT) == 0;
  }
  /// Says hello (version `version`) and returns msld's line.
  std::string hello(uint64_t version = 0) {
    char bytes[16] = {'M', 'S', 'L', 'D', 'E', 'X', 'E', '1'};
    for (int i = 0; i < 8; ++i)
      bytes[8 + i] = char(uint8_t(version >> (8 * i)));
    send(std::string(bytes, sizeof bytes));
    std::string line;
    while (line.empty() || line.back() != '\n') {
      std::string c = receive(1);
      if (c.empty())
        break;
      line += c;
    }
    return line;
  }
  static std::string frame(const std::string &body, uint32_t length) {
    std::string out(4, '\0');
    for (int i = 0; i < 4; ++i)
      out[size_t(i)] = char(length >> (8 * i));
    return out + body;
  }
  /// One reply frame.
  msl::v1::LocalExecuteReply reply() {
    std::string header = receive(4);
    msl::v1::LocalExecuteReply r;
    if (header.size() != 4) {
      ADD_FAILURE() << "no reply header";
      return r;
    }
    uint32_t length = 0;
    for (int i = 3; i >= 0; --i)
      length = length << 8 | uint8_t(header[size_t(i)]);
    std::string body = receive(length);
    EXPECT_TRUE(r.ParseFromString(body)) << "a reply of " << body.size() << " bytes";
    return r;
  }

private:
  int fd_ = -1;
};

class LocalCallsTest : public DeviceTest {
protected:
  void SetUp() override {
    DeviceTest::SetUp();
    socket_ = (dir_ / "local.sock").string();
    connect({"--shared-regions-socket", socket_});
    if (IsSkipped())
      return;
    msl::client::ClientOptions options = client_->options();
    options.local_socket = socket_;
    localClient_ = std::make_unique<msl::client::Client>(options);
    local_ = std::make_unique<DeviceRunner>(*localClient_);
  }

  void expectLocalStatus(const KernelRequest &k, StatusCode code, const std::string &needle) {
    auto r = local_->execute(k.req);
    ASSERT_FALSE(r.ok()) << "expected " << needle;
    EXPECT_EQ(r.status().error_code(), code) << r.status().error_message();
    EXPECT_NE(r.status().error_message().find(needle), std::string::npos) << r.status().error_message();
  }
  void expectServesOn() {
    std::vector<float> x{1, 2, 3};
    auto r = local_->execute(scaleRequest(x, 2).req);
    ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status()) << "\nmsld's log:\n" << daemon_->log();
    ASSERT_EQ(r->buffers_size(), 1);
    EXPECT_EQ(bytesOf(std::vector<float>{3, 5, 7}), r->buffers(0).inline_data());
  }

  std::string socket_;
  std::unique_ptr<msl::client::Client> localClient_;
  std::unique_ptr<DeviceRunner> local_;
};

TEST_F(LocalCallsTest, AnExecuteGetsTheSameAnswerAsOverGrpc) {
  std::mt19937 rng(77);
  std::uniform_real_distribution<float> dist(-8, 8);
  std::vector<float> x(1000);
  for (float &v : x)
    v = dist(rng);
  for (float a : {0.5f, -3.25f}) {
    SCOPED_TRACE(a);
    KernelRequest k = scaleRequest(x, a);
    auto overGrpc = runner_->execute(k.req);
    auto overLocal = local_->execute(k.req);
    ASSERT_TRUE(overGrpc.ok()) << msl::client::describeStatus(overGrpc.status());
    ASSERT_TRUE(overLocal.ok()) << msl::client::describeStatus(overLocal.status()) << "\n" << daemon_->log();
    EXPECT_TRUE(overLocal->compile_cache_hit()); // the gRPC call compiled it
    EXPECT_EQ(overLocal->device(), overGrpc->device());
    ASSERT_EQ(overLocal->buffers_size(), 1);
    ASSERT_EQ(overGrpc->buffers_size(), 1);
    EXPECT_EQ(overLocal->buffers(0).inline_data(), overGrpc->buffers(0).inline_data());
    ASSERT_EQ(overLocal->buffers(0).inline_data().size(), x.size() * 4);
    const float *y = reinterpret_cast<const float *>(overLocal->buffers(0).inline_data().data());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_TRUE(y[i] == std::fma(a, x[i], 1.0f) || y[i] == a * x[i] + 1.0f) << i << ": " << y[i];
    EXPECT_EQ(overLocal->dispatch_time_ns_size(), 1);
  }
  // Clients that poll for their answer (ClientOptions::busy_poll), over gRPC
  // (a completion queue) and the local socket: the same bytes.
  for (bool overLocal : {false, true}) {
    SCOPED_TRACE(overLocal ? "local, busy_poll" : "gRPC, busy_poll");
    msl::client::ClientOptions options = localClient_->options();
    if (!overLocal)
      options.local_socket.clear();
    options.busy_poll = std::chrono::milliseconds(2);
    msl::client::Client polling(options);
    KernelRequest k = scaleRequest(x, 0.5f);
    auto expected = runner_->execute(k.req);
    auto got = DeviceRunner(polling).execute(k.req);
    ASSERT_TRUE(expected.ok() && got.ok()) << msl::client::describeStatus(got.status());
    ASSERT_EQ(got->buffers_size(), 1);
    EXPECT_EQ(got->buffers(0).inline_data(), expected->buffers(0).inline_data());
  }
  // Buffers in a shared region from the same socket, written back in place.
  auto region = msl::client::SharedRegion::open(socket_, 8192);
  ASSERT_TRUE(region.ok()) << msl::client::describeStatus(region.status());
  std::memcpy((*region)->data(), x.data(), 4000);
  KernelRequest k(kScale, "scale");
  *k.req.add_buffers()->mutable_shared() = (*region)->range(0, 4000);
  *k.req.add_buffers()->mutable_shared() = (*region)->range(4096, 4000);
  k.bind(0, 0);
  k.bind(1, 1);
  k.bytes(2, 2.0f);
  k.threads(1000);
  k.perThreadgroup(64);
  auto r = local_->execute(k.req);
  ASSERT_TRUE(r.ok()) << msl::client::describeStatus(r.status());
  ASSERT_EQ(r->buffers_size(), 1);
  EXPECT_TRUE(r->buffers(0).in_shared_region());
  const float *y = reinterpret_cast<const float *>((*region)->data() + 4096);
  for (size_t i = 0; i < 1000; ++i)
    ASSERT_TRUE(y[i] == std::fma(2.0f, x[i], 1.0f) || y[i] == 2.0f * x[i] + 1.0f) << i;
  // Logged and counted as an Execute, saying how it came.
  EXPECT_NE(daemon_->log().find("transport=local"), std::string::npos) << daemon_->log();
  EXPECT_EQ(daemon_->metric("msld_requests_total{code=\"OK\",method=\"Execute\"}"), 9);
}

TEST_F(LocalCallsTest, ErrorsComeBackAsStatusesAndTheConnectionServesOn) {
  KernelRequest unknown = scaleRequest({1, 2}, 1);
  unknown.req.set_kernel("nope");
  expectLocalStatus(unknown, StatusCode::INVALID_ARGUMENT, "unknown kernel 'nope': the source's kernels are scale");
  if (!local_->recording()) { // (a compile that fails cannot be recorded)
    KernelRequest broken(R"(kernel void broken( {)", "broken");
    broken.threads(1);
    broken.perThreadgroup(1);
    expectLocalStatus(broken, StatusCode::INVALID_ARGUMENT, "does not compile");
  }
  KernelRequest unbound = scaleRequest({1, 2}, 1);
  unbound.req.clear_bytes();
  expectLocalStatus(unbound, StatusCode::INVALID_ARGUMENT, "[[buffer(2)]] has no binding");
  expectServesOn();
}

TEST_F(LocalCallsTest, HostileFramesAreRefusedAndMsldServesOn) {
  {
    RawConnection c(socket_);
    EXPECT_EQ(c.hello(7), "ERR unknown local call protocol version 7 (msld speaks 0)\n");
    EXPECT_TRUE(c.closedWithin(std::chrono::seconds(5)));
  }
  {
    // Not a LocalExecuteRequest: INVALID_ARGUMENT, and the connection goes on.
    RawConnection c(socket_);
    ASSERT_EQ(c.hello(), "OK\n");
    const std::string garbage = "\xff\xff\xff\xff not a message";
    c.send(RawConnection::frame(garbage, uint32_t(garbage.size())));
    msl::v1::LocalExecuteReply reply = c.reply();
    EXPECT_EQ(reply.code(), int(StatusCode::INVALID_ARGUMENT));
    EXPECT_NE(reply.message().find("not a valid msl.v1.LocalExecuteRequest"), std::string::npos) << reply.message();
    // A well-formed request that names no device msld has: its status.
    msl::v1::LocalExecuteRequest request;
    *request.mutable_request() = scaleRequest({1}, 1).req;
    request.mutable_request()->set_device("tpu:3");
    std::string body = request.SerializeAsString();
    c.send(RawConnection::frame(body, uint32_t(body.size())));
    reply = c.reply();
    EXPECT_EQ(reply.code(), int(StatusCode::INVALID_ARGUMENT));
    EXPECT_NE(reply.message().find("unknown device 'tpu:3'"), std::string::npos) << reply.message();
    // A frame above msld's limit: refused, and the connection closed.
    c.send(RawConnection::frame("", 0xffffffffu));
    reply = c.reply();
    EXPECT_EQ(reply.code(), int(StatusCode::RESOURCE_EXHAUSTED));
    EXPECT_NE(reply.message().find("4294967295 bytes, more than msld takes"), std::string::npos) << reply.message();
    EXPECT_TRUE(c.closedWithin(std::chrono::seconds(5)));
  }
  {
    // Half a frame, then nothing: closed once the frame's time is up (2 s).
    RawConnection c(socket_);
    ASSERT_EQ(c.hello(), "OK\n");
    c.send(RawConnection::frame("abc", 100));
    EXPECT_TRUE(c.closedWithin(std::chrono::seconds(10)));
  }
  expectServesOn();
}

TEST_F(LocalCallsTest, OneUserHoldsAtMost16ConnectionsAndFramesStayInMsldsBounds) {
  {
    std::vector<std::unique_ptr<RawConnection>> held;
    for (int i = 0; i < 16; ++i) {
      held.push_back(std::make_unique<RawConnection>(socket_));
      ASSERT_EQ(held.back()->hello(), "OK\n") << i;
    }
    RawConnection seventeenth(socket_);
    EXPECT_EQ(seventeenth.hello(), "ERR this user holds 16 local connections already, the most one may\n");
    // Closed ones stop counting at once, before msld's threads for them
    // have noticed: a client that closes and reconnects is not refused.
    held.clear();
    for (int i = 0; i < 16; ++i) {
      held.push_back(std::make_unique<RawConnection>(socket_));
      ASSERT_EQ(held.back()->hello(), "OK\n") << i;
    }
  }
  // Every connection above is closed: a client gets one again.
  expectServesOn();

  // A request above --max-receive-bytes: the client hears why, not just
  // that the connection closed.
  connect({"--shared-regions-socket", socket_, "--max-receive-bytes", "65536"});
  msl::client::ClientOptions options = client_->options();
  options.local_socket = socket_;
  {
    msl::client::Client local(options);
    auto r = DeviceRunner(local).execute(scaleRequest(std::vector<float>(32768, 1.0f), 2).req);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().error_code(), StatusCode::RESOURCE_EXHAUSTED) << r.status().error_message();
    EXPECT_NE(r.status().error_message().find("more than msld takes (65536, --max-receive-bytes)"), std::string::npos)
        << r.status().error_message();
  }
  // Frames held at once stay under --grpc-memory-mb (a frame and its parse):
  // a 9 MiB request against 16 MiB is refused, a small one runs.
  connect({"--shared-regions-socket", socket_, "--grpc-memory-mb", "16"});
  options = client_->options();
  options.local_socket = socket_;
  msl::client::Client local(options);
  DeviceRunner runner(local);
  auto r = runner.execute(scaleRequest(std::vector<float>(9 << 18, 1.0f), 2).req);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().error_code(), StatusCode::RESOURCE_EXHAUSTED) << r.status().error_message();
  EXPECT_NE(r.status().error_message().find("bytes of local requests already"), std::string::npos)
      << r.status().error_message();
  auto small = runner.execute(scaleRequest({1, 2}, 2).req);
  EXPECT_TRUE(small.ok()) << msl::client::describeStatus(small.status());
}

TEST_F(LocalCallsTest, ACallPastItsDeadlineOrWhoseClientLeftIsStoppedAndMsldServesOn) {
  {
    // msld's own deadline (timeout_ms): DEADLINE_EXCEEDED, from msld.
    RawConnection c(socket_);
    ASSERT_EQ(c.hello(), "OK\n");
    msl::v1::LocalExecuteRequest request;
    *request.mutable_request() = endlessRequest().req;
    // As DeviceRunner::execute would: where compiles are recorded for a GPU
    // the kernel runs on the cpu.
    local_->record(request.request());
    request.mutable_request()->set_device(local_->recording() ? "cpu" : local_->device());
    request.set_timeout_ms(300);
    std::string body = request.SerializeAsString();
    const auto start = Clock::now();
    c.send(RawConnection::frame(body, uint32_t(body.size())));
    msl::v1::LocalExecuteReply reply = c.reply();
    EXPECT_EQ(reply.code(), int(StatusCode::DEADLINE_EXCEEDED)) << reply.message();
    EXPECT_NE(reply.message().find("ran past its timeout_ms (300 ms)"), std::string::npos) << reply.message();
    // Ended at its 300 ms, not by the kernel's own 10 s limit.
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(8));
  }
  expectServesOn();
  {
    // The client's deadline: it closes the connection, which stops the call.
    msl::client::ClientOptions options = localClient_->options();
    options.call_deadline = std::chrono::milliseconds(400);
    msl::client::Client impatient(options);
    DeviceRunner runner(impatient);
    const auto start = Clock::now();
    auto r = runner.execute(endlessRequest().req);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().error_code(), StatusCode::DEADLINE_EXCEEDED) << r.status().error_message();
    EXPECT_LT(Clock::now() - start, std::chrono::seconds(8)); // its 400 ms, not the kernel's 10 s
  }
  expectServesOn();
  // Both calls ended as such in msld (its log says so).
  const std::string log = daemon_->log();
  EXPECT_NE(log.find("code=DEADLINE_EXCEEDED"), std::string::npos) << log;
  EXPECT_NE(log.find("code=CANCELLED"), std::string::npos) << log;
}

using LocalCallsAuthTest = DaemonTest;

TEST_F(LocalCallsAuthTest, TokensAndRolesApplyAsOverGrpc) {
  REQUIRE_EXEC_WORKER();
  const std::string tokens = (dir_ / "tokens").string(), socket = (dir_ / "local.sock").string();
  std::ofstream(tokens) << "read-token-0123456789 read\nexec-token-0123456789 execute\n";
  startDaemon({"--auth-tokens", tokens, "--shared-regions-socket", socket});
  auto run = [&](const std::string &token) {
    msl::client::ClientOptions options;
    options.address = daemon_->address();
    options.local_socket = socket;
    options.auth_token = token;
    msl::client::Client client(options);
    return client.execute(scaleRequest({1, 2}, 2).req);
  };
  auto missing = run("");
  EXPECT_EQ(missing.status().error_code(), StatusCode::UNAUTHENTICATED) << missing.status().error_message();
  EXPECT_NE(missing.status().error_message().find("missing token"), std::string::npos)
      << missing.status().error_message();
  auto wrong = run("wrong-0123456789abcdef");
  EXPECT_EQ(wrong.status().error_code(), StatusCode::UNAUTHENTICATED) << wrong.status().error_message();
  auto readOnly = run("read-token-0123456789");
  EXPECT_EQ(readOnly.status().error_code(), StatusCode::PERMISSION_DENIED) << readOnly.status().error_message();
  EXPECT_NE(readOnly.status().error_message().find("lacks role 'execute' needed by msl.v1.Executor/Execute"),
            std::string::npos)
      << readOnly.status().error_message();
  auto ok = run("exec-token-0123456789");
  ASSERT_TRUE(ok.ok()) << msl::client::describeStatus(ok.status()) << "\n" << daemon_->log();
  ASSERT_EQ(ok->buffers_size(), 1);
  EXPECT_EQ(ok->buffers(0).inline_data(), bytesOf(std::vector<float>{3, 5}));
  EXPECT_GE(daemon_->metric("msld_auth_failures_total{reason=\"missing_token\"}"), 1);
}

} // namespace
} // namespace msl::test
