// Integration tests through the real msld (see DaemonFixture.h): its /metrics
// endpoint (service/Metrics.cpp, cpp-httplib) as Prometheus sees it: plain
// HTTP, its bounds, and HTTPS with and without client certificates
// (--metrics-tls-*; certificates made at run time by make-test-certs.sh).
#include "DaemonFixture.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sys/wait.h>

namespace msl::test {
namespace {

class MetricsTest : public DaemonTest {};


bool hasLine(const std::string &text, const std::string &prefix) {
  return text.rfind(prefix, 0) == 0 || text.find("\n" + prefix) != std::string::npos;
}

TEST_F(MetricsTest, ScrapePassesPromtoolAndCountsACompile) {
  std::string promtool;
  if (runShell("command -v promtool", promtool) != 0)
    GTEST_SKIP() << "promtool not found (Debian package 'prometheus'; scripts/setup.sh installs it)";

  Daemon &d = startDaemon();
  msl::v1::CompileResponse response;
  ASSERT_TRUE(compile(d, compileRequest(readSourceFile("examples/saxpy.metal")), response).ok());
  ASSERT_TRUE(response.success()) << diagnosticsText(response);

  std::string scrape = d.scrapeMetrics();
  ASSERT_FALSE(scrape.empty()) << "GET /metrics failed";
  std::string file = (dir_ / "metrics.txt").string();
  std::ofstream(file, std::ios::binary) << scrape;

  std::string output;
  int rc = runShell("promtool check metrics < '" + file + "'", output);
  EXPECT_EQ(rc, 0) << "promtool check metrics:\n" << output << "\nscrape:\n" << scrape;
  EXPECT_EQ(output, "") << "promtool check metrics reported problems:\n" << output;

  // Every family, the new ones included, is there from start-up.
  for (const char *family :
       {"msld_requests_total", "msld_compile_duration_seconds", "msld_action_cache_hits_total",
        "msld_action_cache_misses_total", "msld_cas_bytes", "msld_cas_blobs",
        "msld_cas_corrupt_blobs_total", "msld_worker_crashes_total", "msld_worker_timeouts_total",
        "msld_worker_memory_limit_kills_total", "msld_worker_identity_mismatches_total",
        "msld_compiles_in_flight", "msld_compile_queue_depth", "msld_compiles_deduplicated_total",
        "msld_compiles_cancelled_total", "msld_requests_rejected_total", "msld_worker_sandboxed",
        "msld_cache_scrubs_total", "msld_cache_scrub_blobs_checked_total", "msld_cache_scrub_bytes_checked_total",
        "msld_cache_scrub_entries_checked_total", "msld_cache_scrub_dropped_total", "msld_cache_scrub_running"})
    EXPECT_TRUE(hasLine(scrape, std::string("# TYPE ") + family + " ")) << family << " missing:\n"
                                                                         << scrape;
  for (const char *reason : {"queue_full", "too_large", "invalid_argument"})
    EXPECT_TRUE(hasLine(scrape, std::string("msld_requests_rejected_total{reason=\"") + reason +
                                    "\"} 0"))
        << reason;
  EXPECT_TRUE(hasLine(scrape, "msld_compile_queue_depth 0"));
  EXPECT_TRUE(hasLine(scrape, "msld_compiles_cancelled_total 0"));

  // prometheus-cpp renders labels sorted by name.
  EXPECT_EQ(d.metric("msld_requests_total{code=\"OK\",method=\"Compile\"}"), 1);
  EXPECT_EQ(d.metric("msld_action_cache_misses_total"), 1);
  EXPECT_EQ(d.metric("msld_compile_duration_seconds_count{cache=\"miss\"}"), 1);
  EXPECT_EQ(d.metric("msld_compile_duration_seconds_bucket{cache=\"miss\",le=\"+Inf\"}"), 1);
  EXPECT_EQ(d.metric("msld_compiles_in_flight"), 0);
  EXPECT_GT(d.metric("msld_cas_blobs"), 0); // read from the store at scrape time
  EXPECT_GT(d.metric("msld_cas_bytes"), 0);
}

// msld_worker_sandboxed{pool} says what msld's log line and ready file say:
// 1 for a pool whose workers run in the sandbox (where the machine allows
// it), 0 with --sandbox off (CUDA workers never are).
TEST_F(MetricsTest, WorkerSandboxedGaugeMatchesTheSandboxState) {
  auto readySandbox = [&] {
    std::ifstream in(dir_ / "data.ready.json");
    auto j = nlohmann::json::parse(in, nullptr, false);
    return j.is_object() && j.contains("sandbox") ? j["sandbox"] : nlohmann::json::object();
  };
  // A pool msld does not run (no execution workers, no GPU) has no series.
  auto gauge = [](Daemon &d, const char *pool) {
    return d.metric(std::string("msld_worker_sandboxed{pool=\"") + pool + "\"}");
  };
  Daemon &d = startDaemon({"--cuda", "off"});
  nlohmann::json state = readySandbox();
  ASSERT_TRUE(state.contains("compile") && state.contains("execution")) << state.dump();
  bool sandboxed = state["compile"].get<bool>();
  EXPECT_EQ(gauge(d, "compile"), sandboxed ? 1 : 0) << state.dump();
  EXPECT_NE(d.log().find(sandboxed ? "compile workers sandboxed" : "compile workers not sandboxed"),
            std::string::npos)
      << d.log();
  if (d.log().find("execution workers none") != std::string::npos)
    EXPECT_TRUE(std::isnan(gauge(d, "execution")));
  else
    EXPECT_EQ(gauge(d, "execution"), state["execution"].get<bool>() ? 1 : 0) << state.dump();
  EXPECT_TRUE(std::isnan(gauge(d, "cuda"))); // --cuda off

  Daemon &off = startDaemon({"--cuda", "off", "--sandbox", "off"});
  state = readySandbox();
  EXPECT_FALSE(state.value("compile", true)) << state.dump();
  EXPECT_EQ(gauge(off, "compile"), 0);
  if (off.log().find("execution workers none") == std::string::npos)
    EXPECT_EQ(gauge(off, "execution"), 0);
  EXPECT_NE(off.scrapeMetrics().find("# TYPE msld_worker_sandboxed gauge"), std::string::npos);
}

// --metrics-listen with port 0 picks a free port, which msld reports (the
// fixture scrapes the port from --ready-file), and the path is /metrics.
TEST_F(MetricsTest, PortZeroIsReportedAndServed) {
  Daemon &d = startDaemon();
  std::string scrape = d.scrapeMetrics();
  EXPECT_TRUE(hasLine(scrape, "# TYPE msld_requests_total counter")) << scrape;
}

// A TCP connection to 127.0.0.1:port (-1 if it fails), and raw I/O on it.
int connectTo(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0) {
    ::close(fd);
    fd = -1;
  }
  return fd;
}

// Sends `bytes` until done or the peer stops reading (MSG_NOSIGNAL: EPIPE, not SIGPIPE).
size_t sendAll(int fd, const std::string &bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0)
      break;
    sent += size_t(n);
  }
  return sent;
}

