#include "WorkerPool.h"

#include "WorkerProtocol.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace msl::service {
namespace {

enum class Wait { Readable, TimedOut, Failed };

// Waits until `fd` is readable or `deadline` passes.
Wait waitReadable(int fd, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0)
      return Wait::TimedOut;
    pollfd p{fd, POLLIN, 0};
    int n = ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1 << 30)));
    if (n > 0)
      return Wait::Readable;
    if (n < 0 && errno != EINTR)
      return Wait::Failed;
  }
}

} // namespace

std::unique_ptr<WorkerPool> WorkerPool::start(const WorkerPoolOptions &options, std::string &error) {
  // A worker that dies while we write to it must not kill the daemon.
  ::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<WorkerPool> pool(new WorkerPool(options));
  for (int i = 0; i < std::max(1, options.workers); ++i) {
    Worker w;
    if (!pool->spawn(w, error))
      return nullptr;
    pool->idle_.push_back(w);
  }
  return pool;
}

WorkerPool::~WorkerPool() { shutdown(); }

bool WorkerPool::spawn(Worker &w, std::string &error) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  const char *path = options_.workerPath.c_str();
  rlimit memory{options_.memoryLimitBytes, options_.memoryLimitBytes};
  pid_t pid = ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (memory.rlim_cur)
      ::setrlimit(RLIMIT_AS, &memory);
    ::execl(path, path, static_cast<char *>(nullptr));
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  if (pid < 0) {
    ::close(in[1]);
    ::close(out[0]);
    error = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  w = Worker{pid, in[1], out[0]};
  msl::internal::WorkerHello hello;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  if (waitReadable(w.fromWorker, deadline) != Wait::Readable || !readMessage(w.fromWorker, hello)) {
    error = "compile worker " + options_.workerPath + " did not start: " + reap(w);
    return false;
  }
  if (identity_.empty())
    identity_ = hello.compiler_identity();
  return true;
}

void WorkerPool::kill(Worker &w) {
  if (w.pid > 0)
    ::kill(w.pid, SIGKILL);
}

std::string WorkerPool::reap(Worker &w) {
  ::close(w.toWorker);
  ::close(w.fromWorker);
  int status = 0;
  std::string what = "exited";
  if (w.pid > 0 && ::waitpid(w.pid, &status, 0) == w.pid) {
    if (WIFSIGNALED(status))
      what = "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
             ::strsignal(WTERMSIG(status)) + ")";
    else if (WIFEXITED(status))
      what = "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  w = Worker{};
  return what;
}

WorkerPool::Outcome WorkerPool::run(const msl::internal::WorkerRequest &request) {
  Worker w;
  {
    std::unique_lock lock(mu_);
    idleChanged_.wait(lock, [&] { return stopping_ || !idle_.empty(); });
    if (stopping_)
      return {Outcome::Kind::Unavailable, {}, "the daemon is shutting down"};
    w = idle_.back();
    idle_.pop_back();
    ++busy_;
  }
  Outcome outcome;
  auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  bool sent = writeMessage(w.toWorker, request);
  Wait wait = sent ? waitReadable(w.fromWorker, deadline) : Wait::Failed;
  if (wait == Wait::Readable) {
    if (readMessage(w.fromWorker, outcome.response)) {
      outcome.kind = Outcome::Kind::Ok;
    } else {
      outcome.kind = Outcome::Kind::Crashed;
      outcome.detail = "the compile worker " + reap(w);
    }
  } else if (wait == Wait::TimedOut) {
    kill(w);
    reap(w);
    outcome.kind = Outcome::Kind::TimedOut;
    outcome.detail = "the compile ran past its " + std::to_string(options_.timeout.count()) +
                     " ms limit and was stopped";
  } else {
    outcome.kind = Outcome::Kind::Crashed;
    outcome.detail = "the compile worker " + reap(w);
  }
  // A worker that failed is replaced before it is handed back.
  std::string spawnError;
  bool healthy = outcome.kind == Outcome::Kind::Ok || spawn(w, spawnError);
  std::lock_guard lock(mu_);
  --busy_;
  if (healthy)
    idle_.push_back(w);
  idleChanged_.notify_all();
  if (!healthy && idle_.empty() && busy_ == 0)
    stopping_ = true; // no worker can start: fail fast rather than hang
  return outcome;
}

void WorkerPool::shutdown() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  idleChanged_.notify_all();
  idleChanged_.wait(lock, [&] { return busy_ == 0; });
  for (Worker &w : idle_) {
    ::close(w.toWorker); // EOF: the worker exits on its own
    w.toWorker = -1;
    int status;
    ::waitpid(w.pid, &status, 0);
    ::close(w.fromWorker);
  }
  idle_.clear();
}

} // namespace msl::service
