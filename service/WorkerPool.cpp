#include "WorkerPool.h"

#include "WorkerProtocol.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <future>
#include <iostream>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char **environ;

namespace msl::service {
namespace {

using Clock = std::chrono::steady_clock;

enum class Io { Done, Eof, TimedOut, Cancelled, TooLarge, Failed, Protocol };

// How often a wait looks at its cancel flag.
constexpr std::chrono::milliseconds kCancelPoll{20};

// Waits until `fd` is ready for `events`, draining the worker's stderr
// meanwhile, or until `deadline` passes or `cancel` is set. For the first
// `spin` it polls without sleeping: a core woken from idle costs tens of
// microseconds, more than a fast worker takes to answer.
template <typename DrainFn>
Io waitFor(int fd, short events, int errFd, Clock::time_point deadline, const CancelFlag *cancel,
           std::chrono::microseconds spin, DrainFn &&drain) {
  const auto spinUntil = spin.count() > 0 ? Clock::now() + spin : Clock::time_point{};
  for (;;) {
    if (cancel && cancel->load())
      return Io::Cancelled;
    const auto now = Clock::now();
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
    if (left.count() <= 0)
      return Io::TimedOut;
    if (cancel)
      left = std::min(left, kCancelPoll);
    const bool spinning = now < spinUntil;
    pollfd p[2] = {{fd, events, 0}, {errFd, POLLIN, 0}};
    int n = ::poll(p, errFd >= 0 ? 2 : 1, spinning ? 0 : int(std::min<int64_t>(left.count(), 1 << 30)));
    if (n < 0 && errno != EINTR)
      return Io::Failed;
    if (n <= 0)
      continue;
    if (errFd >= 0 && p[1].revents)
      drain();
    if (p[0].revents & (events | POLLHUP | POLLERR))
      return Io::Done;
  }
}

} // namespace

namespace {
// Moves `size` bytes with `op` (::read or ::write) on a non-blocking fd,
// waiting for `event` with `wait` (which bounds it by a deadline).
template <typename Op, typename WaitFn>
Io transferAll(int fd, char *data, size_t size, short event, Op op, WaitFn &wait) {
  while (size > 0) {
    ssize_t n = op(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN) {
      if (Io io = wait(fd, event); io != Io::Done)
        return io;
      continue;
    }
    if (n <= 0)
      return Io::Eof;
    data += n;
    size -= size_t(n);
  }
  return Io::Done;
}

template <typename WaitFn> Io writeAll(int fd, const char *data, size_t size, WaitFn &&wait) {
  return transferAll(fd, const_cast<char *>(data), size, POLLOUT,
                     [](int f, char *d, size_t n) { return ::write(f, d, n); }, wait);
}

template <typename WaitFn> Io readAll(int fd, char *data, size_t size, WaitFn &&wait) {
  return transferAll(fd, data, size, POLLIN, [](int f, char *d, size_t n) { return ::read(f, d, n); },
                     wait);
}

// One length-prefixed message (see WorkerProtocol.h) of at most `limit`
// bytes; `size` is its announced length, also when it is too large.
template <typename WaitFn>
Io readFrame(int fd, std::string &body, uint32_t limit, uint32_t &size, WaitFn &&wait) {
  char header[4];
  if (Io io = readAll(fd, header, 4, wait); io != Io::Done)
    return io;
  size = decodeLength(header);
  if (size > limit)
    return Io::TooLarge;
  body.assign(size, '\0');
  return readAll(fd, body.data(), size, wait);
}
} // namespace

// Forks workers from one thread that lives as long as the pool: a worker's
// PR_SET_PDEATHSIG then fires only when msld goes, not when whichever
// request thread replaced it exits.
class WorkerPool::Spawner {
public:
  Spawner() : thread_([this] { loop(); }) {}
  ~Spawner() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  /// Runs `fn` on the spawner thread and returns its result.
  bool call(std::function<bool()> fn) {
    std::packaged_task<bool()> task(std::move(fn));
    auto result = task.get_future();
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_all();
    return result.get();
  }

private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return done_ || !tasks_.empty(); });
      if (tasks_.empty())
        return;
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::packaged_task<bool()>> tasks_;
  bool done_ = false;
  std::thread thread_;
};

