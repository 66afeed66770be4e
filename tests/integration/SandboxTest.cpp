// Integration tests of the workers' sandbox (service/Sandbox.h, README
// "Sandbox") through the real msld: its compile and execution workers run in
// their own namespaces under a seccomp filter and still compile and run
// kernels, and msld-sandbox-probe (tests/integration/SandboxProbeMain.cpp),
// started by msld as its compile worker in the same sandbox, cannot open a
// host file, connect a socket or fork a shell. Where this machine cannot
// sandbox (no user namespaces), the tests that need it skip, saying why.
#include "DaemonFixture.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

namespace msl::test {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::string firstLineWith(const std::string &text, const std::string &needle) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos)
      return line;
  return "";
}

// The direct children of `pid` whose argv[0] ends in `name`.
std::vector<int> childrenNamed(int pid, const std::string &name) {
  std::vector<int> out;
  for (const auto &task : fs::directory_iterator("/proc/" + std::to_string(pid) + "/task")) {
    std::istringstream children(slurp(task.path() / "children"));
    for (int child; children >> child;) {
      std::string cmdline = slurp("/proc/" + std::to_string(child) + "/cmdline");
      std::string argv0 = cmdline.substr(0, cmdline.find('\0'));
      if (argv0.size() >= name.size() && argv0.compare(argv0.size() - name.size(), name.size(), name) == 0)
        out.push_back(child);
    }
  }
  return out;
}

std::string nsOf(const std::string &pid, const std::string &ns) {
  std::error_code ec;
  return fs::read_symlink("/proc/" + pid + "/ns/" + ns, ec).string();
}

// "Field:\tvalue" of /proc/PID/status.
std::string statusField(int pid, const std::string &field) {
  std::string line = firstLineWith(slurp("/proc/" + std::to_string(pid) + "/status"), field + ":");
  size_t start = line.find_first_not_of(" \t", field.size() + 1);
  return start == std::string::npos ? "" : line.substr(start);
}

class SandboxTest : public DaemonTest {
protected:
  // The ready file's "sandbox" object ({"compile":..,"execution":..}).
  nlohmann::json sandboxState() {
    auto j = nlohmann::json::parse(slurp(dir_ / "data.ready.json"), nullptr, false);
    return j.is_object() && j.contains("sandbox") ? j["sandbox"] : nlohmann::json::object();
  }
  // Skips the test (returns false) when msld did not sandbox its compile
  // workers, with msld's own words on why.
  bool compileWorkersSandboxed() {
    if (sandboxState().value("compile", false))
      return true;
    std::string log = daemon_->log();
    std::string why = firstLineWith(log, "sandbox unavailable");
    if (why.empty())
      why = firstLineWith(log, "without the sandbox");
    if (why.empty())
      why = firstLineWith(log, "sandbox");
    skipReason_ = "msld runs its workers unsandboxed here: " + why;
    return false;
  }
  std::string skipReason_;
};

