//===- msl/cache/Status.h - Error handling for the cache library -*- C++ -*-===//
//
// A small Status / Result<T> pair in the spirit of llvm::Error/Expected and
// rocksdb::Status, so callers get a code they can map to a gRPC status plus a
// human-readable message, without exceptions.
//
//===----------------------------------------------------------------------===//
#ifndef MSL_CACHE_STATUS_H
#define MSL_CACHE_STATUS_H

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace msl::cache {

class [[nodiscard]] Status {
public:
  enum class Code {
    Ok,
    /// Malformed input: bad hash, negative size, digest/bytes mismatch.
    InvalidArgument,
    /// The blob / action result is not in the store. Corrupt entries are
    /// reported as NotFound as well: to the caller they are simply missing.
    NotFound,
    /// Input larger than StoreOptions::max_blob_bytes.
    TooLarge,
    /// The database could not be opened, read or written.
    IOError,
    /// Stopped on request before it finished (ScrubOptions::cancel).
    Cancelled,
  };

  Status() = default;
  static Status ok() { return Status(); }
  static Status invalidArgument(std::string Msg) {
    return Status(Code::InvalidArgument, std::move(Msg));
  }
  static Status notFound(std::string Msg) {
    return Status(Code::NotFound, std::move(Msg));
  }
  static Status tooLarge(std::string Msg) {
    return Status(Code::TooLarge, std::move(Msg));
  }
  static Status ioError(std::string Msg) {
    return Status(Code::IOError, std::move(Msg));
  }
  static Status cancelled(std::string Msg) {
    return Status(Code::Cancelled, std::move(Msg));
  }

  bool isOk() const { return C == Code::Ok; }
  bool isNotFound() const { return C == Code::NotFound; }
  Code code() const { return C; }
  const std::string &message() const { return Msg; }
  /// "<CodeName>: <message>", for logs.
  std::string toString() const;

private:
  Status(Code C, std::string Msg) : C(C), Msg(std::move(Msg)) {}
  Code C = Code::Ok;
  std::string Msg;
};

/// Either a value or a non-OK Status. Test with `if (R)` / `R.isOk()`, then
/// use `*R`, `R->`, or `R.take()`; on failure read `R.status()`.
template <typename T> class [[nodiscard]] Result {
public:
  Result(T Value) : V(std::move(Value)) {}
  Result(Status S) : V(std::move(S)) {
    assert(!std::get<Status>(V).isOk() && "Result built from an OK Status");
  }

  bool isOk() const { return std::holds_alternative<T>(V); }
  explicit operator bool() const { return isOk(); }
  bool isNotFound() const { return !isOk() && status().isNotFound(); }

  /// The error; an OK Status when this holds a value.
  Status status() const {
    return isOk() ? Status::ok() : std::get<Status>(V);
  }

  T &operator*() & { return std::get<T>(V); }
  const T &operator*() const & { return std::get<T>(V); }
  T *operator->() { return &std::get<T>(V); }
  const T *operator->() const { return &std::get<T>(V); }
  /// Moves the value out; only valid when isOk().
  T take() { return std::move(std::get<T>(V)); }

private:
  std::variant<T, Status> V;
};

} // namespace msl::cache

#endif // MSL_CACHE_STATUS_H
