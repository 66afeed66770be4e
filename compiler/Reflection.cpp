#include "Reflection.h"

#include <nlohmann/json.hpp>

namespace msl::compiler {

static const char *kindName(ArgKind k) {
  switch (k) {
  case ArgKind::Buffer:
    return "buffer";
  case ArgKind::Threadgroup:
    return "threadgroup";
  case ArgKind::Builtin:
    return "builtin";
  }
  return "unknown";
}

std::string reflectionJson(const std::vector<KernelInfo> &kernels, bool nvptx) {
  nlohmann::json out;
  out["kernels"] = nlohmann::json::array();
  for (const auto &k : kernels) {
    nlohmann::json jk;
    jk["name"] = k.name;
    jk["stage"] = "kernel";
    jk["symbol"] = k.symbol;
    jk["arguments"] = nlohmann::json::array();
    // The entry point's parameters: NVPTX takes buffers as pointers and
    // threadgroup arguments as byte offsets into dynamic shared memory; the
    // CPU entry takes (void **args, const uint32_t launch[12]) with args in
    // this same order.
    nlohmann::json params = nlohmann::json::array();
    for (const auto &a : k.args) {
      nlohmann::json ja;
      ja["name"] = a.name;
      ja["kind"] = kindName(a.kind);
      ja["type"] = a.type;
      ja["address_space"] = a.addressSpace;
      if (a.kind != ArgKind::Builtin) {
        ja["access"] = a.access;
        ja["index"] = *a.index;
        ja["reference"] = a.isReference;
        params.push_back(std::string(a.kind == ArgKind::Buffer ? "buffer:" : "threadgroup_offset:") +
                         std::to_string(*a.index));
      } else {
        ja["builtin"] = a.builtin;
      }
      jk["arguments"].push_back(std::move(ja));
    }
    jk["entry"] = {{"convention", nvptx ? "ptx-kernel" : "cpu-args-launch"}, {"params", params}};
    out["kernels"].push_back(std::move(jk));
  }
  return out.dump(2);
}

} // namespace msl::compiler
