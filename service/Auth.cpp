#include "Auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace msl::service {

// The one table: every RPC msld serves and the roles that may call it.
// Uploads (BatchUpdateBlobs) are what both compiling and executing clients
// send their inputs with; reads of the store are open to every role (a
// digest is needed to read anything). admin may call every method, and
// only admin the operations on the daemon itself (a scrub reads the whole
// store: not for every client to start).
const std::array<MethodRoles, 8> kMethodRoles = {{
    {rpc::kCompile, kRoleCompile},
    {rpc::kExecute, kRoleExecute},
    {rpc::kListDevices, kRoleRead | kRoleCompile | kRoleExecute},
    {rpc::kFindMissingBlobs, kRoleRead | kRoleCompile | kRoleExecute},
    {rpc::kBatchReadBlobs, kRoleRead | kRoleCompile | kRoleExecute},
    {rpc::kRead, kRoleRead | kRoleCompile | kRoleExecute},
    {rpc::kBatchUpdateBlobs, kRoleCompile | kRoleExecute},
    {rpc::kScrub, kRoleAdmin},
}};

namespace {

constexpr std::array<std::pair<const char *, Role>, 4> kRoleNames = {{
    {"read", kRoleRead}, {"compile", kRoleCompile}, {"execute", kRoleExecute}, {"admin", kRoleAdmin}}};

bool isBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && (isBlank(s.front()) || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (isBlank(s.back()) || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// A token's characters: RFC 6750's b64token (so it fits an HTTP header).
bool isTokenChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.' || c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
}

std::array<unsigned char, 32> sha256(std::string_view bytes) {
  std::array<unsigned char, 32> out{};
  unsigned int n = 0;
  EVP_Digest(bytes.data(), bytes.size(), out.data(), &n, EVP_sha256(), nullptr);
  return out;
}

// A client-controlled string (a certificate CN) fit for a message: bounded,
// without control bytes.
std::string printable(std::string_view s) {
  std::string out;
  for (char c : s.substr(0, std::min<size_t>(s.size(), 128)))
    out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
  if (s.size() > 128)
    out += "...";
  return out;
}

// Calls `line(number, text)` for every line that is not blank or a comment,
// the comment (from a '#' at the start or after a blank) cut off. False
// (with `error`) on an over-long line or when `line` says so.
template <typename Fn>
bool forEachLine(std::string_view text, const std::string &fileName, std::string &error, Fn &&line) {
  if (text.size() > kMaxAuthFileBytes) {
    error = fileName + ": larger than " + std::to_string(kMaxAuthFileBytes) + " bytes";
    return false;
  }
  unsigned number = 0;
  while (!text.empty()) {
    ++number;
    size_t end = text.find('\n');
    std::string_view raw = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (raw.size() > kMaxAuthLineBytes) {
      error = fileName + ":" + std::to_string(number) + ": line longer than " +
              std::to_string(kMaxAuthLineBytes) + " bytes";
      return false;
    }
    for (size_t i = 0; i < raw.size(); ++i)
      if (raw[i] == '#' && (i == 0 || isBlank(raw[i - 1]))) {
        raw = raw.substr(0, i);
        break;
      }
    raw = trim(raw);
    if (raw.empty())
      continue;
    std::string why;
    if (!line(number, raw, why)) {
      error = fileName + ":" + std::to_string(number) + ": " + why;
      return false;
    }
  }
  return true;
}

bool parseRoles(std::string_view list, RoleSet &out, std::string &why) {
  out = 0;
  while (true) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    auto role = parseRole(name);
    if (!role) {
      why = name.empty() ? "empty role in '" + printable(list) + "'"
                         : "unknown role '" + printable(name) + "' (roles: read, compile, execute, admin)";
      return false;
    }
    out |= *role;
    if (comma == std::string_view::npos)
      return true;
    list.remove_prefix(comma + 1);
  }
}

std::string_view methodDisplay(std::string_view method) {
  if (!method.empty() && method.front() == '/')
    method.remove_prefix(1);
  return method;
}

// "role 'execute'" or "one of the roles compile, execute".
std::string neededText(RoleSet roles) {
  RoleSet plain = roles & ~kRoleAdmin;
  if (!plain) // an admin-only RPC (msl.v1.Admin)
    return "role 'admin'";
  if (!(plain & (plain - 1)))
    return "role '" + roleNames(plain) + "'";
  return "one of the roles " + roleNames(plain);
}

AuthDecision refuse(grpc::StatusCode code, AuthFailure failure, std::string message) {
  return {grpc::Status(code, std::move(message)), failure};
}

} // namespace

std::optional<Role> parseRole(std::string_view name) {
  for (auto &[text, role] : kRoleNames)
    if (name == text)
      return role;
  return std::nullopt;
}

std::string roleNames(RoleSet roles) {
  std::string out;
  for (auto &[text, role] : kRoleNames)
    if (roles & role)
      out += (out.empty() ? "" : ",") + std::string(text);
  return out.empty() ? "none" : out;
}

