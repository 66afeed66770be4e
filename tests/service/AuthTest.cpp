// Unit tests of service/Auth.h: the token and subject files, the role table
// and Authorizer::check, without a network.
#include "Auth.h"

#include <gtest/gtest.h>
#include <google/protobuf/descriptor.h>

#include "msl/v1/cas.grpc.pb.h"
#include "msl/v1/compiler.grpc.pb.h"
#include "msl/v1/execute.grpc.pb.h"
#include "msl/v1/admin.grpc.pb.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

namespace msl::service {
namespace {

constexpr const char *kReadToken = "read-token-0123456789";
constexpr const char *kCompileToken = "compile-token-0123456789";
constexpr const char *kBothToken = "both-token-0123456789";
constexpr const char *kAdminToken = "admin-token-0123456789";

TokenTable tokens(const std::string &text) {
  TokenTable t;
  std::string error;
  EXPECT_TRUE(parseTokenFile(text, "tokens", t, error)) << error;
  return t;
}

Authorizer standardAuth(bool withSubjects = false) {
  TokenTable t = tokens(std::string(kReadToken) + " read\n" + kCompileToken + " compile\n" + kBothToken +
                        " compile,execute\n" + kAdminToken + " admin\n");
  std::optional<SubjectTable> s;
  if (withSubjects) {
    s.emplace();
    std::string error;
    EXPECT_TRUE(parseSubjectFile("builder-1 compile\nrunner 1 execute,read\n", "subjects", *s, error)) << error;
  }
  return Authorizer(std::move(t), std::move(s));
}

using Entries = std::vector<std::pair<std::string, std::string>>;

// Metadata whose string_refs point into `storage` (kept alive by the caller).
struct Md {
  std::vector<std::pair<std::string, std::string>> storage;
  Metadata map;
  explicit Md(Entries entries) : storage(std::move(entries)) {
    for (auto &[k, v] : storage)
      map.emplace(grpc::string_ref(k), grpc::string_ref(v));
  }
};

Md bearer(const std::string &token) { return Md(Entries{{"authorization", "Bearer " + token}}); }

const PeerIdentity kNoCert;

TEST(AuthFiles, ParsesTokensRolesCommentsAndBlankLines) {
  std::string error;
  TokenTable t;
  ASSERT_TRUE(parseTokenFile("# a comment\n\n   \nabcdefghijklmnop read   # trailing comment\r\n"
                             "\tqrstuvwxyz0123456789-._~+/= compile,execute\n"
                             "ABCDEFGHIJKLMNOP admin",
                             "t", t, error))
      << error;
  ASSERT_EQ(t.entries.size(), 3u);
  EXPECT_EQ(t.entries[0].roles, kRoleRead);
  EXPECT_EQ(t.entries[0].line, 4u);
  EXPECT_EQ(t.entries[1].roles, kRoleCompile | kRoleExecute);
  EXPECT_EQ(t.entries[2].roles, kRoleAdmin);
  EXPECT_EQ(roleNames(t.entries[1].roles), "compile,execute");
}

TEST(AuthFiles, BadLinesNameFileAndLineButNeverTheToken) {
  struct Case {
    std::string text;
    std::string error;
  };
  const std::string secret = "supersecret-token-value";
  std::vector<Case> cases = {
      {"# ok\n" + secret + " wrte\n", "tokens.txt:2: unknown role 'wrte'"},
      {secret + "\n", "tokens.txt:1: want 'TOKEN ROLE[,ROLE...]' (no roles)"},
      {secret + " read, compile\n", "tokens.txt:1: want 'TOKEN ROLE[,ROLE...]' (roles are separated"},
      {secret + " read,,compile\n", "tokens.txt:1: empty role"},
      {secret + " read,\n", "tokens.txt:1: empty role"},
      {"\n\nshort read\n", "tokens.txt:3: a token must have 16 to 1024 characters (this one has 5)"},
      {"supersecret\"token-value read\n", "tokens.txt:1: a token may contain only"},
      {secret + " read\n" + secret + " compile\n", "tokens.txt:2: the same token as line 1"},
      {secret + " read\n" + std::string(5000, 'a') + " read\n", "tokens.txt:2: line longer than 4096 bytes"},
  };
  for (const auto &c : cases) {
    TokenTable t;
    std::string error;
    EXPECT_FALSE(parseTokenFile(c.text, "tokens.txt", t, error)) << c.text;
    EXPECT_EQ(error.rfind(c.error, 0), 0u) << "got: " << error << "\nwant: " << c.error;
    EXPECT_EQ(error.find(secret), std::string::npos) << error;
    EXPECT_EQ(error.find("supersecret"), std::string::npos) << error;
  }
}

TEST(AuthFiles, SubjectsTakeTheLastFieldAsRoles) {
  SubjectTable s;
  std::string error;
  ASSERT_TRUE(parseSubjectFile("# CN roles\nbuilder-1 compile\nBuild Farm Node 7   read,compile\n", "s", s, error))
      << error;
  ASSERT_EQ(s.roles.size(), 2u);
  EXPECT_EQ(s.roles.at("builder-1"), kRoleCompile);
  EXPECT_EQ(s.roles.at("Build Farm Node 7"), kRoleRead | kRoleCompile);
  EXPECT_FALSE(parseSubjectFile("a read\na compile\n", "s", s, error));
  EXPECT_EQ(error, "s:2: CN 'a' is listed twice");
  EXPECT_FALSE(parseSubjectFile("compile\n", "s", s, error));
  EXPECT_EQ(error, "s:1: want 'CN ROLE[,ROLE...]'");
  EXPECT_FALSE(parseSubjectFile("x y superuser\n", "s", s, error));
  EXPECT_EQ(error.rfind("s:1: unknown role 'superuser'", 0), 0u) << error;
}

// The table names every RPC of every msl.v1 service, and nothing else.
TEST(AuthTable, CoversEveryMethodOfEveryService) {
  std::set<std::string> served;
  for (const google::protobuf::FileDescriptor *fd :
       {msl::v1::FindMissingBlobsRequest::descriptor()->file(), msl::v1::CompileRequest::descriptor()->file(),
        msl::v1::ExecuteRequest::descriptor()->file(), msl::v1::ScrubRequest::descriptor()->file()}) {
    ASSERT_NE(fd, nullptr);
    for (int s = 0; s < fd->service_count(); ++s)
      for (int m = 0; m < fd->service(s)->method_count(); ++m)
        served.insert("/" + fd->service(s)->full_name() + "/" + fd->service(s)->method(m)->name());
  }
  EXPECT_EQ(served.size(), kMethodRoles.size());
  for (const auto &method : served) {
    auto roles = rolesFor(method);
    ASSERT_TRUE(roles.has_value()) << method << " is not in kMethodRoles";
    EXPECT_NE(*roles, 0) << method;
  }
  for (const auto &entry : kMethodRoles)
    EXPECT_TRUE(served.count(entry.method)) << entry.method << " is not an RPC of msl.v1";
  EXPECT_EQ(*rolesFor("/msl.v1.Compiler/Compile"), kRoleCompile);
  EXPECT_EQ(*rolesFor("/msl.v1.Executor/Execute"), kRoleExecute);
  EXPECT_EQ(*rolesFor("/msl.v1.Admin/Scrub"), kRoleAdmin);
  EXPECT_TRUE(isOpenMethod("/grpc.health.v1.Health/Check"));
  EXPECT_TRUE(isOpenMethod("/grpc.health.v1.Health/Watch"));
  EXPECT_FALSE(isOpenMethod("/msl.v1.Compiler/Compile"));
  EXPECT_FALSE(isOpenMethod("/grpc.health.v1.HealthX/Check"));
}

TEST(AuthCheck, MissingAndBadTokensAreUnauthenticated) {
  Authorizer auth = standardAuth();
  Md none(Entries{});
  auto d = auth.check("/msl.v1.Compiler/Compile", none.map, kNoCert);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(d.failure, AuthFailure::kMissingToken);
  EXPECT_NE(d.status.error_message().find("missing token"), std::string::npos) << d.status.error_message();

  Md wrong = bearer("not-a-known-token-123");
  d = auth.check("/msl.v1.Compiler/Compile", wrong.map, kNoCert);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(d.failure, AuthFailure::kBadToken);
  EXPECT_EQ(d.status.error_message().find("not-a-known"), std::string::npos);

  // A prefix, a longer string, another scheme, an empty token, two headers.
  std::string compile = kCompileToken;
  std::vector<Entries> bad = {{{"authorization", "Bearer " + compile.substr(0, compile.size() - 1)}},
                              {{"authorization", "Bearer " + compile + "x"}},
                              {{"authorization", "Basic " + compile}},
                              {{"authorization", "Bearer "}},
                              {{"authorization", compile}},
                              {{"authorization", "Bearer " + compile}, {"authorization", "Bearer " + compile}}};
  for (const Entries &entries : bad) {
    Md copy(entries);
    d = auth.check("/msl.v1.Compiler/Compile", copy.map, kNoCert);
    EXPECT_EQ(d.status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << copy.storage[0].second;
    EXPECT_EQ(d.failure, AuthFailure::kBadToken);
  }
  // The scheme is case-insensitive (RFC 6750).
  Md lower(Entries{{"authorization", "bearer " + compile}});
  EXPECT_TRUE(auth.check("/msl.v1.Compiler/Compile", lower.map, kNoCert).ok());
  // Health stays open.
  EXPECT_TRUE(auth.check("/grpc.health.v1.Health/Check", none.map, kNoCert).ok());
}

TEST(AuthCheck, RolesDecidePermission) {
  Authorizer auth = standardAuth();
  Md read = bearer(kReadToken), compile = bearer(kCompileToken), both = bearer(kBothToken),
     admin = bearer(kAdminToken);

  auto d = auth.check("/msl.v1.Compiler/Compile", read.map, kNoCert);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(d.failure, AuthFailure::kPermissionDenied);
  EXPECT_EQ(d.status.error_message(), "token lacks role 'compile' needed by msl.v1.Compiler/Compile (it has read)");
  EXPECT_TRUE(auth.check("/msl.v1.ContentAddressableStorage/BatchReadBlobs", read.map, kNoCert).ok());
  EXPECT_TRUE(auth.check("/msl.v1.ContentAddressableStorage/Read", read.map, kNoCert).ok());
  d = auth.check("/msl.v1.ContentAddressableStorage/BatchUpdateBlobs", read.map, kNoCert);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_NE(d.status.error_message().find("one of the roles compile,execute"), std::string::npos)
      << d.status.error_message();

  EXPECT_TRUE(auth.check("/msl.v1.Compiler/Compile", compile.map, kNoCert).ok());
  EXPECT_TRUE(auth.check("/msl.v1.ContentAddressableStorage/FindMissingBlobs", compile.map, kNoCert).ok());
  EXPECT_TRUE(auth.check("/msl.v1.ContentAddressableStorage/BatchUpdateBlobs", compile.map, kNoCert).ok());
  d = auth.check("/msl.v1.Executor/Execute", compile.map, kNoCert);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(d.status.error_message(),
            "token lacks role 'execute' needed by msl.v1.Executor/Execute (it has compile)");

  EXPECT_TRUE(auth.check("/msl.v1.Executor/Execute", both.map, kNoCert).ok());
  // Admin RPCs: admin alone.
  for (const Md *notAdmin : {&read, &compile, &both}) {
    d = auth.check("/msl.v1.Admin/Scrub", notAdmin->map, kNoCert);
    EXPECT_EQ(d.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
    EXPECT_NE(d.status.error_message().find("token lacks role 'admin' needed by msl.v1.Admin/Scrub (it has "),
              std::string::npos)
        << d.status.error_message();
  }
  EXPECT_TRUE(auth.check("/msl.v1.Admin/Scrub", admin.map, kNoCert).ok());
  for (const auto &m : kMethodRoles)
    EXPECT_TRUE(auth.check(m.method, admin.map, kNoCert).ok()) << m.method;
  // A method outside the table is refused even for admin... after auth.
  d = auth.check("/msl.v1.Compiler/Other", compile.map, kNoCert);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

TEST(AuthCheck, ClientCertificateSubjects) {
  Authorizer auth = standardAuth(/*withSubjects=*/true);
  Md none(Entries{});
  PeerIdentity builder{true, "builder-1"}, runner{true, "runner 1"}, stranger{true, "stranger"};
  EXPECT_TRUE(auth.check("/msl.v1.Compiler/Compile", none.map, builder).ok());
  auto d = auth.check("/msl.v1.Executor/Execute", none.map, builder);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(d.status.error_message(),
            "client certificate CN 'builder-1' lacks role 'execute' needed by msl.v1.Executor/Execute (it has "
            "compile)");
  EXPECT_TRUE(auth.check("/msl.v1.Executor/Execute", none.map, runner).ok());
  d = auth.check("/msl.v1.Compiler/Compile", none.map, stranger);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(d.failure, AuthFailure::kUnknownSubject);
  // A token decides alone: a bad one is refused even with a good certificate,
  // a good one gives its own roles.
  Md wrong = bearer("not-a-known-token-123");
  EXPECT_EQ(auth.check("/msl.v1.Compiler/Compile", wrong.map, builder).failure, AuthFailure::kBadToken);
  Md read = bearer(kReadToken);
  EXPECT_EQ(auth.check("/msl.v1.Compiler/Compile", read.map, builder).failure, AuthFailure::kPermissionDenied);
  // Without a certificate and a token: missing_token (tokens are accepted).
  EXPECT_EQ(auth.check("/msl.v1.Compiler/Compile", none.map, kNoCert).failure, AuthFailure::kMissingToken);

  // Certificates only: no certificate is no_client_cert, and a token is not
  // looked at.
  SubjectTable s;
  std::string error;
  ASSERT_TRUE(parseSubjectFile("builder-1 compile\n", "s", s, error));
  Authorizer certsOnly(std::nullopt, s);
  d = certsOnly.check("/msl.v1.Compiler/Compile", none.map, kNoCert);
  EXPECT_EQ(d.status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(d.failure, AuthFailure::kNoClientCert);
  EXPECT_TRUE(certsOnly.check("/msl.v1.Compiler/Compile", wrong.map, builder).ok());
}

TEST(AuthReload, KeepsTheOldTablesWhenTheNewFileIsBad) {
  auto dir = std::filesystem::temp_directory_path() / ("msld-auth-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string file = (dir / "tokens").string();
  std::ofstream(file) << kReadToken << " read\n";
  std::string error;
  auto auth = Authorizer::create({file, ""}, error);
  ASSERT_TRUE(auth) << error;
  Md read = bearer(kReadToken), compile = bearer(kCompileToken);
  EXPECT_TRUE(auth->check("/msl.v1.ContentAddressableStorage/Read", read.map, kNoCert).ok());
  EXPECT_EQ(auth->check("/msl.v1.Compiler/Compile", compile.map, kNoCert).failure, AuthFailure::kBadToken);

  std::ofstream(file) << kReadToken << " read\n" << kCompileToken << " compile\n";
  std::string summary;
  EXPECT_TRUE(auth->reload(error, &summary)) << error;
  EXPECT_EQ(summary, "2 tokens");
  EXPECT_TRUE(auth->check("/msl.v1.Compiler/Compile", compile.map, kNoCert).ok());

  std::ofstream(file) << kReadToken << " read\n# next is bad\n" << kCompileToken << " compiler\n";
  EXPECT_FALSE(auth->reload(error, &summary));
  EXPECT_EQ(error.rfind(file + ":3: unknown role 'compiler'", 0), 0u) << error;
  EXPECT_EQ(summary, "2 tokens");
  EXPECT_TRUE(auth->check("/msl.v1.Compiler/Compile", compile.map, kNoCert).ok()) << "old tables kept";

  std::filesystem::remove(file);
  EXPECT_FALSE(auth->reload(error, &summary));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
  EXPECT_TRUE(auth->check("/msl.v1.Compiler/Compile", compile.map, kNoCert).ok());

  EXPECT_FALSE(Authorizer::create({file, ""}, error));
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace msl::service
