#include "RequestLog.h"

#include <grpc/support/log.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <mutex>
#include <random>
#include <streambuf>
#include <unistd.h>

namespace msl::service::log {
namespace {

std::atomic<Format> gFormat{Format::Text};
std::atomic<int> gMinLevel{int(Level::Info)};
std::mutex gWriteMu; // one line at a time on fd 2

// A daemon line is cut here (a worker's stderr relayed as one line, say).
constexpr size_t kMaxLineBytes = 64 * 1024;

void writeAll(const std::string &line) {
  std::lock_guard lock(gWriteMu);
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(2, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return; // stderr is gone: nothing to tell
    done += size_t(n);
  }
}

std::string timestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms));
  return buf;
}

// Text mode: a value on one line, whatever the client put in it.
void appendEscaped(std::string &out, std::string_view text) {
  static const char *hex = "0123456789abcdef";
  for (unsigned char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c < 0x20 || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += char(c);
    }
  }
}

std::string textLine(Level level, std::string_view message, std::string_view requestId, const Fields &fields) {
  std::string out = "msld: ";
  if (level >= Level::Warn) {
    out += levelName(level);
    out += ": ";
  }
  appendEscaped(out, message);
  for (const auto &[key, value] : fields) {
    out += ' ';
    out += key;
    out += '=';
    if (auto *s = std::get_if<std::string>(&value)) {
      bool quote = s->empty() || s->find_first_of(" \"=") != std::string::npos;
      if (quote)
        out += '"';
      appendEscaped(out, *s);
      if (quote)
        out += '"';
    } else if (auto *i = std::get_if<int64_t>(&value)) {
      out += std::to_string(*i);
    } else if (auto *d = std::get_if<double>(&value)) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3f", *d);
      out += buf;
    } else {
      out += std::get<bool>(value) ? "true" : "false";
    }
  }
  if (!requestId.empty()) {
    out += " request_id=";
    appendEscaped(out, requestId);
  }
  return out;
}

// Daemon lines without a level of their own (std::cerr, relayed worker
// stderr): a level from their words.
Level guessLevel(std::string_view line) {
  auto has = [&](std::string_view word) { return line.find(word) != std::string_view::npos; };
  if (has("warning"))
    return Level::Warn;
  if (has("error:") || has("failed") || line.rfind("cannot ", 0) == 0)
    return Level::Error;
  return Level::Info;
}

void wrapLine(std::string_view line) {
  if (!line.empty() && line.back() == '\r')
    line.remove_suffix(1);
  if (line.rfind("msld: ", 0) == 0)
    line.remove_prefix(6);
  writeAll(jsonLine(guessLevel(line), line, {}, {}) + "\n");
}

// std::cerr in JSON mode: each thread's text is collected up to its newline
// and written as one JSON object (threads do not interleave within a line).
class JsonLineBuffer final : public std::streambuf {
protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      char ch = traits_type::to_char_type(c);
      xsputn(&ch, 1);
    }
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char *s, std::streamsize n) override {
    std::string &line = pending();
    for (std::streamsize i = 0; i < n; ++i) {
      if (s[i] == '\n' || line.size() >= kMaxLineBytes) {
        wrapLine(line);
        line.clear();
        if (s[i] == '\n')
          continue;
      }
      line += s[i];
    }
    return n;
  }
  int sync() override { return 0; } // a line goes out at its newline

private:
  static std::string &pending() {
    thread_local std::string line;
    return line;
  }
};

void grpcLog(gpr_log_func_args *args) {
  Level level = args->severity == GPR_LOG_SEVERITY_ERROR  ? Level::Error
                : args->severity == GPR_LOG_SEVERITY_INFO ? Level::Info
                                                          : Level::Debug;
  std::string where = std::string(args->file ? args->file : "?") + ":" + std::to_string(args->line);
  writeAll(jsonLine(level, args->message ? args->message : "", {}, {{"source", std::string("grpc")},
                                                                     {"at", where}}) +
           "\n");
}

} // namespace

bool parseFormat(std::string_view name, Format &out) {
  if (name == "text")
    out = Format::Text;
  else if (name == "json")
    out = Format::Json;
  else
    return false;
  return true;
}

bool parseLevel(std::string_view name, Level &out) {
  for (Level l : {Level::Debug, Level::Info, Level::Warn, Level::Error})
    if (name == levelName(l)) {
      out = l;
      return true;
    }
  return false;
}

const char *levelName(Level level) {
  switch (level) {
  case Level::Debug:
    return "debug";
  case Level::Info:
    return "info";
  case Level::Warn:
    return "warn";
  case Level::Error:
    return "error";
  }
  return "info";
}

void configure(Format format, Level minLevel) {
  gMinLevel = int(minLevel);
  gFormat = format;
  if (format == Format::Json) {
    // Never destroyed: threads may log until the process ends, and
    // iostreams' own teardown flushes std::cerr.
    static JsonLineBuffer *buffer = new JsonLineBuffer;
    std::cerr.rdbuf(buffer);
    gpr_set_log_function(grpcLog);
  }
}

Format format() { return gFormat; }

bool enabled(Level level) { return int(level) >= gMinLevel; }

std::string jsonLine(Level level, std::string_view message, std::string_view requestId, const Fields &fields) {
  nlohmann::ordered_json j;
  j["time"] = timestamp();
  j["level"] = levelName(level);
  j["message"] = std::string(message);
  if (!requestId.empty())
    j["request_id"] = std::string(requestId);
  for (const auto &field : fields)
    std::visit([&](const auto &v) { j[field.first] = v; }, field.second);
  // Bytes that are not UTF-8 (a worker's stderr, say) become U+FFFD.
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

void write(Level level, std::string_view message, std::string_view requestId, const Fields &fields) {
  if (!enabled(level))
    return;
  writeAll((gFormat == Format::Json ? jsonLine(level, message, requestId, fields)
                                    : textLine(level, message, requestId, fields)) +
           "\n");
}

std::string sanitizeRequestId(std::string_view id) {
  std::string out(id.substr(0, kMaxRequestIdBytes));
  for (char &c : out)
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e)
      c = '_';
  return out;
}

std::string newRequestId() {
  thread_local std::mt19937_64 rng{[] {
    std::random_device device;
    return (uint64_t(device()) << 32) ^ device() ^
           uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  }()};
  static const char *hex = "0123456789abcdef";
  std::string out;
  for (int half = 0; half < 2; ++half) {
    uint64_t bits = rng();
    for (int i = 0; i < 16; ++i, bits >>= 4)
      out += hex[bits & 15];
  }
  return out;
}

} // namespace msl::service::log