std::optional<RoleSet> rolesFor(std::string_view method) {
  for (const auto &m : kMethodRoles)
    if (method == m.method)
      return m.roles;
  return std::nullopt;
}

bool isOpenMethod(std::string_view method) {
  auto startsWith = [&](std::string_view prefix) { return method.substr(0, prefix.size()) == prefix; };
  return startsWith("/grpc.health.v1.Health/") || startsWith("/grpc.reflection.v1alpha.ServerReflection/") ||
         startsWith("/grpc.reflection.v1.ServerReflection/");
}

const char *authFailureLabel(AuthFailure failure) {
  if (failure == AuthFailure::kNone)
    return "";
  return kAuthFailureLabels[size_t(failure) - 1];
}

bool parseTokenFile(std::string_view text, const std::string &fileName, TokenTable &out, std::string &error) {
  TokenTable table;
  bool ok = forEachLine(text, fileName, error, [&](unsigned number, std::string_view line, std::string &why) {
    size_t blank = 0;
    while (blank < line.size() && !isBlank(line[blank]))
      ++blank;
    std::string_view token = line.substr(0, blank);
    std::string_view roles = trim(line.substr(blank));
    if (roles.empty()) {
      why = "want 'TOKEN ROLE[,ROLE...]' (no roles)";
      return false;
    }
    for (char c : roles)
      if (isBlank(c)) {
        why = "want 'TOKEN ROLE[,ROLE...]' (roles are separated by commas, without blanks)";
        return false;
      }
    if (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes) {
      why = "a token must have " + std::to_string(kMinTokenBytes) + " to " + std::to_string(kMaxTokenBytes) +
            " characters (this one has " + std::to_string(token.size()) + ")";
      return false;
    }
    for (char c : token)
      if (!isTokenChar(c)) {
        why = "a token may contain only letters, digits and - . _ ~ + / =";
        return false;
      }
    TokenTable::Entry entry{sha256(token), 0, number};
    if (!parseRoles(roles, entry.roles, why))
      return false;
    for (const auto &e : table.entries)
      if (e.digest == entry.digest) {
        why = "the same token as line " + std::to_string(e.line);
        return false;
      }
    table.entries.push_back(entry);
    return true;
  });
  if (ok)
    out = std::move(table);
  return ok;
}

bool parseSubjectFile(std::string_view text, const std::string &fileName, SubjectTable &out, std::string &error) {
  SubjectTable table;
  bool ok = forEachLine(text, fileName, error, [&](unsigned, std::string_view line, std::string &why) {
    size_t blank = line.size();
    while (blank > 0 && !isBlank(line[blank - 1]))
      --blank;
    std::string_view roles = line.substr(blank);
    std::string_view cn = trim(line.substr(0, blank));
    if (cn.empty()) {
      why = "want 'CN ROLE[,ROLE...]'";
      return false;
    }
    if (cn.size() > 256) {
      why = "a CN must have at most 256 bytes";
      return false;
    }
    for (char c : cn)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        why = "control character in the CN";
        return false;
      }
    RoleSet set = 0;
    if (!parseRoles(roles, set, why))
      return false;
    if (!table.roles.emplace(std::string(cn), set).second) {
      why = "CN '" + printable(cn) + "' is listed twice";
      return false;
    }
    return true;
  });
  if (ok)
    out = std::move(table);
  return ok;
}

bool readBoundedFile(const std::string &path, size_t maxBytes, std::string &out, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::string text;
  text.resize(maxBytes + 1);
  in.read(text.data(), std::streamsize(text.size()));
  if (in.bad()) {
    error = path + ": cannot read";
    return false;
  }
  text.resize(size_t(in.gcount()));
  if (text.size() > maxBytes) {
    error = path + ": larger than " + std::to_string(maxBytes) + " bytes";
    return false;
  }
  out = std::move(text);
  return true;
}

Authorizer::Authorizer(std::optional<TokenTable> tokens, std::optional<SubjectTable> subjects)
    : tables_(std::make_shared<const Tables>(Tables{std::move(tokens), std::move(subjects)})) {}

bool Authorizer::load(const AuthOptions &options, Tables &out, std::string &error) {
  std::string text;
  if (!options.tokensFile.empty()) {
    TokenTable tokens;
    if (!readBoundedFile(options.tokensFile, kMaxAuthFileBytes, text, error) ||
        !parseTokenFile(text, options.tokensFile, tokens, error))
      return false;
    out.tokens = std::move(tokens);
  }
  if (!options.subjectsFile.empty()) {
    SubjectTable subjects;
    if (!readBoundedFile(options.subjectsFile, kMaxAuthFileBytes, text, error) ||
        !parseSubjectFile(text, options.subjectsFile, subjects, error))
      return false;
    out.subjects = std::move(subjects);
  }
  return true;
}