WorkerPool::WorkerPool(WorkerPoolOptions options) : options_(std::move(options)) {
  if (!options_.log)
    options_.log = [](const std::string &line) { std::cerr << line << std::flush; };
}

std::unique_ptr<WorkerPool> WorkerPool::start(const WorkerPoolOptions &options, std::string &error) {
  // A worker that dies while we write to it must not kill the daemon.
  ::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<WorkerPool> pool(new WorkerPool(options));
  const std::string what = options.role + " worker " + options.workerPath;
  if (options.sandbox.enabled) {
    std::string why;
    pool->sandbox_ = SandboxPlan::prepare(options.workerPath, options.sandbox, why);
    if (!pool->sandbox_) {
      if (options.sandbox.required) {
        error = what + " cannot be sandboxed (--sandbox on): " + why;
        return nullptr;
      }
      pool->options_.log("msld: " + what + " runs without the sandbox (rlimits only): " + why + "\n");
      noteSandbox({options.role, false, why});
    }
  }
  pool->spawner_ = std::make_unique<Spawner>();
  for (int i = 0; i < std::max(1, options.workers); ++i) {
    Worker w;
    bool started = pool->spawn(w, error);
    if (!started && i == 0 && pool->sandbox_ && !options.sandbox.required) {
      // --sandbox auto: a worker that does not start sandboxed runs without.
      pool->options_.log("msld: " + what + " did not start in the sandbox, running it with rlimits only: " +
                         error + "\n");
      noteSandbox({options.role, false, error});
      pool->sandbox_.reset();
      started = pool->spawn(w, error);
    }
    if (!started) {
      pool->shutdown();
      return nullptr;
    }
    pool->idle_.push_back(w);
    ++pool->alive_;
  }
  if (pool->sandbox_ || !options.sandbox.enabled)
    noteSandbox({options.role, pool->sandbox_ != nullptr, ""});
  return pool;
}

WorkerPool::~WorkerPool() { shutdown(); }

bool WorkerPool::spawn(Worker &w, std::string &error) {
  if (!spawner_->call([&] { return spawnHere(w, error); }))
    return false;
  // The hello, with a deadline: a worker stuck before it is killed.
  std::string kept;
  size_t dropped = 0;
  msl::internal::WorkerHello hello;
  std::string body;
  uint32_t size = 0;
  const auto deadline = Clock::now() + options_.startTimeout;
  Io io = readFrame(w.fromWorker, body, 1 << 20, size, [&](int fd, short events) {
    return waitFor(fd, events, w.errWorker, deadline, nullptr, std::chrono::microseconds(0),
                   [&] { drainStderr(w, kept, dropped); });
  });
  bool said = io == Io::Done && hello.ParseFromString(body);
  drainStderr(w, kept, dropped);
  logStderr(w, kept, dropped);
  if (!said) {
    std::string how = io == Io::TimedOut
                          ? "did not say hello within " + std::to_string(options_.startTimeout.count()) +
                                " ms and was killed"
                          : killAndReap(w);
    if (io == Io::TimedOut)
      killAndReap(w);
    error = options_.role + " worker " + options_.workerPath + " did not start: " + how;
    return false;
  }
  std::lock_guard lock(mu_);
  if (identity_.empty()) {
    identity_ = hello.compiler_identity();
  } else if (hello.compiler_identity() != identity_) {
    killAndReap(w);
    error = options_.role + " worker " + options_.workerPath + " reports identity '" +
            hello.compiler_identity() + "', not the pool's '" + identity_ +
            "' (was the binary replaced? restart msld to use it); refused";
    if (options_.onIdentityMismatch)
      options_.onIdentityMismatch();
    return false;
  }
  return true;
}

