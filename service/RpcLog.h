//===- RpcLog.h - One RPC's request id and log lines ----------------------===//
//
// Every call msld serves, over gRPC (Server.cpp) or its local socket
// (LocalCalls.h), logs the same lines (RequestLog.h): "rpc started" (debug)
// and "rpc finished" with the status code and duration (info when OK, warn
// or error with the message otherwise), under the client's request id
// (sanitized) or a new one.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "RequestLog.h"

#include <grpcpp/support/status.h>

#include <chrono>
#include <string>
#include <string_view>

namespace msl::service {

class RpcLog {
public:
  /// `requestId` and `clientId` as the client sent them (empty: none).
  RpcLog(const char *method, std::string peer, std::string_view requestId, std::string_view clientId)
      : method_(method), peer_(std::move(peer)) {
    if (!requestId.empty())
      id_ = log::sanitizeRequestId(requestId);
    if (!clientId.empty())
      clientId_ = log::sanitizeRequestId(clientId.substr(0, 64));
    if (id_.empty())
      id_ = log::newRequestId();
    if (log::enabled(log::Level::Debug))
      log::write(log::Level::Debug, "rpc started", id_, baseFields());
  }
  const std::string &id() const { return id_; }
  /// Logs the RPC's end (once); `extra` fields are added (cache_hit, device).
  void finish(const grpc::Status &status, log::Fields extra = {}) {
    if (finished_)
      return;
    finished_ = true;
    static constexpr const char *kCodes[] = {
        "OK",       "CANCELLED",         "UNKNOWN",      "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
        "NOT_FOUND", "ALREADY_EXISTS",   "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
        "ABORTED",  "OUT_OF_RANGE",      "UNIMPLEMENTED", "INTERNAL",        "UNAVAILABLE",
        "DATA_LOSS", "UNAUTHENTICATED"};
    int code = int(status.error_code());
    log::Level level = status.ok() ? log::Level::Info
                       : code == grpc::StatusCode::INTERNAL || code == grpc::StatusCode::UNKNOWN ||
                               code == grpc::StatusCode::DATA_LOSS
                           ? log::Level::Error
                           : log::Level::Warn;
    if (!log::enabled(level))
      return;
    log::Fields fields = baseFields();
    fields.emplace_back("code", std::string(code >= 0 && code <= 16 ? kCodes[code] : "UNKNOWN"));
    fields.emplace_back("duration_ms",
                        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count());
    for (auto &f : extra)
      fields.push_back(std::move(f));
    if (!status.ok())
      fields.emplace_back("error", status.error_message().substr(0, 1024));
    log::write(level, "rpc finished", id_, fields);
  }

private:
  log::Fields baseFields() const {
    log::Fields fields{{"method", std::string(method_)}, {"peer", peer_}};
    if (!clientId_.empty())
      fields.emplace_back("client_id", clientId_);
    return fields;
  }
  const char *method_;
  std::string peer_, id_, clientId_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  bool finished_ = false;
};

} // namespace msl::service
