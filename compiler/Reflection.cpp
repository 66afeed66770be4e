#include "Reflection.h"

#include <nlohmann/json.hpp>

namespace msl::compiler {

const char *stageName(Stage s) {
  switch (s) {
  case Stage::Kernel:
    return "kernel";
  case Stage::Vertex:
    return "vertex";
  case Stage::Fragment:
    return "fragment";
  case Stage::Mesh:
    return "mesh";
  case Stage::Object:
    return "object";
  }
  return "unknown";
}

static const char *kindName(ArgKind k) {
  switch (k) {
  case ArgKind::Buffer:
    return "buffer";
  case ArgKind::Threadgroup:
    return "threadgroup";
  case ArgKind::Texture:
    return "texture";
  case ArgKind::Sampler:
    return "sampler";
  case ArgKind::StageIn:
    return "stage_in";
  case ArgKind::Builtin:
    return "builtin";
  }
  return "unknown";
}

static nlohmann::json variablesJson(const std::vector<StageVariable> &vars) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto &v : vars)
    out.push_back({{"name", v.name}, {"type", v.type}, {"attributes", v.attributes}});
  return out;
}

std::string reflectionJson(const std::vector<ShaderFunction> &functions, bool nvptx) {
  nlohmann::json out;
  out["functions"] = nlohmann::json::array();
  for (const auto &f : functions) {
    nlohmann::json jf;
    jf["name"] = f.hostName.empty() ? f.name : f.hostName;
    jf["stage"] = stageName(f.stage);
    jf["symbol"] = entrySymbol(f);
    jf["arguments"] = nlohmann::json::array();
    // A kernel's entry point parameters: NVPTX takes buffers as pointers,
    // textures, samplers and acceleration structures ("handle": true) as
    // 64-bit handles (arrays of them: a pointer to
    // the handles), [[stage_in]] as a pointer to one input struct per thread
    // of the grid (linear order) and threadgroup arguments as byte offsets
    // into dynamic shared memory, then the 48-byte launch block ("launch:48",
    // EntryPoints.h); the CPU entry takes
    // (void **args, const uint32_t launch[18]) (EntryPoints.h) with args in this same order.
    nlohmann::json params = nlohmann::json::array();
    for (const auto &a : f.args) {
      nlohmann::json ja;
      ja["name"] = a.name;
      ja["kind"] = kindName(a.kind);
      ja["type"] = a.type;
      ja["address_space"] = a.addressSpace;
      if (a.kind == ArgKind::Builtin) {
        ja["builtin"] = a.builtin;
      } else if (a.kind == ArgKind::StageIn) {
        ja["members"] = variablesJson(a.members);
        // A kernel's inputs: one struct per thread of the grid, in order.
        params.push_back("stage_in_array:" + a.name);
      } else {
        ja["access"] = a.access;
        ja["index"] = a.index ? nlohmann::json(*a.index) : nlohmann::json(nullptr);
        ja["reference"] = a.isReference;
        if (a.handle)
          ja["handle"] = true; // passed as a 64-bit handle, not memory
        if (a.kind == ArgKind::Buffer && !a.handle) {
          ja["type_size"] = a.typeSize; // bytes a bound buffer must hold at least
          ja["writable"] = a.writable;  // the kernel may write it
        }
        std::string param = a.kind == ArgKind::Threadgroup ? "threadgroup_offset:" : kindName(a.kind) + std::string(":");
        params.push_back(param + (a.index ? std::to_string(*a.index) : a.name));
      }
      if (!a.functionConstant.empty()) {
        ja["function_constant"] = a.functionConstant;
        ja["present"] = a.present;
      }
      if (a.arrayLength)
        ja["array_length"] = a.arrayLength;
      if (!a.textureType.empty()) {
        ja["texture_type"] = a.textureType;
        ja["element_type"] = a.elementType;
      }
      jf["arguments"].push_back(std::move(ja));
    }
    if (isGridStage(f.stage))
      jf["threadgroup_memory_bytes"] = f.threadgroupMemoryBytes;
    if (f.stage == Stage::Kernel && nvptx)
      params.push_back("launch:48"); // the launch block (EntryPoints.h), its size in bytes
    if (f.stage == Stage::Kernel)
      jf["entry"] = {{"convention", nvptx ? "ptx-kernel" : "cpu-args-launch"}, {"params", params}};
    else
      jf["outputs"] = variablesJson(f.outputs);
    jf["attributes"] = f.attributes;
    out["functions"].push_back(std::move(jf));
  }
  return out.dump(2);
}

} // namespace msl::compiler