bool WorkerPool::spawnHere(Worker &w, std::string &error) {
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    ::close(in[0]);
    ::close(in[1]);
    return false;
  }
  // The shared payload region (best effort: without it, payloads go
  // through the pipe). msld keeps the mapping, the worker gets the fd as 3.
  int sharedFd = -1;
  SharedPayloads shared;
  if (options_.sharedPayloadBytes > 0) {
    sharedFd = ::memfd_create("msld-payloads", MFD_CLOEXEC);
    if (sharedFd >= 0 && ::ftruncate(sharedFd, off_t(options_.sharedPayloadBytes)) == 0) {
      void *p = ::mmap(nullptr, options_.sharedPayloadBytes, PROT_READ | PROT_WRITE, MAP_SHARED, sharedFd, 0);
      if (p != MAP_FAILED)
        shared = {static_cast<char *>(p), size_t(options_.sharedPayloadBytes)};
    }
    if (!shared && sharedFd >= 0) {
      ::close(sharedFd);
      sharedFd = -1;
    }
  }
  // The descriptor socket (WorkerProtocol.h sendDescriptors): the worker
  // gets its end as 4.
  int descriptors[2] = {-1, -1};
  if (options_.descriptorSocket && ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, descriptors) != 0) {
    error = std::string("socketpair: ") + std::strerror(errno);
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]})
      ::close(fd);
    if (sharedFd >= 0)
      ::close(sharedFd);
    if (shared)
      ::munmap(shared.data, shared.size);
    return false;
  }
  const SandboxPlan *sandbox = sandbox_.get();
  const char *path = sandbox ? sandbox->executable().c_str() : options_.workerPath.c_str();
  // argv (and a sandboxed worker's environment) are built before the fork:
  // the child may only exec.
  std::vector<char *> argv{const_cast<char *>(path)};
  for (const std::string &a : options_.workerArgs)
    argv.push_back(const_cast<char *>(a.c_str()));
  static std::string payloadFlag = "--payload-fd", payloadFd = "3", descriptorFlag = "--descriptor-fd",
                     descriptorFd = "4";
  if (sharedFd >= 0) {
    argv.push_back(payloadFlag.data());
    argv.push_back(payloadFd.data());
  }
  if (descriptors[1] >= 0) {
    argv.push_back(descriptorFlag.data());
    argv.push_back(descriptorFd.data());
  }
  argv.push_back(nullptr);
  static std::string sandboxFlag = std::string(kSandboxEnvironmentVariable) + "=1";
  std::vector<char *> envp;
  if (sandbox) {
    for (char **e = environ; e && *e; ++e)
      if (std::strncmp(*e, sandboxFlag.c_str(), sandboxFlag.size() - 1) != 0)
        envp.push_back(*e);
    envp.push_back(sandboxFlag.data());
    envp.push_back(nullptr);
  }
  rlimit memory{options_.memoryLimitBytes, options_.memoryLimitBytes};
  const int memoryResource = options_.limitAddressSpace ? RLIMIT_AS : RLIMIT_DATA;
  pid_t parent = ::getpid();
  pid_t pid = sandbox ? sandbox->cloneChild() : ::fork();
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec. Its own process
    // group, so a kill reaches anything it started.
    ::setpgid(0, 0);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    // The payload region as 3 and the descriptor socket as 4, by way of
    // new numbers (either may be 3 or 4 already; dup2 clears close-on-exec
    // on 3 and 4, the new numbers close at exec).
    const int payloadHigh = sharedFd >= 0 ? ::fcntl(sharedFd, F_DUPFD_CLOEXEC, 10) : -1;
    const int descriptorsHigh = descriptors[1] >= 0 ? ::fcntl(descriptors[1], F_DUPFD_CLOEXEC, 10) : -1;
    if (payloadHigh >= 0)
      ::dup2(payloadHigh, 3);
    if (descriptorsHigh >= 0)
      ::dup2(descriptorsHigh, 4);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (sandbox) {
      // Its parent is outside its PID namespace (getppid() is 0): msld died
      // before the prctl when no one holds the other end of its stdin.
      ::close(in[1]);
      pollfd hup{0, POLLIN, 0};
      if (::poll(&hup, 1, 0) == 1 && (hup.revents & POLLHUP))
        ::_exit(126);
    } else if (::getppid() != parent) { // msld died before the prctl
      ::_exit(126);
    }
    if (memory.rlim_cur)
      ::setrlimit(memoryResource, &memory);
    if (sandbox) {
      if (!sandbox->enter(2))
        ::_exit(125);
      // Nothing of msld's leaks in (but the payload region, fd 3, and the
      // descriptor socket, fd 4).
      ::syscall(SYS_close_range, descriptors[1] >= 0 ? 5u : sharedFd >= 0 ? 4u : 3u, ~0u, 0u);
      ::execve(path, argv.data(), envp.data());
      ::_exit(127);
    }
    ::execv(path, argv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (sharedFd >= 0) { // the mapping stays
    ::close(sharedFd);
    sharedFd = -1;
  }
  if (descriptors[1] >= 0)
    ::close(descriptors[1]);
  if (pid < 0) {
    if (descriptors[0] >= 0)
      ::close(descriptors[0]);
    ::close(in[1]);
    ::close(out[0]);
    ::close(err[0]);
    if (shared)
      ::munmap(shared.data, shared.size);
    error = std::string("fork: ") + std::strerror(errno);
    return false;
  }
  // Our ends never block: every transfer is bounded by a deadline.
  for (int fd : {in[1], out[0], err[0]})
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  // Requests and responses of megabytes (execution workers' buffers): 1 MiB
  // pipes instead of 64 KiB, 16x fewer wake-ups of either side per MiB.
  // Best effort (/proc/sys/fs/pipe-max-size); set here, as a sandboxed
  // worker's seccomp filter may refuse it.
  for (int fd : {in[1], out[0]})
    (void)::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
  w = Worker{pid, in[1], out[0], err[0], shared, descriptors[0]};
  return true;
}

