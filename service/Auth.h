//===- Auth.h - msld: who may call which RPC ------------------------------===//
//
// Authentication and roles (README "Security"), apart from gRPC's plumbing
// so that it is testable without a network:
//
//  * parseTokenFile / parseSubjectFile: `--auth-tokens` lines `TOKEN
//    ROLE[,ROLE...]`, `--auth-subjects` lines `CN ROLE[,ROLE...]`; `#`
//    comments and blank lines; any bad line is an error naming FILE:LINE
//    (and never the token).
//  * kMethodRoles: the one table of every RPC msld serves and the roles that
//    may call it (health and anything not in the table: see check()).
//  * Authorizer: holds the files (reloaded on SIGHUP, keeping the old ones
//    when a new one is bad) and decides one call from its method, its
//    `authorization: Bearer TOKEN` metadata and the client certificate's CN.
//
// Tokens are kept only as SHA-256 digests and compared in constant time
// (CRYPTO_memcmp over every entry, no early exit).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <grpcpp/support/status.h>
#include <grpcpp/support/string_ref.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace msl::service {

/// Roles, as bits of a RoleSet.
enum Role : uint8_t {
  kRoleRead = 1,    // CAS reads (FindMissingBlobs, BatchReadBlobs, Read), ListDevices
  kRoleCompile = 2, // Compile (and uploading its inputs)
  kRoleExecute = 4, // Execute (and uploading its buffers)
  kRoleAdmin = 8,   // every RPC, and alone the msl.v1.Admin ones (Scrub)
};
using RoleSet = uint8_t;

/// "read", "compile", "execute", "admin" -> the role; nullopt otherwise.
std::optional<Role> parseRole(std::string_view name);
/// "read,compile" (in the order above); "none" when empty.
std::string roleNames(RoleSet roles);

/// The full names of the RPCs msld serves (the handlers in Server.cpp and
/// kMethodRoles use these).
namespace rpc {
inline constexpr const char *kCompile = "/msl.v1.Compiler/Compile";
inline constexpr const char *kExecute = "/msl.v1.Executor/Execute";
inline constexpr const char *kListDevices = "/msl.v1.Executor/ListDevices";
inline constexpr const char *kFindMissingBlobs = "/msl.v1.ContentAddressableStorage/FindMissingBlobs";
inline constexpr const char *kBatchReadBlobs = "/msl.v1.ContentAddressableStorage/BatchReadBlobs";
inline constexpr const char *kRead = "/msl.v1.ContentAddressableStorage/Read";
inline constexpr const char *kBatchUpdateBlobs = "/msl.v1.ContentAddressableStorage/BatchUpdateBlobs";
inline constexpr const char *kScrub = "/msl.v1.Admin/Scrub";
} // namespace rpc

/// One RPC and the roles any of which lets a client call it (admin always
/// does).
struct MethodRoles {
  const char *method; // "/msl.v1.Compiler/Compile"
  RoleSet roles;
};

/// Every RPC of msl.v1.Compiler, msl.v1.ContentAddressableStorage,
/// msl.v1.Executor and msl.v1.Admin. A test checks it against the services'
/// descriptors.
extern const std::array<MethodRoles, 8> kMethodRoles;

/// The roles that may call `method` (a full name "/pkg.Service/Method");
/// nullopt for a method not in kMethodRoles (refused when auth is on).
std::optional<RoleSet> rolesFor(std::string_view method);

/// Methods every client may call, even without credentials:
/// grpc.health.v1.Health/* and gRPC server reflection.
bool isOpenMethod(std::string_view method);

/// Why a call was refused (a label of msld_auth_failures_total).
enum class AuthFailure : uint8_t {
  kNone = 0,
  kMissingToken,      // no authorization header and no mapped client certificate
  kBadToken,          // a malformed header or a token not in the file
  kPermissionDenied,  // authenticated, but none of the method's roles
  kNoClientCert,      // certificate-only auth (no --auth-tokens) and no client certificate
  kUnknownSubject,    // a client certificate whose CN is not in --auth-subjects (and no token)
};
inline constexpr std::array<const char *, 5> kAuthFailureLabels = {
    "missing_token", "bad_token", "permission_denied", "no_client_cert", "unknown_subject"};
