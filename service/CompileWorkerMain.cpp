//===- CompileWorkerMain.cpp - msld-compile-worker ------------------------===//
//
// A compile worker: started by msld with pipes on stdin/stdout, it says hello
// (its compiler identity), then answers WorkerRequests one at a time until
// stdin closes. A crash here costs one request, never the daemon.
//
// `msld-compile-worker --compile FILE [metal options] [--nvptx]
// [--stdlib-dir DIR]` compiles one file from the host and prints the
// diagnostics and IR, for debugging (DIR: stdlib headers read from disk).
//
// With MSLD_COMPILE_RECORD_DIR set, it also records every response it sends
// (CompileRecording.h), for msld runs on machines without LLVM.
//
//===----------------------------------------------------------------------===//
#include "BinaryIdentity.h"
#include "CompileRecording.h"
#include "Sandbox.h"
#include "WorkerOutOfMemory.h"
#include "WorkerProtocol.h"
#include "msl/compiler/Compiler.h"
#include "msl/internal/worker.pb.h"

#include <llvm/Support/ErrorHandling.h>

#include <cstdlib>
#include <fstream>
#include <new>
#include <unistd.h>
#include <iostream>
#include <sstream>

namespace mc = msl::compiler;
using msl::internal::WorkerRequest;
using msl::internal::WorkerResponse;

namespace {

mc::OutputKind outputKindOf(msl::v1::ArtifactKind k) {
  switch (k) {
  case msl::v1::LLVM_IR:
    return mc::OutputKind::LLVMIR;
  case msl::v1::PTX:
    return mc::OutputKind::PTX;
  case msl::v1::REFLECTION:
    return mc::OutputKind::Reflection;
  default:
    return mc::OutputKind::LLVMBitcode;
  }
}

msl::v1::ArtifactKind artifactKindOf(mc::OutputKind k) {
  switch (k) {
  case mc::OutputKind::LLVMIR:
    return msl::v1::LLVM_IR;
  case mc::OutputKind::PTX:
    return msl::v1::PTX;
  case mc::OutputKind::Reflection:
    return msl::v1::REFLECTION;
  case mc::OutputKind::LLVMBitcode:
    return msl::v1::LLVM_BITCODE;
  }
  return msl::v1::LLVM_BITCODE;
}

void toProto(const mc::Diagnostic &d, msl::v1::Diagnostic &out) {
  out.set_file(d.file);
  out.set_line(d.line);
  out.set_column(d.column);
  out.set_severity(msl::v1::Diagnostic::Severity(int(d.severity) + 1));
  out.set_message(d.message);
  for (const auto &n : d.notes)
    toProto(n, *out.add_notes());
}

mc::CompileJob jobOf(const WorkerRequest &req) {
  mc::CompileJob job;
  job.mainPath = req.main_path();
  job.mainSource = req.main_source();
  for (const auto &f : req.files())
    job.files[f.path()] = f.data();
  job.options.assign(req.options().begin(), req.options().end());
  job.target.arch = req.target().arch() == msl::v1::Target::NVPTX64 ? mc::Arch::NVPTX64 : mc::Arch::X86_64;
  job.target.cpu = req.target().cpu();
  for (int k : req.outputs())
    job.outputs.push_back(outputKindOf(msl::v1::ArtifactKind(k)));
  job.functionConstants.insert(req.function_constants().begin(), req.function_constants().end());
  return job;
}

WorkerResponse responseOf(const mc::CompileResult &r) {
  WorkerResponse resp;
  resp.set_success(r.success);
  resp.set_compile_time_us(r.compileTimeMicros);
  for (const auto &d : r.diagnostics)
    toProto(d, *resp.add_diagnostics());
  for (const auto &[kind, data] : r.artifacts) {
    auto *a = resp.add_artifacts();
    a->set_kind(artifactKindOf(kind));
    a->set_data(data);
  }
  return resp;
}

int compileOneFile(int argc, char **argv) {
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::cerr << "cannot read " << argv[2] << "\n";
    return 2;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  mc::CompileJob job;
  job.mainPath = "main.metal";
  job.mainSource = ss.str();
  for (int i = 3; i < argc; ++i) {
    std::string a = argv[i];
    std::string error;
    if (a == "--nvptx")
      job.target.arch = mc::Arch::NVPTX64;
    else if (a == "--stdlib-dir" && i + 1 < argc) {
      if (!mc::useStdlibFromDirectory(argv[++i], error)) {
        std::cerr << error << "\n";
        return 2;
      }
    } else
      job.options.push_back(a);
  }
  job.outputs = {mc::OutputKind::LLVMIR, mc::OutputKind::Reflection};
  if (job.target.arch == mc::Arch::NVPTX64)
    job.outputs.push_back(mc::OutputKind::PTX);
  auto r = mc::compile(job);
  for (const auto &d : r.diagnostics) {
    std::cerr << d.file << ":" << d.line << ":" << d.column << ": " << d.message << "\n";
    for (const auto &n : d.notes)
      std::cerr << "  " << n.file << ":" << n.line << ":" << n.column << ": note: " << n.message << "\n";
  }
  for (const auto &[k, data] : r.artifacts)
    std::cout << data << "\n";
  std::cerr << (r.success ? "ok" : "failed") << " in " << r.compileTimeMicros << " us\n";
  return r.success ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  if (argc >= 3 && std::string(argv[1]) == "--compile")
    return compileOneFile(argc, argv);
  msl::service::exitOnOutOfMemory();
  msl::internal::WorkerHello hello;
  // The compiler (version, stdlib) and the code that runs it (this binary
  // and every library it loaded): a rebuilt worker gets new action keys.
  hello.set_compiler_identity(mc::compilerIdentity() + " binary/" + msl::service::binaryIdentity());
  const char *recordDir = std::getenv("MSLD_COMPILE_RECORD_DIR");
  if (recordDir && *recordDir)
    std::ofstream(std::string(recordDir) + "/identity") << hello.compiler_identity();
  // Sandboxed (Sandbox.h): everything is loaded and the identity computed;
  // from here on only the system calls a compile makes (files only to
  // record into MSLD_COMPILE_RECORD_DIR). No filter, no hello.
  if (msl::service::startedInSandbox()) {
    std::string error;
    if (!msl::service::installWorkerSeccomp(recordDir && *recordDir, error)) {
      std::cerr << "msld-compile-worker: " << error << "\n";
      return 1;
    }
  }
  if (!msl::service::writeMessage(1, hello))
    return 1;
  WorkerRequest req;
  while (msl::service::readMessage(0, req)) {
    WorkerResponse resp = responseOf(mc::compile(jobOf(req)));
    if (recordDir && *recordDir)
      msl::service::recordCompile(recordDir, req, resp);
    if (!msl::service::writeMessage(1, resp))
      return 1;
    req.Clear();
  }
  return 0;
}
