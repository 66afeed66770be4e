// One Compile RPC without gRPC's machinery, for mslc's cache hits.
//
// `mslc -c` runs once per shader in a build, and on a cache hit the RPC is
// most of its time; gRPC's client costs milliseconds of that before the
// first byte is sent (grpc_init's threads, the channel, the resolver) and
// after the last (their teardown). fastCompile speaks the few parts of
// HTTP/2 (RFC 9113) and HPACK (RFC 7541) a plaintext unary gRPC call needs,
// over one blocking socket, and gives up -- returns nullopt, so that the
// caller makes the call with msl::client::Client instead -- on anything it
// does not handle: TLS or custom credentials, a target that is not
// HOST:PORT, a request larger than HTTP/2's initial flow-control window,
// a connection that fails, a Huffman-coded header it needs, a compressed
// message, a reset stream. A status the server sends (grpc-status) is a
// result like any other.
#pragma once

#include <optional>

#include "msl/client/Client.h"

namespace msl::client {

// The largest serialized request fastCompile sends (what fits HTTP/2's
// initial 64 KiB windows with the gRPC message prefix).
inline constexpr std::size_t kFastCompileMaxRequestBytes = 65535 - 5;

std::optional<Result<msl::v1::CompileResponse>> fastCompile(const ClientOptions& options,
                                                            const msl::v1::CompileRequest& request);

}  // namespace msl::client