/// The label of a failure (kNone: "").
const char *authFailureLabel(AuthFailure failure);

/// A parsed --auth-tokens file: SHA-256 of each token and its roles.
struct TokenTable {
  struct Entry {
    std::array<unsigned char, 32> digest;
    RoleSet roles;
    unsigned line; // where it was defined (a name for logs that is not the token)
  };
  std::vector<Entry> entries;
};

/// A parsed --auth-subjects file: client certificate CN -> roles.
struct SubjectTable {
  std::map<std::string, RoleSet, std::less<>> roles;
};

/// Bounds of the files.
inline constexpr size_t kMaxAuthFileBytes = 4 << 20;
inline constexpr size_t kMaxAuthLineBytes = 4096;
inline constexpr size_t kMinTokenBytes = 16;
inline constexpr size_t kMaxTokenBytes = 1024;

/// Parses the text of a token file. False with `error` = "FILE:LINE: why"
/// (the token itself is never part of it).
bool parseTokenFile(std::string_view text, const std::string &fileName, TokenTable &out,
                    std::string &error);
/// Parses the text of a subject file: the CN is everything before the last
/// run of blanks (a CN may contain spaces), the roles the rest.
bool parseSubjectFile(std::string_view text, const std::string &fileName, SubjectTable &out,
                      std::string &error);

/// What check() needs to know of the connection.
struct PeerIdentity {
  /// Whether the connection carries a verified client certificate, and its
  /// subject CN.
  bool hasClientCert = false;
  std::string commonName;
};

struct AuthDecision {
  grpc::Status status;                     // OK, UNAUTHENTICATED or PERMISSION_DENIED
  AuthFailure failure = AuthFailure::kNone;
  bool ok() const { return status.ok(); }
};

struct AuthOptions {
  std::string tokensFile;   // --auth-tokens; empty: no tokens
  std::string subjectsFile; // --auth-subjects; empty: no certificate mapping
  bool enabled() const { return !tokensFile.empty() || !subjectsFile.empty(); }
};

using Metadata = std::multimap<grpc::string_ref, grpc::string_ref>;

class Authorizer {
public:
  /// Reads the files; null with `error` (FILE:LINE: why) when one is bad.
  static std::unique_ptr<Authorizer> create(const AuthOptions &options, std::string &error);
  /// An authorizer from tables already parsed (tests).
  Authorizer(std::optional<TokenTable> tokens, std::optional<SubjectTable> subjects);

  /// Re-reads the files. On an error keeps the tables in use and returns
  /// false with `error`; `summary` says what is now loaded.
  bool reload(std::string &error, std::string *summary = nullptr);
  /// "N tokens, M subjects".
  std::string summary() const;

  /// Decides one call: `method` its full name, `metadata` the client's
  /// request metadata (only `authorization` is read), `peer` the TLS
  /// identity. A Bearer token, when sent, decides alone (a bad one is
  /// refused even with a good certificate); otherwise the certificate's CN.
  AuthDecision check(std::string_view method, const Metadata &metadata, const PeerIdentity &peer) const;

private:
  struct Tables {
    std::optional<TokenTable> tokens;
    std::optional<SubjectTable> subjects;
  };
  std::shared_ptr<const Tables> tables() const;
  static bool load(const AuthOptions &options, Tables &out, std::string &error);

  AuthOptions options_;
  mutable std::mutex mu_;
  std::shared_ptr<const Tables> tables_;
};

/// Reads a whole file of at most `maxBytes`; false with `error` set.
bool readBoundedFile(const std::string &path, size_t maxBytes, std::string &out, std::string &error);

} // namespace msl::service
