// mslc's connection settings: --tls-ca/--tls-cert/--tls-key, --token-file and
// $MSLD_TOKEN (makeClientOptions), and the notes describeFailure adds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "msl/client/Client.h"
#include "msl/client/MslcDriver.h"

namespace msl::client::mslc {
namespace {

namespace fs = std::filesystem;

class MslcSecurity : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mslc-security-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const char* name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  bool parse(std::vector<std::string> args, Invocation* inv, std::string* error) {
    args.insert(args.end(), {"-c", "k.metal", "-o", "k.bc"});
    return parseCommandLine(args, nullptr, dir_, inv, error);
  }
  fs::path dir_;
};

constexpr const char* kPem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

TEST_F(MslcSecurity, TlsAndTokenFlagsReachTheClientOptions) {
  std::string ca = write("ca.pem", kPem), crt = write("c.pem", kPem), key = write("c.key", "-----BEGIN PRIVATE KEY-----\n");
  std::string token = write("token", "  file-token-0123456789\nsecond line\n");
  Invocation inv;
  std::string error;
  ASSERT_TRUE(parse({"--tls-ca", ca, "--tls-cert=" + crt, "--tls-key", key, "--token-file", token}, &inv, &error))
      << error;
  EXPECT_EQ(inv.tls_ca, ca);
  EXPECT_EQ(inv.tls_cert, crt);
  ClientOptions o;
  ASSERT_TRUE(makeClientOptions(inv, "env-token-0123456789", &o, &error)) << error;
  EXPECT_TRUE(o.tls.enabled);
  EXPECT_EQ(o.tls.root_certs_pem, kPem);
  EXPECT_EQ(o.tls.cert_chain_pem, kPem);
  EXPECT_EQ(o.auth_token, "file-token-0123456789");  // the file wins over $MSLD_TOKEN

  Invocation plain;
  ASSERT_TRUE(parse({}, &plain, &error)) << error;
  ASSERT_TRUE(makeClientOptions(plain, "env-token-0123456789", &o, &error)) << error;
  EXPECT_FALSE(o.tls.enabled);
  EXPECT_EQ(o.auth_token, "env-token-0123456789");
  ASSERT_TRUE(makeClientOptions(plain, nullptr, &o, &error)) << error;
  EXPECT_EQ(o.auth_token, "");
}

TEST_F(MslcSecurity, BadFilesAreErrors) {
  std::string error;
  Invocation inv;
  ClientOptions o;
  ASSERT_TRUE(parse({"--tls-ca", (dir_ / "missing.pem").string()}, &inv, &error));
  EXPECT_FALSE(makeClientOptions(inv, nullptr, &o, &error));
  EXPECT_NE(error.find("--tls-ca"), std::string::npos) << error;

  Invocation notPem;
  ASSERT_TRUE(parse({"--tls-ca", write("x.pem", "hello")}, &notPem, &error));
  EXPECT_FALSE(makeClientOptions(notPem, nullptr, &o, &error));
  EXPECT_NE(error.find("not a PEM file"), std::string::npos) << error;

  Invocation certOnly;
  ASSERT_TRUE(parse({"--tls-cert", write("c.pem", kPem)}, &certOnly, &error));
  EXPECT_FALSE(makeClientOptions(certOnly, nullptr, &o, &error));
  EXPECT_NE(error.find("--tls-key"), std::string::npos) << error;

  Invocation emptyToken;
  ASSERT_TRUE(parse({"--token-file", write("t", "\n")}, &emptyToken, &error));
  EXPECT_FALSE(makeClientOptions(emptyToken, nullptr, &o, &error));
  EXPECT_NE(error.find("no token"), std::string::npos) << error;

  Invocation missingValue;
  EXPECT_FALSE(parseCommandLine({"-c", "k.metal", "-o", "k.bc", "--tls-ca"}, nullptr, dir_, &missingValue, &error));
}

TEST_F(MslcSecurity, FailuresNameTheLikelyCause) {
  SourceOptions plain;
  plain.server = "10.0.0.7:8980";
  grpc::Status closed(grpc::StatusCode::UNAVAILABLE,
                      "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:10.0.0.7:8980: Socket closed");
  std::string text = describeFailure(closed, plain, false);
  EXPECT_EQ(text.rfind("mslc: error: 10.0.0.7:8980: UNAVAILABLE: failed to connect", 0), 0u) << text;
  EXPECT_NE(text.find("plaintext client fails its TLS handshake"), std::string::npos) << text;
  EXPECT_NE(text.find("--tls-ca"), std::string::npos) << text;

  SourceOptions tls = plain;
  tls.tls_ca = "ca.pem";
  text = describeFailure(grpc::Status(grpc::StatusCode::UNAVAILABLE, "Ssl handshake failed"), tls, false);
  EXPECT_NE(text.find("TLS handshake probably failed"), std::string::npos) << text;

  text = describeFailure(grpc::Status(grpc::StatusCode::UNAVAILABLE, "ipv4:10.0.0.7:8980: Connection refused"),
                         plain, false);
  EXPECT_EQ(text.find("TLS"), std::string::npos) << text;
  EXPECT_NE(text.find("is msld running"), std::string::npos) << text;

  text = describeFailure(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing token"), plain, false);
  EXPECT_EQ(text.rfind("mslc: error: UNAUTHENTICATED: missing token\n", 0), 0u) << text;
  EXPECT_NE(text.find("MSLD_TOKEN"), std::string::npos) << text;

  text = describeFailure(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "bad"), plain, true);
  EXPECT_EQ(text, "mslc: error: 10.0.0.7:8980: INVALID_ARGUMENT: bad\n");
}

}  // namespace
}  // namespace msl::client::mslc
