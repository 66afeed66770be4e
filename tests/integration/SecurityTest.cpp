// Integration tests through the real msld (see DaemonFixture.h): TLS, mTLS,
// tokens and roles (README "Security"). Certificates are made at run time by
// make-test-certs.sh into the test's temporary directory.
#include "DaemonFixture.h"

#include "msl/client/Client.h"
#include "msl/v1/admin.grpc.pb.h"

#include <array>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <sys/wait.h>
#include <thread>

namespace msl::test {
namespace {

using msl::client::Client;
using msl::client::ClientOptions;

constexpr const char *kReadToken = "reader-0123456789abcdef";
constexpr const char *kCompileToken = "builder-0123456789abcdef";
constexpr const char *kLateToken = "latecomer-0123456789abcdef";
constexpr const char *kAdminToken = "operator-0123456789abcdef";


std::string shq(const std::string &s) { return "'" + s + "'"; }

class SecurityTest : public DaemonTest {
protected:
  void SetUp() override {
    DaemonTest::SetUp();
    certs_ = (dir_ / "certs").string();
    std::string output;
    std::string script = sourceDir() + "/tests/integration/make-test-certs.sh";
    if (runShell("command -v openssl", output) != 0)
      GTEST_SKIP() << "the openssl command is missing (Debian package 'openssl'; scripts/setup.sh installs it)";
    ASSERT_EQ(runShell("sh " + shq(script) + " " + shq(certs_), output), 0) << output;
  }
  std::string cert(const char *name) const { return certs_ + "/" + name; }

  std::vector<std::string> tlsArgs() const {
    return {"--tls-cert", cert("server.pem"), "--tls-key", cert("server.key")};
  }
  std::string writeFile(const char *name, const std::string &text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    return path;
  }
  std::string tokensFile(const std::string &text) { return writeFile("tokens.txt", text); }

  // A client of the daemon: TLS with `ca` (and a client certificate when
  // `clientCert` names one, e.g. "client"), `token` as the bearer token.
  Client client(const char *ca = nullptr, const char *clientCert = nullptr, std::string token = "") {
    ClientOptions o;
    o.address = daemon_->address();
    o.call_deadline = std::chrono::seconds(60);
    if (ca) {
      std::string error;
      std::string c = clientCert ? cert((std::string(clientCert) + ".pem").c_str()) : "";
      std::string k = clientCert ? cert((std::string(clientCert) + ".key").c_str()) : "";
      EXPECT_TRUE(msl::client::loadTlsFiles(cert(ca), c, k, &o, &error)) << error;
    }
    o.auth_token = std::move(token);
    return Client(o);
  }

  static grpc::Status compileSaxpy(const Client &c) {
    auto r = c.compileFiles("saxpy.metal", readSourceFile("examples/saxpy.metal"), {}, {}, msl::v1::Target(),
                            {msl::v1::LLVM_BITCODE});
    if (!r.ok())
      return r.status();
    if (!r->success())
      return grpc::Status(grpc::StatusCode::INTERNAL, "the compile failed");
    if (r->artifacts_size() != 1 || r->artifacts(0).inline_data().size() < 4)
      return grpc::Status(grpc::StatusCode::INTERNAL, "no artifact");
    return grpc::Status::OK;
  }

  static grpc::Status execute(const Client &c) {
    msl::v1::ExecuteRequest request; // refused before it is looked at, or INVALID_ARGUMENT
    auto r = c.execute(request);
    return r.ok() ? grpc::Status::OK : r.status();
  }

  // mslc with `args` against the daemon (environment `env` first).
  int mslc(const std::string &args, std::string &output, const std::string &env = "") {
    std::string command = "cd " + shq(sourceDir()) + " && env -u MSLD_TOKEN " + env + " " +
                          shq(binDir() + "/mslc") + " --server " + daemon_->address() +
                          " -c examples/saxpy.metal -o " + shq((dir_ / "out.bc").string()) + " " + args;
    return runShell(command, output);
  }

