//===- SandboxProbeMain.cpp - msld-sandbox-probe --------------------------===//
//
// A test-only compile worker (tests/integration/SandboxTest.cpp): msld starts
// it with --worker-path, in the sandbox the real workers get (WorkerPool and
// service/Sandbox.h). It compiles nothing: to each request it answers a
// failed compile whose diagnostics (one per line, "PHASE CHECK: RESULT") say
// what it could do. On the first request it checks with the namespaces alone
// ("namespaces"), then installs the seccomp filter msld-compile-worker
// installs (installWorkerSeccomp), then checks again ("filtered"); later
// requests check "filtered" only:
//
//   open          open(2) of /etc/passwd and of the request's main source
//                 (a host path the test wrote)
//   write         creating probe-was-here beside its binary
//   connect       a TCP socket to 127.0.0.1:PORT (PORT: the header "port";
//                 the test gives msld's own gRPC port)
//   exec          fork, then exec /bin/sh in the child
//   whoami        its pid, uid and gid as it sees them, and what / holds
//
// Each RESULT is "ok" or "failed: <errno description>" (exec: of the fork or
// of the exec in the child).
//
//===----------------------------------------------------------------------===//
#include "Sandbox.h"
#include "WorkerProtocol.h"
#include "msl/internal/worker.pb.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <iostream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

std::string result(bool ok, int err) { return ok ? "ok" : std::string("failed: ") + std::strerror(err); }

std::string tryOpen(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  int e = errno;
  if (fd >= 0)
    ::close(fd);
  return result(fd >= 0, e);
}

// A file beside its own binary (a folder that is there inside and out).
std::string writePath;

std::string tryWrite() {
  int fd = ::open(writePath.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  int e = errno;
  if (fd >= 0)
    ::close(fd);
  return result(fd >= 0, e);
}

std::string tryConnect(int port) {
  int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0)
    return "socket " + result(false, errno);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int r = ::connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
  int e = errno;
  ::close(s);
  return "socket ok, connect " + result(r == 0, e);
}

std::string tryExec() {
  pid_t pid = ::fork();
  if (pid < 0)
    return "fork " + result(false, errno);
  if (pid == 0) {
    ::execl("/bin/sh", "sh", "-c", "exit 0", static_cast<char *>(nullptr));
    ::_exit(100 + (errno & 127)); // the exec's errno
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return "fork ok, exec ok";
  if (WIFEXITED(status) && WEXITSTATUS(status) >= 100)
    return "fork ok, exec " + result(false, WEXITSTATUS(status) - 100);
  return "fork ok, exec: child ended with status " + std::to_string(status);
}

std::string whoami() {
  std::string s = "pid " + std::to_string(::getpid()) + " uid " + std::to_string(::getuid()) + " gid " +
                  std::to_string(::getgid()) + " /:";
  if (DIR *d = ::opendir("/")) {
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.')
        s += std::string(" ") + e->d_name;
    ::closedir(d);
  } else {
    s += " (unreadable: " + std::string(std::strerror(errno)) + ")";
  }
  return s;
}

void addLine(msl::internal::WorkerResponse &resp, const std::string &text) {
  auto *d = resp.add_diagnostics();
  d->set_file("probe");
  d->set_severity(msl::v1::Diagnostic::ERROR);
  d->set_message(text);
}

std::vector<std::string> probe(const std::string &phase, const std::string &hostFile, int port) {
  std::vector<std::string> lines;
  lines.push_back(phase + " open /etc/passwd: " + tryOpen("/etc/passwd"));
  if (!hostFile.empty())
    lines.push_back(phase + " open " + hostFile + ": " + tryOpen(hostFile));
  lines.push_back(phase + " write: " + tryWrite());
  if (port > 0)
    lines.push_back(phase + " connect: " + tryConnect(port));
  lines.push_back(phase + " exec: " + tryExec());
  lines.push_back(phase + " whoami: " + whoami());
  return lines;
}

} // namespace

int main(int, char **argv) {
  writePath = argv[0];
  writePath = writePath.substr(0, writePath.rfind('/') + 1) + "probe-was-here";
  bool sandboxed = msl::service::startedInSandbox();
  msl::internal::WorkerHello hello;
  hello.set_compiler_identity(std::string("msld-sandbox-probe sandboxed/") + (sandboxed ? "yes" : "no"));
  if (!msl::service::writeMessage(1, hello))
    return 1;
  bool filtered = false;
  msl::internal::WorkerRequest req;
  while (msl::service::readMessage(0, req)) {
    int port = 0;
    for (const auto &f : req.files())
      if (f.path() == "port")
        port = std::atoi(f.data().c_str());
    std::string hostFile = req.main_source();
    while (!hostFile.empty() && (hostFile.back() == '\n' || hostFile.back() == ' '))
      hostFile.pop_back();
    msl::internal::WorkerResponse resp;
    resp.set_success(false);
    addLine(resp, std::string("sandboxed: ") + (sandboxed ? "yes" : "no"));
    // The first request: the namespaces alone, then the filter the real
    // workers install (before their hello), then both.
    if (!filtered) {
      for (const auto &l : probe("namespaces", hostFile, port))
        addLine(resp, l);
      if (sandboxed) {
        std::string error;
        if (!msl::service::installWorkerSeccomp(false, error)) {
          std::cerr << "msld-sandbox-probe: " << error << "\n";
          return 1;
        }
      }
      filtered = true;
    }
    for (const auto &l : probe("filtered", hostFile, port))
      addLine(resp, l);
    if (!msl::service::writeMessage(1, resp))
      return 1;
    req.Clear();
  }
  return 0;
}
