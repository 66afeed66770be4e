// Execute calls over msld's local socket instead of gRPC (the protocol:
// service/LocalCalls.h), for a Client whose options name local_socket.
// Connections are opened as calls need them and kept for the next call; one
// call at a time on each, so concurrent callers get one each.
#pragma once

#include "msl/client/Client.h"
#include "msl/v1/execute.pb.h"
#include "msl/v1/local.pb.h"

#include <mutex>
#include <string>
#include <vector>

namespace msl::client {

class LocalChannel {
 public:
  explicit LocalChannel(std::string socket_path) : path_(std::move(socket_path)) {}
  ~LocalChannel();
  LocalChannel(const LocalChannel&) = delete;
  LocalChannel& operator=(const LocalChannel&) = delete;

  // One Execute with `options`' deadline, token, request id and busy_poll.
  grpc::Status execute(const msl::v1::ExecuteRequest& request, msl::v1::ExecuteResponse* response,
                       const ClientOptions& options);

 private:
  // An idle connection, or a new one (said hello, got "OK"); -1 and `error`.
  int take(std::chrono::steady_clock::time_point deadline, grpc::Status* error);
  void giveBack(int fd);
  // One reply frame, polling until `spinUntil`, by `deadline`; false and
  // `error` when none came whole.
  bool readReply(int fd, std::chrono::steady_clock::time_point spinUntil, std::chrono::steady_clock::time_point deadline,
                 const ClientOptions& options, msl::v1::LocalExecuteReply* reply, grpc::Status* error);
  grpc::Status failed(grpc::StatusCode code, const std::string& why) const;

  const std::string path_;
  std::mutex mu_;
  std::vector<int> idle_;
};

}  // namespace msl::client
