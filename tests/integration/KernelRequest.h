//===- KernelRequest.h - An ExecuteRequest as a Metal host encodes it -----===//
//
// The kernel tests (ExecuteKernelsTest, CorpusKernelsTest) build their
// requests with this: buffers and their bindings, setBytes, threadgroup
// memory, textures, function constants and the dispatch.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "DaemonFixture.h"

#include "msl/v1/execute.pb.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace msl::test {

/// A kernel that never ends (the atomic keeps its loop from being optimized
/// away): spin, with a counter at [[buffer(0)]]. Only a time limit stops it.
inline constexpr const char *kSpinForeverSource = R"(#include <metal_stdlib>
using namespace metal;
kernel void spin(device atomic_uint *counter [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  while (true)
    atomic_fetch_add_explicit(counter, 1u, memory_order_relaxed);
}
)";

struct KernelRequest {
  msl::v1::ExecuteRequest req;

  KernelRequest() = default;
  /// The kernel `name` of `source`, compiled with `options`.
  KernelRequest(const std::string &source, const std::string &name, std::vector<std::string> options = {}) {
    *req.mutable_compile() = compileRequest(source, std::move(options));
    req.set_kernel(name);
  }
  /// A new buffer with these bytes; its position in req.buffers.
  uint32_t buffer(const std::string &bytes) {
    req.add_buffers()->set_inline_(bytes);
    return uint32_t(req.buffers_size() - 1);
  }
  template <class T> uint32_t buffer(const std::vector<T> &values) { return buffer(bytesOf(values)); }
  /// setBuffer:offset:atIndex:.
  void bind(uint32_t index, uint32_t buffer, uint64_t offset = 0) {
    auto *b = req.add_buffer_bindings();
    b->set_index(index);
    b->set_buffer(buffer);
    b->set_offset(offset);
  }
  /// A new buffer bound at `index` (offset 0); its position.
  template <class T> uint32_t bindNew(uint32_t index, const std::vector<T> &values) {
    uint32_t b = buffer(values);
    bind(index, b);
    return b;
  }
  /// setBytes:length:atIndex: of one value.
  template <class T> void bytes(uint32_t index, const T &value) {
    auto *b = req.add_bytes();
    b->set_index(index);
    b->set_data(std::string(reinterpret_cast<const char *>(&value), sizeof value));
  }
  void constant(const std::string &key, const std::string &value) {
    (*req.mutable_compile()->mutable_function_constants())[key] = value;
  }
  void threadgroupMemory(uint32_t index, uint32_t length) {
    auto *t = req.add_threadgroup_memory();
    t->set_index(index);
    t->set_length(length);
  }
  msl::v1::TextureBinding &texture(uint32_t index, msl::v1::TextureBinding::Type type,
                                   msl::v1::TextureBinding::PixelFormat format, uint32_t width, uint32_t height,
                                   uint32_t layers, const std::string *contents) {
    auto *t = req.add_textures();
    t->set_index(index);
    t->set_type(type);
    t->set_format(format);
    t->set_width(width);
    t->set_height(height);
    t->set_depth(1);
    t->set_array_length(layers);
    if (contents)
      t->mutable_contents()->set_inline_(*contents);
    return *t;
  }
  /// dispatchThreads.
  void threads(uint32_t x, uint32_t y = 1, uint32_t z = 1) { set(req.mutable_dispatch()->mutable_threads(), x, y, z); }
  /// dispatchThreadgroups.
  void threadgroups(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    set(req.mutable_dispatch()->mutable_threadgroups(), x, y, z);
  }
  void perThreadgroup(uint32_t x, uint32_t y = 1, uint32_t z = 1) {
    set(req.mutable_dispatch()->mutable_threads_per_threadgroup(), x, y, z);
  }

private:
  static void set(msl::v1::Size3 *s, uint32_t x, uint32_t y, uint32_t z) {
    s->set_x(x);
    s->set_y(y);
    s->set_z(z);
  }
};

/// n floats k / denominator with k uniform in [lo, hi]: exactly
/// representable (for small k in half and bfloat too), and so are their
/// sums and products in the tests.
inline std::vector<float> gridFloats(size_t n, unsigned seed, int lo, int hi, float denominator = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<float> v(n);
  for (auto &x : v)
    x = float(dist(rng)) / denominator;
  return v;
}

} // namespace msl::test
