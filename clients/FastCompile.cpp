#include "msl/client/FastCompile.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <utility>

namespace msl::client {
namespace {

using Clock = std::chrono::steady_clock;

// HTTP/2 frame types and flags.
enum : std::uint8_t { kData = 0, kHeaders = 1, kRstStream = 3, kSettings = 4, kPing = 6, kGoAway = 7, kContinuation = 9 };
enum : std::uint8_t { kEndStream = 0x1, kAck = 0x1, kEndHeaders = 0x4, kPadded = 0x8, kPriority = 0x20 };

void putFrameHeader(std::string& out, std::size_t length, std::uint8_t type, std::uint8_t flags, std::uint32_t stream) {
  out += static_cast<char>((length >> 16) & 0xff);
  out += static_cast<char>((length >> 8) & 0xff);
  out += static_cast<char>(length & 0xff);
  out += static_cast<char>(type);
  out += static_cast<char>(flags);
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((stream >> shift) & 0xff);
}

void put32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

// An HPACK integer with an N-bit prefix (RFC 7541 5.1); `first` holds the
// representation's flag bits.
void putInt(std::string& out, std::uint8_t first, int prefix, std::size_t v) {
  const std::size_t max = (1u << prefix) - 1;
  if (v < max) {
    out += static_cast<char>(first | v);
    return;
  }
  out += static_cast<char>(first | max);
  v -= max;
  while (v >= 128) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void putString(std::string& out, std::string_view s) {  // never Huffman-coded
  putInt(out, 0, 7, s.size());
  out += s;
}

// "Literal Header Field without Indexing" with a static-table name (or a
// new name when `index` is 0).
void putHeader(std::string& out, std::size_t index, std::string_view name, std::string_view value,
               bool sensitive = false) {
  putInt(out, sensitive ? 0x10 : 0x00, 4, index);
  if (index == 0) putString(out, name);
  putString(out, value);
}

constexpr std::array<std::pair<const char*, const char*>, 61> kStaticTable{{
    {":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"}, {":path", "/index.html"},
    {":scheme", "http"}, {":scheme", "https"}, {":status", "200"}, {":status", "204"}, {":status", "206"},
    {":status", "304"}, {":status", "400"}, {":status", "404"}, {":status", "500"}, {"accept-charset", ""},
    {"accept-encoding", "gzip, deflate"}, {"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""},
    {"access-control-allow-origin", ""}, {"age", ""}, {"allow", ""}, {"authorization", ""},
    {"cache-control", ""}, {"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""},
    {"content-length", ""}, {"content-location", ""}, {"content-range", ""}, {"content-type", ""},
    {"cookie", ""}, {"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""}, {"from", ""}, {"host", ""},
    {"if-match", ""}, {"if-modified-since", ""}, {"if-none-match", ""}, {"if-range", ""},
    {"if-unmodified-since", ""}, {"last-modified", ""}, {"link", ""}, {"location", ""}, {"max-forwards", ""},
    {"proxy-authenticate", ""}, {"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
    {"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
    {"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""}, {"www-authenticate", ""},
}};

struct Field {
  std::string name, value;
  bool huffman = false;  // the value (or name) is Huffman-coded: not decoded here
};

// An HPACK decoder without Huffman decoding: a field whose strings are
// Huffman-coded is kept with `huffman` set (the caller gives up if it needs
// it); one that would enter the dynamic table so gives up at once, since its
// size there is not known.
class HpackDecoder {
 public:
  bool decode(std::string_view block, std::vector<Field>* out) {
    std::size_t p = 0;
    while (p < block.size()) {
      const auto b = static_cast<std::uint8_t>(block[p]);
      std::size_t index;
      if (b & 0x80) {  // indexed
        if (!readInt(block, p, 7, &index)) return false;
        Field f;
        if (!lookup(index, &f, true)) return false;
        out->push_back(std::move(f));
      } else if ((b & 0xe0) == 0x20) {  // dynamic table size update
        if (!readInt(block, p, 5, &index) || index > maxAllowed_) return false;
        max_ = index;
        evict();
      } else {
        const bool incremental = (b & 0xc0) == 0x40;
        if (!readInt(block, p, incremental ? 6 : 4, &index)) return false;
        Field f;
        if (index == 0) {
          if (!readString(block, p, &f.name, &f.huffman)) return false;
        } else if (!lookup(index, &f, false)) {
          return false;
        }
        bool huff = false;
        if (!readString(block, p, &f.value, &huff)) return false;
        f.huffman = f.huffman || huff;
        if (incremental) {
          if (f.huffman) return false;
          table_.push_front({f.name, f.value});
          size_ += f.name.size() + f.value.size() + 32;
          evict();
        }
        out->push_back(std::move(f));
      }
    }
    return true;
  }
  void setMaxAllowed(std::size_t n) { maxAllowed_ = n; }

 private:
  static bool readInt(std::string_view s, std::size_t& p, int prefix, std::size_t* v) {
    if (p >= s.size()) return false;
    const std::size_t max = (1u << prefix) - 1;
    *v = static_cast<std::uint8_t>(s[p++]) & max;
    if (*v < max) return true;
    for (int shift = 0; shift < 28; shift += 7) {
      if (p >= s.size()) return false;
      const auto b = static_cast<std::uint8_t>(s[p++]);
      *v += std::size_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  }
  static bool readString(std::string_view s, std::size_t& p, std::string* out, bool* huffman) {
    if (p >= s.size()) return false;
    *huffman = static_cast<std::uint8_t>(s[p]) & 0x80;
    std::size_t n;
    if (!readInt(s, p, 7, &n) || n > s.size() - p) return false;
    out->assign(s.substr(p, n));
    p += n;
    return true;
  }
  bool lookup(std::size_t index, Field* f, bool withValue) const {
    if (index == 0) return false;
    if (index <= kStaticTable.size()) {
      f->name = kStaticTable[index - 1].first;
      if (withValue) f->value = kStaticTable[index - 1].second;
      return true;
    }
    index -= kStaticTable.size() + 1;
    if (index >= table_.size()) return false;
    f->name = table_[index].first;
    if (withValue) f->value = table_[index].second;
    return true;
  }
  void evict() {
    while (size_ > max_ && !table_.empty()) {
      size_ -= table_.back().first.size() + table_.back().second.size() + 32;
      table_.pop_back();
    }
  }
  std::deque<std::pair<std::string, std::string>> table_;
  std::size_t size_ = 0, max_ = 4096, maxAllowed_ = 4096;
};

// grpc-message is percent-encoded (gRPC's PROTOCOL-HTTP2).
std::string percentDecode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) ? (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10)) : -1; };
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

class Socket {
 public:
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connect(const std::string& host, const std::string& port, Clock::time_point deadline) {
    deadline_ = deadline;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* list = nullptr;
    if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &list) != 0) return false;
    for (addrinfo* a = list; a; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd_ < 0) continue;
      int one = 1;
      ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      if (::connect(fd_, a->ai_addr, a->ai_addrlen) == 0) break;
      ::close(fd_);
      fd_ = -1;
    }
    ::freeaddrinfo(list);
    return fd_ >= 0;
  }
  bool writeAll(std::string_view data) {
    while (!data.empty()) {
      if (!wait(POLLOUT)) return false;
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
  }
  // Appends what arrives to `buffer`; false on EOF, error or the deadline.
  bool readSome(std::string& buffer) {
    char chunk[65536];
    while (true) {
      if (!wait(POLLIN)) return false;
      ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      buffer.append(chunk, static_cast<std::size_t>(n));
      return true;
    }
  }

 private:
  bool wait(short events) {
    while (true) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      if (left <= 0) return !(timedOut_ = true);
      pollfd p{fd_, events, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1 << 30)));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) continue;  // the deadline, checked above
      return r > 0;
    }
  }
  int fd_ = -1;
  Clock::time_point deadline_;
  bool timedOut_ = false;