void WorkerPool::drainStderr(Worker &w, std::string &kept, size_t &dropped) {
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(w.errWorker, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return;
    size_t keep = std::min(size_t(n), options_.maxStderrBytes - std::min(options_.maxStderrBytes, kept.size()));
    kept.append(buffer, keep);
    dropped += size_t(n) - keep;
  }
}

void WorkerPool::logStderr(const Worker &w, const std::string &kept, size_t dropped) {
  if (kept.empty() && dropped == 0)
    return;
  std::string text = "msld: " + options_.role + " worker " + std::to_string(w.pid) + " stderr:\n" + kept;
  if (!text.empty() && text.back() != '\n')
    text += '\n';
  if (dropped)
    text += "msld: (" + std::to_string(dropped) + " more bytes of worker stderr dropped)\n";
  options_.log(text);
}

namespace {
std::string describeStatus(int status) {
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           ::strsignal(WTERMSIG(status)) + ")";
  if (WIFEXITED(status))
    return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended";
}

std::string lastLine(const std::string &text) {
  size_t end = text.find_last_not_of("\n");
  if (end == std::string::npos)
    return "";
  size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

void closeAll(int &a, int &b, int &c) {
  for (int *fd : {&a, &b, &c})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}
} // namespace

// A retired worker's pipes and payload region.
void WorkerPool::closeWorker(Worker &w) {
  closeAll(w.toWorker, w.fromWorker, w.errWorker);
  if (w.descriptors >= 0)
    ::close(w.descriptors);
  w.descriptors = -1;
  if (w.shared)
    ::munmap(w.shared.data, w.shared.size);
  w.shared = {};
}

std::string WorkerPool::killAndReap(Worker &w) {
  std::string what = "ended";
  if (w.pid > 0) {
    ::kill(-w.pid, SIGKILL);
    ::kill(w.pid, SIGKILL);
    int status = 0;
    while (::waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
    }
    what = describeStatus(status);
  }
  closeWorker(w);
  w = Worker{};
  return what;
}

std::string WorkerPool::reap(Worker &w, int *exitStatus) {
  // It closed its stdout: it is exiting. Give it a moment, then kill.
  auto deadline = Clock::now() + std::chrono::milliseconds(1000);
  int status = 0;
  pid_t r = 0;
  while ((r = ::waitpid(w.pid, &status, WNOHANG)) == 0 && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (r != w.pid)
    return killAndReap(w);
  ::kill(-w.pid, SIGKILL); // anything it left behind
  if (exitStatus)
    *exitStatus = status;
  closeWorker(w);
  w = Worker{};
  return describeStatus(status);
}

WorkerPool::Outcome WorkerPool::run(const google::protobuf::MessageLite &request,
                                    google::protobuf::MessageLite &response, const CancelFlag *cancel,
                                    std::chrono::milliseconds timeout) {
  return runFramed(&request, nullptr, nullptr, response, cancel, timeout, nullptr, {});
}

WorkerPool::Outcome WorkerPool::run(google::protobuf::MessageLite &request, google::protobuf::MessageLite &response,
                                    const SplitFraming &framing, const CancelFlag *cancel,
                                    std::chrono::milliseconds timeout, const StartNote *startNote,
                                    const std::vector<int> &descriptors) {
  return runFramed(nullptr, &request, &framing, response, cancel, timeout, startNote, descriptors);
}

WorkerPool::Outcome WorkerPool::runFramed(const google::protobuf::MessageLite *plain,
                                          google::protobuf::MessageLite *split, const SplitFraming *framing,
                                          google::protobuf::MessageLite &response, const CancelFlag *cancel,
                                          std::chrono::milliseconds timeout, const StartNote *startNote,
                                          const std::vector<int> &descriptors) {
  Worker w;
  {
    std::unique_lock lock(mu_);
    idleChanged_.wait(lock, [&] { return stopping_ || !idle_.empty() || alive_ == 0; });
    if (stopping_)
      return {Outcome::Kind::Unavailable, "the daemon is shutting down"};
    if (idle_.empty())
      return {Outcome::Kind::Unavailable, "no " + options_.role + " worker could be started (see msld's log)"};
    w = idle_.back();
    idle_.pop_back();
    ++busy_;
  }
  Outcome outcome;
  std::string kept;
  size_t dropped = 0;
  if (timeout.count() <= 0)
    timeout = options_.timeout;
  if (startNote && (!startNote->isStartNote || startNote->beforeStart.count() <= 0))
    startNote = nullptr;
  // With a StartNote, the time before the note first; the run's timeout
  // from the note on.
  const auto runStart = Clock::now();
  auto deadline = runStart + (startNote ? startNote->beforeStart : timeout);
  auto wait = [&](int fd, short events) {
    return waitFor(fd, events, w.errWorker, deadline, cancel, options_.spinBeforeBlocking,
                   [&] { drainStderr(w, kept, dropped); });
  };

  Io io = Io::Failed;
  // The descriptors first: the worker takes them when the request names
  // them. Its socket is empty between runs, so one message always fits
  // (failing that, the worker is replaced as one that failed).
  const bool descriptorsSent =
      descriptors.empty() || (w.descriptors >= 0 && sendDescriptors(w.descriptors, descriptors));
  if (descriptorsSent && plain) {
    std::string frame;
    if (size_t n = plain->ByteSizeLong(); n <= kMaxWorkerMessageBytes) {
      // One buffer for the prefix and the message: no second copy.
      frame.resize(4 + n);
      std::string prefix = encodeLength(uint32_t(n));
      std::memcpy(frame.data(), prefix.data(), 4);
      if (plain->SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t *>(frame.data() + 4)))
        io = writeAll(w.toWorker, frame.data(), frame.size(), wait);
    }
  } else if (descriptorsSent) {
    // The head, then the payloads not in the worker's payload region.
    std::string head;
    std::vector<std::string *> payloads;
    if (encodeSplitFrame(*split, framing->request, w.shared, head, payloads)) {
      io = writeAll(w.toWorker, head.data(), head.size(), wait);
      for (size_t i = 0; i < payloads.size() && io == Io::Done; ++i)
        io = writeAll(w.toWorker, payloads[i]->data(), payloads[i]->size(), wait);
    }
  }
  uint64_t size = 0;
  while (io == Io::Done) {
    char header[4];
    io = readAll(w.fromWorker, header, 4, wait);
    if (io == Io::Done) {
      // A plain or a split frame, read straight into `response`.
      Io last = Io::Done;
      FrameRead read = readFrameRest(decodeLength(header), response, framing ? framing->response : nullptr,
                                     options_.maxResponseBytes, size,
                                     [&](char *data, size_t n) {
                                       last = readAll(w.fromWorker, data, n, wait);
                                       return last == Io::Done;
                                     },
                                     w.shared);
      io = read == FrameRead::Ok ? Io::Done
           : read == FrameRead::TooLarge ? Io::TooLarge
           : read == FrameRead::Malformed ? Io::Failed
                                          : last;
    }
    if (io != Io::Done || !startNote || !startNote->isStartNote(response))
      break; // the answer, or a failure
    if (outcome.started) {
      io = Io::Protocol; // a second note
      break;
    }
    // The note: the work starts now, under the run's own timeout.
    const auto now = Clock::now();
    outcome.started = true;
    outcome.untilStart = now - runStart;
    deadline = now + timeout;
    response.Clear();
  }
  if (io == Io::TooLarge)
    outcome.detail = "the " + std::string(options_.role == "compile" ? "compiler" : options_.role + " worker") +
                     "'s output (at least " + std::to_string(size) + " bytes) is larger than the " +
                     std::to_string(options_.maxResponseBytes) + "-byte limit";
  drainStderr(w, kept, dropped);
  logStderr(w, kept, dropped);

  switch (io) {
  case Io::Done:
    outcome.kind = Outcome::Kind::Ok;
    break;
  case Io::TimedOut:
    killAndReap(w);
    outcome.kind = Outcome::Kind::TimedOut;
    outcome.detail = startNote && !outcome.started
                         ? "it did not start within its " + std::to_string(startNote->beforeStart.count()) +
                               " ms limit and was stopped"
                         : "it ran past its " + std::to_string(timeout.count()) + " ms limit and was stopped";
    break;
  case Io::Protocol:
    outcome.detail = "the " + options_.role + " worker sent a second start note and " + killAndReap(w);
    outcome.kind = Outcome::Kind::Crashed;
    break;
  case Io::Cancelled:
    killAndReap(w);
    outcome.kind = Outcome::Kind::Cancelled;
    outcome.detail = "it was stopped: its client cancelled or its deadline passed";
    break;
  case Io::TooLarge:
    killAndReap(w);
    outcome.kind = Outcome::Kind::TooLarge;
    break;
  case Io::Eof:
  case Io::Failed: {
    int status = 0;
    outcome.detail = "the " + options_.role + " worker " + reap(w, &status);
    if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerOutOfMemoryExitCode) {
      outcome.kind = Outcome::Kind::OutOfMemory;
      outcome.detail = "it needed more memory than the worker's limit of " +
                       std::to_string(options_.memoryLimitBytes >> 20) + " MiB";
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == kWorkerKernelFaultExitCode) {
      outcome.kind = Outcome::Kind::Faulted;
      outcome.detail = lastLine(kept); // the worker's own account of the fault
    } else {
      outcome.kind = Outcome::Kind::Crashed;
    }
    break;
  }
  }