// Everything the peer sends until it closes (or 20 s pass).
std::string readAll(int fd) {
  timeval tv{20, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;)
    out.append(buf, size_t(n));
  return out;
}

// Only GET /metrics is served; a request past the endpoint's bound (16 KiB)
// is answered 400 without being buffered whole; connections that send
// nothing hold the endpoint's two threads only until its 5 s I/O timeout.
TEST_F(MetricsTest, OnlyGetMetricsIsServedAndRequestsAreBounded) {
  Daemon &d = startDaemon();
  httplib::Client http("127.0.0.1", d.metricsPort());
  http.set_read_timeout(20, 0);
  auto res = http.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(res->get_header_value("Connection"), "close");
  EXPECT_TRUE(hasLine(res->body, "# TYPE msld_requests_total counter")) << res->body;
  for (const char *path : {"/", "/metrics/", "/other"}) {
    auto other = http.Get(path);
    ASSERT_TRUE(other) << path;
    EXPECT_EQ(other->status, 404) << path;
  }
  auto post = http.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 404);

  // A 64 MiB header line: msld stops reading at its bound and answers 400.
  int fd = connectTo(d.metricsPort());
  ASSERT_GE(fd, 0);
  size_t sent = sendAll(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(64 << 20, 'a'));
  EXPECT_LT(sent, size_t(64) << 20);
  EXPECT_EQ(readAll(fd).rfind("HTTP/1.1 400 ", 0), 0u);
  ::close(fd);

  // Two connections that send nothing take both threads; a scrape behind
  // them is served once they time out, not never.
  int idle[2] = {connectTo(d.metricsPort()), connectTo(d.metricsPort())};
  auto t0 = std::chrono::steady_clock::now();
  auto behind = http.Get("/metrics"); // waits up to 20 s
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(behind) << httplib::to_string(behind.error()) << " after " << seconds << " s";
  EXPECT_EQ(behind->status, 200);
  EXPECT_TRUE(hasLine(behind->body, "# TYPE msld_requests_total counter"));
  EXPECT_LT(seconds, 12.0);
  for (int i : idle) {
    EXPECT_EQ(readAll(i), ""); // closed by msld without an answer
    ::close(i);
  }
  EXPECT_TRUE(d.running());
}