 public:
  bool timedOut() const { return timedOut_; }
};

// "HOST:PORT", "[V6]:PORT"; false for gRPC URIs (unix:, dns:///...).
bool splitAddress(const std::string& address, std::string* host, std::string* port) {
  if (address.find("://") != std::string::npos || address.rfind("unix:", 0) == 0 ||
      address.rfind("ipv4:", 0) == 0 || address.rfind("ipv6:", 0) == 0 || address.rfind("dns:", 0) == 0)
    return false;
  std::size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (host->size() >= 2 && host->front() == '[' && host->back() == ']') *host = host->substr(1, host->size() - 2);
  return !host->empty() && port->find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::optional<Result<msl::v1::CompileResponse>> fastCompile(const ClientOptions& options,
                                                            const msl::v1::CompileRequest& request) {
  if (options.credentials || options.tls.enabled) return std::nullopt;
  std::string host, port;
  if (!splitAddress(options.address, &host, &port)) return std::nullopt;
  std::string message;
  if (!request.SerializeToString(&message) || message.size() > kFastCompileMaxRequestBytes) return std::nullopt;

  const auto deadline = Clock::now() + options.call_deadline;
  Socket socket;
  if (!socket.connect(host, port, deadline)) return std::nullopt;

  // Preface, SETTINGS (no push, no dynamic table for the server's headers,
  // the largest windows), the connection's window, HEADERS, DATA.
  std::string out = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
  putFrameHeader(out, 18, kSettings, 0, 0);
  out += std::string("\x00\x02", 2);
  put32(out, 0);  // SETTINGS_ENABLE_PUSH
  out += std::string("\x00\x01", 2);
  put32(out, 0);  // SETTINGS_HEADER_TABLE_SIZE
  out += std::string("\x00\x04", 2);
  put32(out, 0x7fffffff);  // SETTINGS_INITIAL_WINDOW_SIZE
  putFrameHeader(out, 4, 8 /* WINDOW_UPDATE */, 0, 0);
  put32(out, 0x7fffffff - 65535);
  std::string block;
  block += '\x83';  // :method POST
  block += '\x86';  // :scheme http
  putHeader(block, 4, "", "/msl.v1.Compiler/Compile");
  putHeader(block, 1, "", options.address);
  putHeader(block, 31, "", "application/grpc");
  putHeader(block, 0, "te", "trailers");
  const auto timeoutMs = std::max<long long>(1, options.call_deadline.count());
  putHeader(block, 0, "grpc-timeout", std::to_string(std::min<long long>(timeoutMs, 99999999)) + "m");
  if (!options.auth_token.empty()) putHeader(block, 0, "authorization", "Bearer " + options.auth_token, true);
  if (!options.request_id.empty()) putHeader(block, 0, "x-request-id", options.request_id);
  if (block.size() > 16384) return std::nullopt;
  putFrameHeader(out, block.size(), kHeaders, kEndHeaders, 1);
  out += block;
  std::string payload(1, '\0');
  put32(payload, static_cast<std::uint32_t>(message.size()));
  payload += message;
  for (std::size_t at = 0; at < payload.size(); at += 16384) {
    std::size_t n = std::min<std::size_t>(16384, payload.size() - at);
    putFrameHeader(out, n, kData, at + n == payload.size() ? kEndStream : 0, 1);
    out.append(payload, at, n);
  }
  if (!socket.writeAll(out)) return std::nullopt;

  HpackDecoder hpack;  // the server may use 4096 bytes of table until it has our SETTINGS
  std::string in, headerBlock, data;
  std::vector<Field> headers;
  bool ended = false;
  std::size_t p = 0;
  while (!ended) {
    while (in.size() - p < 9 || in.size() - p < 9 + ((std::size_t(std::uint8_t(in[p])) << 16) |
                                                     (std::size_t(std::uint8_t(in[p + 1])) << 8) |
                                                     std::uint8_t(in[p + 2]))) {
      if (socket.readSome(in)) continue;
      // Past the deadline the server has had its time: that is the answer
      // (gRPC's client would only wait as long again).
      if (socket.timedOut())
        return Result<msl::v1::CompileResponse>(grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"));
      return std::nullopt;
    }
    const std::size_t length = (std::size_t(std::uint8_t(in[p])) << 16) | (std::size_t(std::uint8_t(in[p + 1])) << 8) |
                               std::uint8_t(in[p + 2]);
    const auto type = std::uint8_t(in[p + 3]);
    const auto flags = std::uint8_t(in[p + 4]);
    const std::uint32_t stream = ((std::uint32_t(std::uint8_t(in[p + 5])) & 0x7f) << 24) |
                                 (std::uint32_t(std::uint8_t(in[p + 6])) << 16) |
                                 (std::uint32_t(std::uint8_t(in[p + 7])) << 8) | std::uint8_t(in[p + 8]);
    std::string_view body(in.data() + p + 9, length);
    p += 9 + length;
    // Padding and priority of DATA and HEADERS.
    auto unpad = [&](bool priority) {
      std::size_t pad = 0;
      if (flags & kPadded) {
        if (body.empty()) return false;
        pad = std::uint8_t(body[0]);
        body.remove_prefix(1);
      }
      if (priority && (flags & kPriority)) {
        if (body.size() < 5) return false;
        body.remove_prefix(5);
      }
      if (pad > body.size()) return false;
      body.remove_suffix(pad);
      return true;
    };
    switch (type) {
      case kSettings:
        if (!(flags & kAck)) {
          std::string ack;
          putFrameHeader(ack, 0, kSettings, kAck, 0);
          if (!socket.writeAll(ack)) return std::nullopt;
        }
        break;
      case kPing:
        if (!(flags & kAck) && length == 8) {
          std::string pong;
          putFrameHeader(pong, 8, kPing, kAck, 0);
          pong += body;
          if (!socket.writeAll(pong)) return std::nullopt;
        }
        break;
      case kGoAway:
        if (length < 8) return std::nullopt;
        if ((std::uint32_t(std::uint8_t(body[0]) & 0x7f) << 24 | std::uint32_t(std::uint8_t(body[1])) << 16 |
             std::uint32_t(std::uint8_t(body[2])) << 8 | std::uint8_t(body[3])) < 1)
          return std::nullopt;  // our stream will not be processed
        break;
      case kRstStream:
        if (stream == 1) return std::nullopt;
        break;
      case kData:
        if (stream != 1) break;
        if (!unpad(false)) return std::nullopt;
        data += body;
        if (flags & kEndStream) ended = true;
        break;
      case kHeaders:
      case kContinuation:
        if (stream != 1) return std::nullopt;
        if (type == kHeaders && !unpad(true)) return std::nullopt;
        headerBlock += body;
        if (type == kHeaders && (flags & kEndStream)) ended = true;
        if (flags & kEndHeaders) {
          if (!hpack.decode(headerBlock, &headers)) return std::nullopt;
          headerBlock.clear();
        } else if (ended) {
          // END_STREAM on a HEADERS whose CONTINUATION follows: read on.
          ended = false;
          while (true) {
            while (in.size() - p < 9) if (!socket.readSome(in)) return std::nullopt;
            const std::size_t n = (std::size_t(std::uint8_t(in[p])) << 16) |
                                  (std::size_t(std::uint8_t(in[p + 1])) << 8) | std::uint8_t(in[p + 2]);
            while (in.size() - p < 9 + n) if (!socket.readSome(in)) return std::nullopt;
            if (std::uint8_t(in[p + 3]) != kContinuation) return std::nullopt;
            const bool last = std::uint8_t(in[p + 4]) & kEndHeaders;
            headerBlock.append(in, p + 9, n);
            p += 9 + n;
            if (last) break;
          }
          if (!hpack.decode(headerBlock, &headers)) return std::nullopt;
          headerBlock.clear();
          ended = true;
        }
        break;
      default:
        break;  // PRIORITY, WINDOW_UPDATE, unknown types
    }
    if (p > 65536) {
      in.erase(0, p);
      p = 0;
    }
  }

  std::optional<int> code;
  std::string statusMessage;
  for (const auto& f : headers) {
    if (f.name == ":status") {
      if (f.huffman || f.value != "200") return std::nullopt;
    } else if (f.name == "grpc-status") {
      if (f.huffman) return std::nullopt;
      try {
        code = std::stoi(f.value);
      } catch (...) {
        return std::nullopt;
      }
    } else if (f.name == "grpc-message") {
      if (f.huffman) return std::nullopt;
      statusMessage = percentDecode(f.value);
    } else if (f.name == "grpc-encoding" && !f.huffman && f.value != "identity") {
      return std::nullopt;
    }
  }
  if (!code) return std::nullopt;
  if (*code != 0) return Result<msl::v1::CompileResponse>(grpc::Status(static_cast<grpc::StatusCode>(*code), statusMessage));
  if (data.size() < 5 || data[0] != 0) return std::nullopt;
  const std::size_t n = (std::size_t(std::uint8_t(data[1])) << 24) | (std::size_t(std::uint8_t(data[2])) << 16) |
                        (std::size_t(std::uint8_t(data[3])) << 8) | std::uint8_t(data[4]);
  if (n != data.size() - 5) return std::nullopt;
  msl::v1::CompileResponse response;
  if (!response.ParseFromArray(data.data() + 5, static_cast<int>(n))) return std::nullopt;
  return Result<msl::v1::CompileResponse>(std::move(response));
}

}  // namespace msl::client
