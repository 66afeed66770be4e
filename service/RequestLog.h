//===- RequestLog.h - msld's log: text or JSON lines, request ids ---------===//
//
// msld logs to stderr. `--log-format text` (the default) keeps the daemon's
// plain lines ("msld: serving gRPC on port 8980, ..."); `--log-format json`
// makes every line of stderr one JSON object:
//
//   {"time":"2026-12-02T03:55:36.123Z","level":"info","message":"rpc finished",
//    "request_id":"4f1c...","method":"Compile","code":"OK","duration_ms":2.41,...}
//
// In JSON mode the daemon's other lines (written to std::cerr anywhere, the
// workers' stderr that msld relays, gRPC's own log) are wrapped too, one
// object per line, so a log collector never sees a line that is not JSON.
//
// Every RPC has a request id: the client's `x-request-id` metadata when it
// sends one (sanitized: printable ASCII without blanks, at most
// kMaxRequestIdBytes), else one msld generates (32 hex digits). msld logs it
// on the RPC's lines and returns it in the response's initial metadata
// (`x-request-id`).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace msl::service::log {

enum class Format { Text, Json };
enum class Level { Debug = 0, Info = 1, Warn = 2, Error = 3 };

/// The metadata key of request ids, in requests and responses.
inline constexpr const char *kRequestIdHeader = "x-request-id";
/// Longest request id kept (a longer one is cut).
inline constexpr std::size_t kMaxRequestIdBytes = 128;

/// "text"/"json" and "debug"/"info"/"warn"/"error"; false when unknown.
bool parseFormat(std::string_view name, Format &out);
bool parseLevel(std::string_view name, Level &out);
const char *levelName(Level level);

/// Sets the format and the lowest level of the structured lines (start-up;
/// not thread-safe against concurrent logging). Json also wraps std::cerr
/// and gRPC's log so that every stderr line is a JSON object.
void configure(Format format, Level minLevel);
Format format();
bool enabled(Level level);

using Value = std::variant<std::string, int64_t, double, bool>;
using Fields = std::vector<std::pair<std::string, Value>>;

/// One line: JSON {"time","level","message","request_id"?,fields...}, or
/// text "msld: MESSAGE key=value ... request_id=ID" (control bytes escaped).
/// Thread-safe; each line is one write(2).
void write(Level level, std::string_view message, std::string_view requestId = {}, const Fields &fields = {});

/// A client's request id made safe: bytes outside printable ASCII (0x21 -
/// 0x7e) become '_', and it is cut to kMaxRequestIdBytes. Empty stays empty.
std::string sanitizeRequestId(std::string_view id);
/// A fresh request id: 32 lowercase hex digits (128 random bits).
std::string newRequestId();

/// The JSON line of `message` (exposed for tests): what write() prints in
/// JSON mode, without the newline.
std::string jsonLine(Level level, std::string_view message, std::string_view requestId, const Fields &fields);

} // namespace msl::service::log