class MetricsTlsTest : public DaemonTest {
protected:
  void SetUp() override {
    DaemonTest::SetUp();
    // httplib's TLS client writes with OpenSSL (write(2)): a request to a
    // server that refused the handshake must fail, not kill the test.
    std::signal(SIGPIPE, SIG_IGN);
    certs_ = (dir_ / "certs").string();
    std::string output;
    if (runShell("command -v openssl", output) != 0)
      GTEST_SKIP() << "the openssl command is missing (Debian package 'openssl'; scripts/setup.sh installs it)";
    std::string script = sourceDir() + "/tests/integration/make-test-certs.sh";
    ASSERT_EQ(runShell("sh '" + script + "' '" + certs_ + "'", output), 0) << output;
  }
  std::string cert(const std::string &name) const { return certs_ + "/" + name; }

  std::vector<std::string> tlsArgs() const {
    return {"--metrics-tls-cert", cert("server.pem"), "--metrics-tls-key", cert("server.key")};
  }

  // GET `path` over HTTPS, verifying msld against `ca`, with the client
  // certificate `clientCert` ("client": client.pem/client.key) when given.
  httplib::Result httpsGet(const std::string &path, const std::string &ca = "ca.pem",
                           const std::string &clientCert = "") {
    std::unique_ptr<httplib::SSLClient> https =
        clientCert.empty() ? std::make_unique<httplib::SSLClient>("127.0.0.1", daemon_->metricsPort())
                           : std::make_unique<httplib::SSLClient>("127.0.0.1", daemon_->metricsPort(),
                                                                  cert(clientCert + ".pem"),
                                                                  cert(clientCert + ".key"));
    https->set_ca_cert_path(cert(ca));
    https->enable_server_certificate_verification(true);
    https->set_connection_timeout(10, 0);
    https->set_read_timeout(20, 0);
    return https->Get(path);
  }

  std::string certs_;
};