  // Waits until msld's log contains `text` (SIGHUP is handled asynchronously).
  bool waitForLog(const std::string &text, int seconds = 10) {
    for (int i = 0; i < seconds * 20; ++i) {
      if (daemon_->log().find(text) != std::string::npos)
        return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  std::string certs_;
};

#define EXPECT_CODE(status, code)                                                                        \
  EXPECT_EQ((status).error_code(), grpc::StatusCode::code) << msl::client::describeStatus(status)

TEST_F(SecurityTest, TlsCompileSucceedsWithTheCa) {
  startDaemon(tlsArgs());
  ASSERT_TRUE(daemon_->running());
  grpc::Status tls = compileSaxpy(client("ca.pem"));
  EXPECT_TRUE(tls.ok()) << msl::client::describeStatus(tls);
  std::string output;
  EXPECT_EQ(mslc("--tls-ca " + shq(cert("ca.pem")), output), 0) << output;
  EXPECT_GT(std::filesystem::file_size(dir_ / "out.bc"), 4u);
  // A CA that did not sign the server's certificate: the handshake fails.
  grpc::Status wrongCa = compileSaxpy(client("other-ca.pem"));
  EXPECT_CODE(wrongCa, UNAVAILABLE);
  output.clear();
  EXPECT_EQ(mslc("--tls-ca " + shq(cert("other-ca.pem")), output), 1) << output;
  EXPECT_NE(output.find("TLS handshake"), std::string::npos) << output;
  EXPECT_NE(daemon_->log().find("serving gRPC over TLS"), std::string::npos) << daemon_->log();
}

TEST_F(SecurityTest, PlaintextClientAgainstTlsServerFailsWithAClearMessage) {
  startDaemon(tlsArgs());
  grpc::Status plain = compileSaxpy(client());
  EXPECT_CODE(plain, UNAVAILABLE);
  std::string output;
  EXPECT_EQ(mslc("", output), 1) << output;
  EXPECT_NE(output.find("mslc: error: " + daemon_->address() + ": UNAVAILABLE"), std::string::npos) << output;
  EXPECT_NE(output.find("plaintext"), std::string::npos) << output;
  EXPECT_NE(output.find("TLS"), std::string::npos) << output;
  EXPECT_NE(output.find("--tls-ca"), std::string::npos) << output;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "out.bc"));
}

TEST_F(SecurityTest, MutualTlsRequiresAClientCertificate) {
  auto args = tlsArgs();
  args.insert(args.end(), {"--tls-client-ca", cert("ca.pem")});
  startDaemon(args);
  EXPECT_CODE(compileSaxpy(client("ca.pem")), UNAVAILABLE);                    // no client certificate
  EXPECT_CODE(compileSaxpy(client("ca.pem", "other-client")), UNAVAILABLE);    // one of another CA
  grpc::Status withCert = compileSaxpy(client("ca.pem", "client"));
  EXPECT_TRUE(withCert.ok()) << msl::client::describeStatus(withCert);
  std::string output;
  EXPECT_EQ(mslc("--tls-ca " + shq(cert("ca.pem")), output), 1) << output;
  EXPECT_NE(output.find("--tls-cert"), std::string::npos) << output;
  output.clear();
  EXPECT_EQ(mslc("--tls-ca " + shq(cert("ca.pem")) + " --tls-cert " + shq(cert("client.pem")) +
                     " --tls-key " + shq(cert("client.key")),
                 output),
            0)
      << output;
}

TEST_F(SecurityTest, TokensAndRoles) {
  std::string tokens = tokensFile(std::string("# test tokens\n") + kReadToken + " read\n\n" + kCompileToken +
                                  " compile   # a builder\n");
  startDaemon({"--auth-tokens", tokens});
  ASSERT_TRUE(daemon_->running());

  // Health stays open.
  EXPECT_TRUE(client().waitUntilHealthy(std::chrono::seconds(10)).ok());

  grpc::Status missing = compileSaxpy(client());
  EXPECT_CODE(missing, UNAUTHENTICATED);
  EXPECT_NE(missing.error_message().find("missing token"), std::string::npos) << missing.error_message();

  grpc::Status wrong = compileSaxpy(client(nullptr, nullptr, "wrong-0123456789abcdef"));
  EXPECT_CODE(wrong, UNAUTHENTICATED);
  EXPECT_NE(wrong.error_message().find("invalid token"), std::string::npos) << wrong.error_message();

  grpc::Status readOnly = compileSaxpy(client(nullptr, nullptr, kReadToken));
  EXPECT_CODE(readOnly, PERMISSION_DENIED);
  EXPECT_NE(readOnly.error_message().find("lacks role 'compile' needed by msl.v1.Compiler/Compile"),
            std::string::npos)
      << readOnly.error_message();
  // ... but it may read the store.
  auto found = client(nullptr, nullptr, kReadToken).findMissingBlobs({msl::client::digestOf("x")});
  EXPECT_TRUE(found.ok()) << msl::client::describeStatus(found.status());
  auto upload = client(nullptr, nullptr, kReadToken).uploadBlobs({"x"});
  EXPECT_CODE(upload.status(), PERMISSION_DENIED);

  Client builder = client(nullptr, nullptr, kCompileToken);
  grpc::Status compiled = compileSaxpy(builder);
  EXPECT_TRUE(compiled.ok()) << msl::client::describeStatus(compiled);
  grpc::Status executed = execute(builder);
  EXPECT_CODE(executed, PERMISSION_DENIED);
  EXPECT_NE(executed.error_message().find("token lacks role 'execute' needed by msl.v1.Executor/Execute"),
            std::string::npos)
      << executed.error_message();

  // mslc: $MSLD_TOKEN or --token-file.
  std::string output;
  EXPECT_EQ(mslc("", output), 1) << output;
  EXPECT_NE(output.find("UNAUTHENTICATED"), std::string::npos) << output;
  EXPECT_NE(output.find("MSLD_TOKEN"), std::string::npos) << output;
  output.clear();
  EXPECT_EQ(mslc("", output, std::string("MSLD_TOKEN=") + kCompileToken), 0) << output;
  output.clear();
  std::string tokenFile = writeFile("my-token", std::string(kReadToken) + "\n");
  EXPECT_EQ(mslc("--token-file " + shq(tokenFile), output, std::string("MSLD_TOKEN=") + kCompileToken), 1)
      << output; // the file wins over the environment
  EXPECT_NE(output.find("PERMISSION_DENIED"), std::string::npos) << output;

  // Refusals are counted by reason (mslc: one missing, one denied).
  EXPECT_EQ(daemon_->metric("msld_auth_failures_total{reason=\"missing_token\"}"), 2);
  EXPECT_EQ(daemon_->metric("msld_auth_failures_total{reason=\"bad_token\"}"), 1);
  EXPECT_EQ(daemon_->metric("msld_auth_failures_total{reason=\"permission_denied\"}"), 4);
  EXPECT_EQ(daemon_->metric("msld_auth_failures_total{reason=\"no_client_cert\"}"), 0);
  EXPECT_EQ(daemon_->metric("msld_requests_total{code=\"UNAUTHENTICATED\",method=\"Compile\"}"), 3);

  // No token is ever logged.
  std::string log = daemon_->log();
  for (const char *t : {kReadToken, kCompileToken, "wrong-0123456789abcdef"})
    EXPECT_EQ(log.find(t), std::string::npos) << t << " in the log:\n" << log;
}

TEST_F(SecurityTest, SighupReloadsTheTokenFile) {
  std::string tokens = tokensFile(std::string(kCompileToken) + " compile\n");
  startDaemon({"--auth-tokens", tokens});
  ASSERT_TRUE(daemon_->running());
  EXPECT_CODE(compileSaxpy(client(nullptr, nullptr, kLateToken)), UNAUTHENTICATED);

  tokensFile(std::string(kCompileToken) + " compile\n" + kLateToken + " compile,execute\n");
  ASSERT_EQ(::kill(daemon_->pid(), SIGHUP), 0);
  ASSERT_TRUE(waitForLog("auth files reloaded: 2 tokens")) << daemon_->log();
  grpc::Status late = compileSaxpy(client(nullptr, nullptr, kLateToken));
  EXPECT_TRUE(late.ok()) << msl::client::describeStatus(late);
  // Its execute role lets the (empty) Execute through, to the request's own checks.
  grpc::Status executed = execute(client(nullptr, nullptr, kLateToken));
  EXPECT_NE(executed.error_code(), grpc::StatusCode::PERMISSION_DENIED) << msl::client::describeStatus(executed);
  EXPECT_NE(executed.error_code(), grpc::StatusCode::UNAUTHENTICATED) << msl::client::describeStatus(executed);

  // A bad file keeps the tokens in use, and says where it is bad.
  tokensFile(std::string(kCompileToken) + " compile\n# oops\n" + kLateToken + " compile,exec\n");
  ASSERT_EQ(::kill(daemon_->pid(), SIGHUP), 0);
  ASSERT_TRUE(waitForLog("not reloaded")) << daemon_->log();
  EXPECT_NE(daemon_->log().find(tokens + ":3: unknown role 'exec'"), std::string::npos) << daemon_->log();
  EXPECT_TRUE(compileSaxpy(client(nullptr, nullptr, kLateToken)).ok());
  EXPECT_TRUE(daemon_->running());
  EXPECT_EQ(daemon_->log().find(kLateToken), std::string::npos);
}

// msl.v1.Admin/Scrub reads the whole store: only the admin role may start
// one (README "Security"); every other role is PERMISSION_DENIED naming it.
TEST_F(SecurityTest, ScrubNeedsTheAdminRole) {
  std::string tokens = tokensFile(std::string(kCompileToken) + " compile,execute,read\n" + kAdminToken + " admin\n");
  startDaemon({"--auth-tokens", tokens});
  ASSERT_TRUE(daemon_->running());
  auto admin = msl::v1::Admin::NewStub(daemon_->channel());
  auto scrub = [&](const char *token, msl::v1::ScrubResponse &response) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    if (token)
      ctx.AddMetadata("authorization", std::string("Bearer ") + token);
    return admin->Scrub(&ctx, msl::v1::ScrubRequest(), &response);
  };
  msl::v1::ScrubResponse response;
  grpc::Status anonymous = scrub(nullptr, response);
  EXPECT_CODE(anonymous, UNAUTHENTICATED);
  grpc::Status builder = scrub(kCompileToken, response);
  EXPECT_CODE(builder, PERMISSION_DENIED);
  EXPECT_NE(builder.error_message().find("token lacks role 'admin' needed by msl.v1.Admin/Scrub (it has "
                                         "read,compile,execute)"),
            std::string::npos)
      << builder.error_message();
  grpc::Status admitted = scrub(kAdminToken, response);
  EXPECT_TRUE(admitted.ok()) << msl::client::describeStatus(admitted);
  EXPECT_TRUE(response.clean()) << response.report();
  EXPECT_TRUE(response.complete());
  EXPECT_EQ(daemon_->metric("msld_requests_total{code=\"PERMISSION_DENIED\",method=\"Scrub\"}"), 1);
  EXPECT_EQ(daemon_->metric("msld_cache_scrubs_total{result=\"clean\"}"), 1);
  EXPECT_EQ(daemon_->log().find(kAdminToken), std::string::npos);
}

TEST_F(SecurityTest, BadTokenFileRefusesToStart) {
  std::string tokens = tokensFile(std::string(kCompileToken) + " compile\n\n" + kReadToken + " reed\n");
  Daemon d((dir_ / "data").string(), {"--auth-tokens", tokens});
  EXPECT_FALSE(d.start());
  EXPECT_NE(d.log().find(tokens + ":3: unknown role 'reed'"), std::string::npos) << d.log();
  EXPECT_EQ(d.log().find(kReadToken), std::string::npos) << d.log();
}

TEST_F(SecurityTest, ClientCertificateSubjectsMapToRoles) {
  std::string subjects = writeFile("subjects.txt", "# CN roles\nbuilder-1 compile\n");
  auto args = tlsArgs();
  args.insert(args.end(), {"--tls-client-ca", cert("ca.pem"), "--tls-client-auth", "optional", "--auth-subjects",
                           subjects});
  startDaemon(args);
  ASSERT_TRUE(daemon_->running());
  Client builder = client("ca.pem", "client"); // CN=builder-1
  grpc::Status compiled = compileSaxpy(builder);
  EXPECT_TRUE(compiled.ok()) << msl::client::describeStatus(compiled);
  grpc::Status executed = execute(builder);
  EXPECT_CODE(executed, PERMISSION_DENIED);
  EXPECT_NE(executed.error_message().find("client certificate CN 'builder-1' lacks role 'execute'"),
            std::string::npos)
      << executed.error_message();
  // Optional client certificates: a TLS client without one gets in, but has no role.
  grpc::Status anonymous = compileSaxpy(client("ca.pem"));
  EXPECT_CODE(anonymous, UNAUTHENTICATED);
  EXPECT_NE(anonymous.error_message().find("no client certificate"), std::string::npos) << anonymous.error_message();
  EXPECT_EQ(daemon_->metric("msld_auth_failures_total{reason=\"no_client_cert\"}"), 1);
  EXPECT_EQ(daemon_->metric("msld_auth_failures_total{reason=\"permission_denied\"}"), 1);
}

} // namespace
} // namespace msl::test
