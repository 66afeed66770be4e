//===- CompiledKernels.h - Execute's kernels, kept by their compile -------===//
//
// An Execute that names its kernel as a compile pays, on every repeat, the
// action cache's key (hashing the sources and options), its lookups, the
// artifacts' reads and the reflection's parse: ~80 us of a cached call that
// should cost little more than its copies. msld keeps the kernels it ran
// by the exact CompileRequest (serialized deterministically: sources,
// files, options, target, outputs and function constants all in it; the
// compiler's identity is fixed for msld's life): the same request bytes
// always compiled to the same module, so a repeat takes it from here. Only
// successful compiles are kept; the least recently used go past
// maxEntries or maxBytes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace msl::service {

/// A kernel's module (bitcode or PTX) and its reflection, ready to run.
struct CompiledKernel {
  std::string module;
  std::string moduleDigest; // its CAS digest's hash ("" when not known)
  nlohmann::json reflection;
};

struct CompiledKernelsOptions {
  /// Kernels kept. Default 256.
  size_t maxEntries = 256;
  /// Their keys' and modules' bytes together. Default 256 MiB.
  size_t maxBytes = 256u << 20;
};

class CompiledKernels {
public:
  explicit CompiledKernels(CompiledKernelsOptions options = {}) : options_(options) {}
  /// The kernel kept for `compileRequest` (serialized), or null.
  std::shared_ptr<const CompiledKernel> find(const std::string &compileRequest);
  /// Keeps `kernel` for `compileRequest` (one larger than maxBytes is not kept).
  void keep(const std::string &compileRequest, std::shared_ptr<const CompiledKernel> kernel);
  size_t size() const;

private:
  struct Entry {
    std::string key;
    std::shared_ptr<const CompiledKernel> kernel;
    size_t bytes;
  };
  CompiledKernelsOptions options_;
  mutable std::mutex mu_;
  std::list<Entry> lru_; // most recently used first
  std::unordered_map<std::string_view, std::list<Entry>::iterator> byKey_;
  size_t bytes_ = 0;
};

} // namespace msl::service