TEST_F(MetricsTlsTest, HttpsScrapeSucceedsAndPlainHttpFails) {
  Daemon &d = startDaemon(tlsArgs());
  ASSERT_TRUE(d.running());
  EXPECT_NE(d.log().find("metrics (HTTPS) on port " + std::to_string(d.metricsPort())), std::string::npos)
      << d.log();
  auto res = httpsGet("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_TRUE(hasLine(res->body, "# TYPE msld_requests_total counter")) << res->body;
  EXPECT_TRUE(hasLine(res->body, "msld_compile_queue_depth 0")) << res->body;
  auto other = httpsGet("/other");
  ASSERT_TRUE(other) << httplib::to_string(other.error());
  EXPECT_EQ(other->status, 404);

  // Plain HTTP to the HTTPS port: no answer (the handshake fails, msld closes).
  httplib::Client http("127.0.0.1", d.metricsPort());
  http.set_read_timeout(20, 0);
  auto plain = http.Get("/metrics");
  EXPECT_FALSE(plain) << plain->status << "\n" << plain->body;
  EXPECT_EQ(d.scrapeMetrics(), "");
  // A CA that did not sign msld's certificate: the client refuses it.
  EXPECT_FALSE(httpsGet("/metrics", "other-ca.pem"));
  // Still serving.
  auto again = httpsGet("/metrics");
  ASSERT_TRUE(again) << httplib::to_string(again.error());
  EXPECT_EQ(again->status, 200);
}

TEST_F(MetricsTlsTest, ClientCaRequiresAValidClientCertificate) {
  auto args = tlsArgs();
  args.insert(args.end(), {"--metrics-tls-client-ca", cert("ca.pem")});
  Daemon &d = startDaemon(args);
  ASSERT_TRUE(d.running());
  EXPECT_NE(d.log().find("metrics (HTTPS, client certificates required)"), std::string::npos) << d.log();
  EXPECT_FALSE(httpsGet("/metrics"));                             // no client certificate
  EXPECT_FALSE(httpsGet("/metrics", "ca.pem", "other-client"));   // one of another CA
  auto res = httpsGet("/metrics", "ca.pem", "client");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(hasLine(res->body, "# TYPE msld_requests_total counter")) << res->body;
}

TEST_F(MetricsTlsTest, BadFilesRefuseToStartNamingTheFile) {
  std::string junk = (dir_ / "junk.pem").string();
  std::ofstream(junk) << "not a certificate\n";
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--metrics-tls-cert", cert("server.pem"), "--metrics-tls-key", cert("client.key")},
       "msld: --metrics-tls-key " + cert("client.key") + " is not the key of --metrics-tls-cert " +
           cert("server.pem")},
      {{"--metrics-tls-cert", junk, "--metrics-tls-key", cert("server.key")},
       "msld: --metrics-tls-cert " + junk + ": no PEM certificate in it"},
      {{"--metrics-tls-cert", cert("server.pem"), "--metrics-tls-key", junk},
       "msld: --metrics-tls-key " + junk + ": no PEM private key in it"},
      {{"--metrics-tls-cert", cert("server.pem"), "--metrics-tls-key", cert("server.key"), "--metrics-tls-client-ca",
        junk},
       "msld: --metrics-tls-client-ca " + junk + ": no PEM certificate in it"},
      {{"--metrics-tls-cert", cert("server.pem")}, "needs both --metrics-tls-cert and --metrics-tls-key"},
      {{"--metrics-tls-client-ca", cert("ca.pem")},
       "msld: --metrics-tls-client-ca needs --metrics-tls-cert and --metrics-tls-key"},
      {{"--metrics-tls-cert", (dir_ / "missing.pem").string(), "--metrics-tls-key", cert("server.key")},
       "--metrics-tls-cert: File does not exist: " + (dir_ / "missing.pem").string()},
  };
  for (const Case &c : cases) {
    Daemon d((dir_ / "data").string(), c.args);
    EXPECT_FALSE(d.start()) << c.message;
    EXPECT_NE(d.log().find(c.message), std::string::npos) << "want: " << c.message << "\nlog:\n" << d.log();
    std::filesystem::remove(d.logPath());
  }
}

} // namespace
} // namespace msl::test