  // A worker that failed is replaced (by the spawner thread) before it is
  // handed back; one that cannot be replaced leaves the pool smaller.
  bool healthy = outcome.kind == Outcome::Kind::Ok;
  if (!healthy) {
    std::string spawnError;
    bool stopping;
    {
      std::lock_guard lock(mu_);
      stopping = stopping_;
    }
    healthy = !stopping && spawn(w, spawnError);
    if (!healthy && !stopping)
      options_.log("msld: " + spawnError + "\n");
  }
  std::lock_guard lock(mu_);
  --busy_;
  if (healthy)
    idle_.push_back(w);
  else
    --alive_;
  idleChanged_.notify_all();
  return outcome;
}

void WorkerPool::shutdown() {
  std::vector<Worker> workers;
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    idleChanged_.notify_all();
    idleChanged_.wait(lock, [&] { return busy_ == 0; });
    workers.swap(idle_);
  }
  // EOF on stdin: each worker exits on its own, or is killed past the limit.
  for (Worker &w : workers) {
    ::close(w.toWorker);
    w.toWorker = -1;
  }
  auto deadline = Clock::now() + options_.exitTimeout;
  for (Worker &w : workers) {
    int status;
    pid_t r = 0;
    while ((r = ::waitpid(w.pid, &status, WNOHANG)) == 0 && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (r == w.pid)
      closeWorker(w);
    else
      killAndReap(w);
  }
  spawner_.reset();
}

} // namespace msl::service