// The real workers, sandboxed (the default where the machine allows it):
// other namespaces than msld's, no new privileges, a seccomp filter; and
// they still compile and run kernels.
TEST_F(SandboxTest, SandboxedWorkersCompileAndRunKernels) {
  Daemon &d = startDaemon({"--cuda", "off"});
  ASSERT_TRUE(d.running()) << d.log();
  EXPECT_NE(d.log().find("msld: sandbox: "), std::string::npos) << d.log();
  if (!compileWorkersSandboxed())
    GTEST_SKIP() << skipReason_;

  std::vector<int> workers = childrenNamed(d.pid(), "/msld-compile-worker");
  bool haveExec = haveExecWorker();
  if (haveExec) {
    EXPECT_TRUE(sandboxState().value("execution", false)) << sandboxState().dump();
    for (int pid : childrenNamed(d.pid(), "/msld-exec-worker"))
      workers.push_back(pid);
  }
  ASSERT_EQ(workers.size(), haveExec ? 3u : 2u);
  for (int pid : workers) {
    for (const char *ns : {"user", "mnt", "pid", "net", "ipc"})
      EXPECT_NE(nsOf(std::to_string(pid), ns), nsOf("self", ns)) << "worker " << pid << " shares " << ns;
    EXPECT_EQ(statusField(pid, "NoNewPrivs"), "1") << pid;
    EXPECT_EQ(statusField(pid, "Seccomp"), "2") << pid; // a filter
    EXPECT_EQ(statusField(pid, "NSpid").substr(statusField(pid, "NSpid").rfind('\t') + 1), "1")
        << "not PID 1 of its namespace: " << statusField(pid, "NSpid");
    if (::geteuid() == 0) // a root msld's workers run as nobody
      EXPECT_EQ(statusField(pid, "Uid").substr(0, 5), "65534") << statusField(pid, "Uid");
  }

  msl::v1::CompileResponse resp;
  auto s = compile(d, compileRequest(readSourceFile("examples/saxpy.metal")), resp);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << d.log();
  EXPECT_TRUE(resp.success()) << diagnosticsText(resp);
  msl::v1::CompileResponse ptx;
  s = compile(d, compileRequest(readSourceFile("examples/reduce.metal"), {}, msl::v1::Target::NVPTX64), ptx);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(ptx.success()) << diagnosticsText(ptx);
  EXPECT_NE(artifact(ptx, msl::v1::PTX).find(".entry"), std::string::npos);
  // A crash still ends in INTERNAL and a replacement worker, also sandboxed.
  msl::v1::CompileResponse crashed;
  EXPECT_EQ(compile(d, compileRequest("#pragma clang __debug crash\n"), crashed).error_code(),
            grpc::StatusCode::INTERNAL);
  msl::v1::CompileResponse after;
  ASSERT_TRUE(compile(d, compileRequest("kernel void k(device int *o [[buffer(0)]]) { o[0] = 3; }\n"), after).ok());
  EXPECT_TRUE(after.success()) << diagnosticsText(after);

  if (!haveExec)
    return;
  std::string command = "cd " + sourceDir() + " && " + binDir() + "/mslc run examples/saxpy.metal --kernel saxpy " +
                        "--grid 8 --threadgroup 4 --buffer 0=float:2 --buffer 1=float:0,1,2,3,4,5,6,7 " +
                        "--buffer 2=float:1,1,1,1,1,1,1,1 --buffer 3=uint:8 --print 2 --server " + d.address() +
                        " 2>&1";
  std::string out;
  if (FILE *p = ::popen(command.c_str(), "r")) {
    char buffer[4096];
    size_t n;
    while ((n = fread(buffer, 1, sizeof buffer, p)) > 0)
      out.append(buffer, n);
    EXPECT_EQ(::pclose(p), 0) << out << "\n" << d.log();
  }
  EXPECT_EQ(out, "1,3,5,7,9,11,13,15\n") << d.log();
}

// msld-sandbox-probe as msld's compile worker, in the same sandbox: it
// reports what it could do, first in the namespaces alone, then also under
// the seccomp filter of msld-compile-worker.
TEST_F(SandboxTest, WorkerCannotOpenHostFilesConnectOrForkAShell) {
  fs::path secret = dir_ / "secret.txt";
  std::ofstream(secret) << "the host's secret\n";
  Daemon &d = startDaemon({"--worker-path", binDir() + "/msld-sandbox-probe", "--compile-workers", "1",
                           "--exec-workers", "0", "--cuda", "off"});
  ASSERT_TRUE(d.running()) << d.log();
  if (!compileWorkersSandboxed())
    GTEST_SKIP() << skipReason_;
  auto req = compileRequest(secret.string());
  auto *port = req.add_files();
  port->set_path("port");
  port->mutable_content()->set_inline_(d.address().substr(d.address().rfind(':') + 1));
  msl::v1::CompileResponse resp;
  auto s = compile(d, req, resp);
  ASSERT_TRUE(s.ok()) << s.error_message() << "\n" << d.log();
  std::map<std::string, std::string> said; // "PHASE CHECK" -> result
  for (const auto &diag : resp.diagnostics()) {
    size_t colon = diag.message().find(": ");
    said[diag.message().substr(0, colon)] = colon == std::string::npos ? "" : diag.message().substr(colon + 2);
  }
  std::string all = diagnosticsText(resp);
  ASSERT_EQ(said["sandboxed"], "yes") << all;
  // The namespaces alone: no host file, a read-only root, no network, no shell.
  EXPECT_EQ(said["namespaces open /etc/passwd"], "failed: No such file or directory") << all;
  EXPECT_EQ(said["namespaces open " + secret.string()], "failed: No such file or directory") << all;
  EXPECT_EQ(said["namespaces write"], "failed: Read-only file system") << all;
  EXPECT_EQ(said["namespaces connect"], "socket ok, connect failed: Network is unreachable") << all;
  EXPECT_EQ(said["namespaces exec"], "fork ok, exec failed: No such file or directory") << all;
  EXPECT_EQ(said["namespaces whoami"].rfind("pid 1 ", 0), 0u) << all;
  // The root holds what the worker needs, under the host paths it has: the
  // top directory of the build (wherever the checkout is) is among them.
  const std::string binTop = " " + std::filesystem::path(MSLD_BIN_DIR).relative_path().begin()->string();
  for (const char *hostDir : {" home", " root", " var", " tmp", " bin", " usr"})
    if (binTop != hostDir)
      EXPECT_EQ((said["namespaces whoami"] + " ").find(std::string(hostDir) + " "), std::string::npos)
          << hostDir << "\n" << all;
  // And the filter: files, sockets and processes are refused outright.
  EXPECT_EQ(said["filtered open /etc/passwd"], "failed: Permission denied") << all;
  EXPECT_EQ(said["filtered open " + secret.string()], "failed: Permission denied") << all;
  EXPECT_EQ(said["filtered write"], "failed: Permission denied") << all;
  EXPECT_EQ(said["filtered connect"], "socket failed: Operation not permitted") << all;
  EXPECT_EQ(said["filtered exec"], "fork failed: Operation not permitted") << all;
  // msld itself is unharmed.
  EXPECT_TRUE(d.running());
}