std::unique_ptr<Authorizer> Authorizer::create(const AuthOptions &options, std::string &error) {
  Tables tables;
  if (!load(options, tables, error))
    return nullptr;
  auto auth = std::make_unique<Authorizer>(std::move(tables.tokens), std::move(tables.subjects));
  auth->options_ = options;
  return auth;
}

bool Authorizer::reload(std::string &error, std::string *summaryOut) {
  Tables tables;
  bool ok = load(options_, tables, error);
  if (ok) {
    std::lock_guard lock(mu_);
    tables_ = std::make_shared<const Tables>(std::move(tables));
  }
  if (summaryOut)
    *summaryOut = summary();
  return ok;
}

std::shared_ptr<const Authorizer::Tables> Authorizer::tables() const {
  std::lock_guard lock(mu_);
  return tables_;
}

std::string Authorizer::summary() const {
  auto t = tables();
  std::string out;
  if (t->tokens)
    out = std::to_string(t->tokens->entries.size()) + " tokens";
  if (t->subjects)
    out += (out.empty() ? "" : ", ") + std::to_string(t->subjects->roles.size()) + " certificate subjects";
  return out.empty() ? "no credentials" : out;
}

AuthDecision Authorizer::check(std::string_view method, const Metadata &metadata, const PeerIdentity &peer) const {
  if (isOpenMethod(method))
    return {};
  auto t = tables();
  std::string_view shown = methodDisplay(method);
  RoleSet roles = 0;
  std::string who;

  auto [first, last] = metadata.equal_range("authorization");
  size_t headers = size_t(std::distance(first, last));
  if (headers > 0 && t->tokens) {
    if (headers > 1)
      return refuse(grpc::StatusCode::UNAUTHENTICATED, AuthFailure::kBadToken,
                    "more than one 'authorization' metadata entry");
    std::string_view value(first->second.data(), first->second.size());
    constexpr std::string_view kScheme = "bearer ";
    bool bearer = value.size() > kScheme.size();
    for (size_t i = 0; bearer && i < kScheme.size(); ++i)
      bearer = std::tolower(static_cast<unsigned char>(value[i])) == kScheme[i];
    if (!bearer)
      return refuse(grpc::StatusCode::UNAUTHENTICATED, AuthFailure::kBadToken,
                    "the 'authorization' metadata is not 'Bearer TOKEN'");
    std::string_view token = trim(value.substr(kScheme.size()));
    if (token.empty() || token.size() > kMaxTokenBytes)
      return refuse(grpc::StatusCode::UNAUTHENTICATED, AuthFailure::kBadToken,
                    "invalid token (empty or longer than " + std::to_string(kMaxTokenBytes) + " characters)");
    // Constant time: every entry is compared, the match taken without a branch
    // on the bytes.
    auto digest = sha256(token);
    const TokenTable::Entry *match = nullptr;
    for (const auto &e : t->tokens->entries) {
      bool equal = CRYPTO_memcmp(e.digest.data(), digest.data(), digest.size()) == 0;
      match = equal ? &e : match;
    }
    if (!match)
      return refuse(grpc::StatusCode::UNAUTHENTICATED, AuthFailure::kBadToken,
                    "invalid token: not one of msld's --auth-tokens");
    roles = match->roles;
    who = "token";
  } else if (t->subjects && peer.hasClientCert) {
    auto it = t->subjects->roles.find(peer.commonName);
    if (it == t->subjects->roles.end()) {
      std::string message = "client certificate CN '" + printable(peer.commonName) +
                            "' is not in msld's --auth-subjects";
      if (t->tokens)
        message += ", and no 'authorization: Bearer TOKEN' metadata was sent";
      return refuse(grpc::StatusCode::UNAUTHENTICATED, AuthFailure::kUnknownSubject, message);
    }
    roles = it->second;
    who = "client certificate CN '" + printable(peer.commonName) + "'";
  } else if (t->tokens) {
    return refuse(grpc::StatusCode::UNAUTHENTICATED, AuthFailure::kMissingToken,
                  "missing token: msld requires 'authorization: Bearer TOKEN' metadata (mslc: $MSLD_TOKEN or "
                  "--token-file) for " + std::string(shown));
  } else {
    return refuse(grpc::StatusCode::UNAUTHENTICATED, AuthFailure::kNoClientCert,
                  "no client certificate: msld authenticates clients by their TLS certificate "
                  "(--auth-subjects) for " + std::string(shown));
  }

  auto needed = rolesFor(method);
  if (!needed)
    return refuse(grpc::StatusCode::PERMISSION_DENIED, AuthFailure::kPermissionDenied,
                  std::string(shown) + " is not in msld's role table");
  if ((roles & kRoleAdmin) || (roles & *needed))
    return {};
  return refuse(grpc::StatusCode::PERMISSION_DENIED, AuthFailure::kPermissionDenied,
                who + " lacks " + neededText(*needed) + " needed by " + std::string(shown) + " (it has " +
                    roleNames(roles) + ")");
}

} // namespace msl::service
