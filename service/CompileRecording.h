//===- CompileRecording.h - Compiles recorded here, replayed elsewhere ----===//
//
// GPU machines lack the LLVM libraries the compile worker needs (hundreds of
// MB), but msld must compile what it runs. For end-to-end runs there
// (scripts/gpu-e2e.sh), the compiles are made here and replayed there:
//  - msld-compile-worker with MSLD_COMPILE_RECORD_DIR set writes each
//    response it sends to DIR/<key>, and its identity to DIR/identity;
//  - msld-replay-compile-worker (installed there as msld-compile-worker)
//    reads MSLD_COMPILE_REPLAY_DIR and answers each request with the
//    recorded response, or a failed compile saying it was not recorded.
// The key is the SHA-256 of the request's deterministic serialization (its
// function-constant map in key order), so msld's compiles on either side
// meet the same key.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "msl/internal/worker.pb.h"

#include <string>

namespace msl::service {

/// Lowercase hex SHA-256 of `request` serialized deterministically.
std::string recordingKey(const msl::internal::WorkerRequest &request);

/// Writes `response` under `request`'s key in `dir` (best effort: a
/// recording that cannot be written is skipped).
void recordCompile(const std::string &dir, const msl::internal::WorkerRequest &request,
                   const msl::internal::WorkerResponse &response);

/// The response recorded for `request` in `dir`; false when there is none.
bool replayCompile(const std::string &dir, const msl::internal::WorkerRequest &request,
                   msl::internal::WorkerResponse &response);

} // namespace msl::service