// The control: the same probe with --sandbox off does all of it, so the
// test above would see a sandbox that does not hold.
TEST_F(SandboxTest, UnsandboxedProbeCanDoAllOfIt) {
  fs::path secret = dir_ / "secret.txt";
  std::ofstream(secret) << "the host's secret\n";
  Daemon &d = startDaemon({"--worker-path", binDir() + "/msld-sandbox-probe", "--compile-workers", "1",
                           "--exec-workers", "0", "--cuda", "off", "--sandbox", "off"});
  ASSERT_TRUE(d.running()) << d.log();
  EXPECT_FALSE(sandboxState().value("compile", true)) << sandboxState().dump();
  auto req = compileRequest(secret.string());
  auto *port = req.add_files();
  port->set_path("port");
  port->mutable_content()->set_inline_(d.address().substr(d.address().rfind(':') + 1));
  msl::v1::CompileResponse resp;
  auto s = compile(d, req, resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  std::string all = diagnosticsText(resp);
  for (const char *line : {"sandboxed: no", "namespaces open /etc/passwd: ok", "namespaces connect: socket ok, connect ok",
                           "namespaces exec: fork ok, exec ok", "filtered open /etc/passwd: ok"})
    EXPECT_NE(all.find(line), std::string::npos) << line << "\n" << all;
  EXPECT_NE(all.find("namespaces open " + secret.string() + ": ok"), std::string::npos) << all;
  EXPECT_NE(all.find("namespaces write: ok"), std::string::npos) << all;
  fs::remove(binDir() + "/probe-was-here");
}

// --sandbox on refuses to start what it cannot sandbox: a worker that is a
// script (its needs cannot be known), or any worker where the machine has
// no user namespaces.
TEST_F(SandboxTest, SandboxOnRefusesAWorkerItCannotSandbox) {
  fs::path worker = dir_ / "script-worker";
  std::ofstream(worker) << "#!/bin/sh\nprintf '\\006\\000\\000\\000\\012\\004fake'\nexec sleep 600\n";
  fs::permissions(worker, fs::perms::owner_all);
  Daemon d((dir_ / "data").string(), {"--worker-path", worker.string(), "--sandbox", "on"});
  EXPECT_FALSE(d.start());
  std::string log = d.log();
  EXPECT_TRUE(log.find("cannot be sandboxed (--sandbox on)") != std::string::npos ||
              log.find("--sandbox on: workers cannot be sandboxed") != std::string::npos)
      << log;
}

// --sandbox auto (the default) runs such a worker with rlimits only, and
// says so; --sandbox off leaves the workers in msld's namespaces.
TEST_F(SandboxTest, AutoRunsAScriptWorkerUnsandboxedAndSaysSo) {
  fs::path worker = dir_ / "script-worker";
  std::ofstream(worker) << "#!/bin/sh\nprintf '\\006\\000\\000\\000\\012\\004fake'\nexec sleep 600\n";
  fs::permissions(worker, fs::perms::owner_all);
  Daemon &d = startDaemon({"--worker-path", worker.string(), "--exec-workers", "0", "--cuda", "off"});
  ASSERT_TRUE(d.running()) << d.log();
  EXPECT_FALSE(sandboxState().value("compile", true)) << sandboxState().dump();
  std::string log = d.log();
  EXPECT_TRUE(log.find("not an ELF executable") != std::string::npos ||
              log.find("sandbox unavailable") != std::string::npos)
      << log;
  EXPECT_NE(log.find("msld: sandbox: compile workers not sandboxed"), std::string::npos) << log;
}

TEST_F(SandboxTest, SandboxOffLeavesWorkersInMsldsNamespaces) {
  Daemon &d = startDaemon({"--sandbox", "off", "--exec-workers", "0", "--cuda", "off"});
  ASSERT_TRUE(d.running()) << d.log();
  EXPECT_FALSE(sandboxState().value("compile", true)) << sandboxState().dump();
  auto workers = childrenNamed(d.pid(), "/msld-compile-worker");
  ASSERT_EQ(workers.size(), 2u);
  for (int pid : workers) {
    EXPECT_EQ(nsOf(std::to_string(pid), "net"), nsOf("self", "net"));
    EXPECT_EQ(statusField(pid, "Seccomp"), "0");
  }
}

} // namespace
} // namespace msl::test
