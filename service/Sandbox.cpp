#include "Sandbox.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <poll.h>
#include <sched.h>
#include <set>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if MSLD_HAVE_SECCOMP
#include <seccomp.h>
#endif

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif

namespace msl::service {

namespace {

// Where the new root is built before pivot_root (in the child's own mount
// namespace: the host's /tmp is never touched).
constexpr const char *kStage = "/tmp";
// nobody/nogroup: who a worker of a root msld runs as.
constexpr unsigned kNobody = 65534;

std::string lastLines(const std::string &text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' '))
    t.pop_back();
  return t;
}

// Runs `argv` with stdout and stderr into a string, under a deadline.
// False when it could not run, ran too long or exited non-zero.
bool runCapture(const std::vector<std::string> &args, std::string &output, int timeoutMs) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0)
    return false;
  std::vector<char *> argv;
  for (const auto &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(p[1], 1);
    ::dup2(p[1], 2);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(p[1]);
  if (pid < 0) {
    ::close(p[0]);
    return false;
  }
  char buffer[4096];
  bool timedOut = false;
  for (;;) {
    pollfd f{p[0], POLLIN, 0};
    int n = ::poll(&f, 1, timeoutMs);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      timedOut = true;
      break;
    }
    ssize_t r = ::read(p[0], buffer, sizeof buffer);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    output.append(buffer, size_t(r));
    if (output.size() > (1 << 20))
      break;
  }
  ::close(p[0]);
  if (timedOut)
    ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return !timedOut && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The ELF interpreter (PT_INTERP) of a 64-bit ELF file; "" for a static one.
bool elfInterpreter(const std::string &path, std::string &interp, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read " + path;
    return false;
  }
  Elf64_Ehdr eh{};
  in.read(reinterpret_cast<char *>(&eh), sizeof eh);
  if (in.gcount() < 4 || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    error = path + " is not an ELF executable (a script?): its needs cannot be known";
    return false;
  }
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || in.gcount() != sizeof eh || eh.e_phentsize != sizeof(Elf64_Phdr)) {
    error = path + " is not a 64-bit ELF executable";
    return false;
  }
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(std::streamoff(eh.e_phoff + i * sizeof ph));
    in.read(reinterpret_cast<char *>(&ph), sizeof ph);
    if (!in) {
      error = path + ": truncated ELF program headers";
      return false;
    }
    if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < 4096) {
      interp.assign(ph.p_filesz, '\0');
      in.seekg(std::streamoff(ph.p_offset));
      in.read(interp.data(), std::streamsize(ph.p_filesz));
      interp.resize(std::strlen(interp.c_str()));
      return true;
    }
  }
  interp.clear();
  return true;
}

// --- Async-signal-safe helpers (the child between clone and exec). ---------

size_t cstrlen(const char *s) {
  size_t n = 0;
  while (s[n])
    ++n;
  return n;
}

void put(int fd, const char *s) {
  size_t n = cstrlen(s);
  while (n > 0) {
    ssize_t w = ::write(fd, s, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return;
    s += w;
    n -= size_t(w);
  }
}

// "msld sandbox: STEP WHAT: ERROR\n" (errno at entry).
bool fail(int fd, const char *step, const char *what = nullptr) {
  int e = errno;
  put(fd, "msld sandbox: ");
  put(fd, step);
  if (what) {
    put(fd, " ");
    put(fd, what);
  }
  put(fd, ": ");
  const char *desc = ::strerrordesc_np(e);
  put(fd, desc ? desc : "error");
  put(fd, "\n");
  return false;
}

bool writeFile(const char *path, const char *text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  size_t n = cstrlen(text);
  bool ok = ::write(fd, text, n) == ssize_t(n);
  int e = errno;
  ::close(fd);
  errno = e;
  return ok;
}

void formatFdPath(char *out, int fd) {
  const char *prefix = "/proc/self/fd/";
  size_t n = 0;
  while (prefix[n]) {
    out[n] = prefix[n];
    ++n;
  }
  char digits[16];
  int d = 0;
  do {
    digits[d++] = char('0' + fd % 10);
    fd /= 10;
  } while (fd > 0);
  while (d > 0)
    out[n++] = digits[--d];
  out[n] = '\0';
}

// The per-mount flags a bind remount must keep (a user namespace may not
// clear those of the mount it copies).
unsigned long keptMountFlags(const char *path) {
  struct statfs s {};
  if (::statfs(path, &s) != 0)
    return 0;
  unsigned long flags = 0;
  if (s.f_flags & ST_NOSUID)
    flags |= MS_NOSUID;
  if (s.f_flags & ST_NODEV)
    flags |= MS_NODEV;
  if (s.f_flags & ST_NOEXEC)
    flags |= MS_NOEXEC;
  if (s.f_flags & ST_NOATIME)
    flags |= MS_NOATIME;
  if (s.f_flags & ST_NODIRATIME)
    flags |= MS_NODIRATIME;
  if (s.f_flags & ST_RELATIME)
    flags |= MS_RELATIME;
  return flags;
}

std::mutex notesMu;
std::vector<SandboxNote> &notes() {
  static std::vector<SandboxNote> n;
  return n;
}

} // namespace

struct SandboxPlan::Mount {
  enum class Kind { File, Directory, Device };
  std::string source;   // host path
  std::string staged;   // kStage + target
  Kind kind = Kind::File;
  bool writable = false;
  mutable int fd = -1;           // the child's O_PATH descriptor of source
  mutable char fdPath[48] = {0}; // "/proc/self/fd/N"
};

SandboxPlan::~SandboxPlan() = default;

std::unique_ptr<SandboxPlan> SandboxPlan::prepare(const std::string &binary, const SandboxOptions &options,
                                                  std::string &error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::unique_ptr<SandboxPlan> plan(new SandboxPlan());
  plan->executable_ = fs::absolute(binary, ec).lexically_normal().string();
  if (ec || ::access(plan->executable_.c_str(), X_OK) != 0) {
    error = binary + " is not an executable file";
    return nullptr;
  }
  std::string interp;
  if (!elfInterpreter(plan->executable_, interp, error))
    return nullptr;

  std::vector<std::string> files{plan->executable_};
  if (!interp.empty()) {
    files.push_back(interp);
    // What the dynamic loader itself loads (it never runs the program with
    // --list): every library at the path it resolves to.
    std::string out;
    if (!runCapture({interp, "--list", plan->executable_}, out, 10000)) {
      error = "cannot list the shared libraries of " + plan->executable_ + " (" + interp + " --list): " +
              lastLines(out);
      return nullptr;
    }
    size_t begin = 0;
    while (begin < out.size()) {
      size_t end = out.find('\n', begin);
      if (end == std::string::npos)
        end = out.size();
      std::string line = out.substr(begin, end - begin);
      begin = end + 1;
      if (line.find("not found") != std::string::npos) {
        error = plan->executable_ + ": a shared library is not found:" + line;
        return nullptr;
      }
      size_t arrow = line.find("=> ");
      size_t start = arrow != std::string::npos ? arrow + 3 : line.find_first_not_of(" \t");
      if (start == std::string::npos || start >= line.size() || line[start] != '/')
        continue; // linux-vdso.so.1, "statically linked"
      size_t stop = line.find(" (", start);
      files.push_back(line.substr(start, stop == std::string::npos ? std::string::npos : stop - start));
    }
    if (fs::exists("/etc/ld.so.cache", ec))
      files.push_back("/etc/ld.so.cache"); // the same resolution as outside: the same binary identity
  }

  std::set<std::string> seen;
  auto add = [&](const std::string &path, Mount::Kind kind, bool writable) {
    std::string target = fs::absolute(path, ec).lexically_normal().string();
    while (target.size() > 1 && target.back() == '/')
      target.pop_back();
    if (target == "/" || !seen.insert(target).second)
      return;
    Mount m;
    m.source = target;
    m.staged = std::string(kStage) + target;
    m.kind = kind;
    m.writable = writable;
    plan->mounts_.push_back(std::move(m));
  };
  for (const std::string &f : files)
    add(f, Mount::Kind::File, false);
  for (const char *dev : {"/dev/null", "/dev/urandom"})
    if (fs::exists(dev, ec))
      add(dev, Mount::Kind::Device, false);
  auto addPaths = [&](const std::vector<std::string> &paths, bool writable) {
    for (const std::string &p : paths) {
      struct stat st {};
      if (p.empty() || ::stat(p.c_str(), &st) != 0)
        continue; // not there (yet): nothing to show
      add(p, S_ISDIR(st.st_mode) ? Mount::Kind::Directory : Mount::Kind::File, writable);
    }
  };
  addPaths(options.readOnlyPaths, false);
  addPaths(options.writablePaths, true);
  // Directories before files: a file inside a bound directory is mounted on top.
  std::stable_sort(plan->mounts_.begin(), plan->mounts_.end(), [](const Mount &a, const Mount &b) {
    return (a.kind == Mount::Kind::Directory) > (b.kind == Mount::Kind::Directory);
  });

  // Every parent directory of every mount point, parents first.
  std::set<std::string> dirs{"/proc"};
  for (const Mount &m : plan->mounts_) {
    fs::path p = fs::path(m.source).parent_path();
    while (!p.empty() && p != p.root_path()) {
      dirs.insert(p.string());
      p = p.parent_path();
    }
  }
  for (const std::string &d : dirs)
    plan->dirs_.push_back(std::string(kStage) + d);

  plan->root_ = ::geteuid() == 0;
  plan->uid_ = plan->root_ ? kNobody : ::geteuid();
  plan->gid_ = plan->root_ ? kNobody : ::getegid();
  plan->uidMap_ = std::to_string(plan->uid_) + " " + std::to_string(plan->uid_) + " 1\n";
  plan->gidMap_ = std::to_string(plan->gid_) + " " + std::to_string(plan->gid_) + " 1\n";
  return plan;
}

std::vector<std::string> SandboxPlan::visiblePaths() const {
  std::vector<std::string> out;
  for (const Mount &m : mounts_)
    out.push_back(m.source + (m.writable ? " (rw)" : ""));
  out.push_back("/proc (its own PID namespace)");
  return out;
}

pid_t SandboxPlan::cloneChild() const {
  // A root msld needs no user namespace to set up the mounts; it creates
  // one after dropping to nobody (enter). Otherwise the user namespace
  // comes first, and owns the others.
  unsigned long flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD;
  if (!root_)
    flags |= CLONE_NEWUSER;
  // Raw clone without a new stack: fork() semantics, in new namespaces.
  return pid_t(::syscall(SYS_clone, flags, nullptr, nullptr, nullptr, nullptr));
}

bool SandboxPlan::enter(int errorFd) const {
  const int e = errorFd;
  if (!root_) {
    // Map msld's own user and group (all an unprivileged process may map).
    if (!writeFile("/proc/self/setgroups", "deny") && errno != ENOENT)
      return fail(e, "write /proc/self/setgroups");
    if (!writeFile("/proc/self/uid_map", uidMap_.c_str()))
      return fail(e, "write /proc/self/uid_map");
    if (!writeFile("/proc/self/gid_map", gidMap_.c_str()))
      return fail(e, "write /proc/self/gid_map");
  }
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return fail(e, "make / private");
  // Open what will be shown before the staging tmpfs covers anything.
  for (const Mount &m : mounts_) {
    m.fd = ::open(m.source.c_str(), O_PATH | O_CLOEXEC);
    if (m.fd < 0)
      return fail(e, "open", m.source.c_str());
  }
  if (::mount("tmpfs", kStage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m,nr_inodes=4096") != 0)
    return fail(e, "mount tmpfs on", kStage);
  for (const std::string &d : dirs_)
    if (::mkdir(d.c_str(), 0755) != 0 && errno != EEXIST)
      return fail(e, "mkdir", d.c_str());
  for (const Mount &m : mounts_) {
    const char *target = m.staged.c_str();
    if (m.kind == Mount::Kind::Directory) {
      if (::mkdir(target, 0755) != 0 && errno != EEXIST)
        return fail(e, "mkdir", target);
    } else {
      int fd = ::open(target, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0)
        return fail(e, "create mount point", target);
      ::close(fd);
    }
    formatFdPath(m.fdPath, m.fd);
    unsigned long bind = MS_BIND | (m.kind == Mount::Kind::Directory ? MS_REC : 0);
    if (::mount(m.fdPath, target, nullptr, bind, nullptr) != 0)
      return fail(e, "bind", m.source.c_str());
    unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | keptMountFlags(target);
    if (!m.writable)
      flags |= MS_RDONLY;
    if (m.kind != Mount::Kind::Device)
      flags |= MS_NODEV;
    if (::mount(nullptr, target, nullptr, flags, nullptr) != 0)
      return fail(e, "remount read-only", m.source.c_str());
    ::close(m.fd);
    m.fd = -1;
  }
  // Its own /proc: /proc/self/exe (the binary identity); only its PID
  // namespace's processes, and no /proc/sys (subset=pid, Linux 5.8).
  char procPath[64] = {0};
  {
    size_t n = cstrlen(kStage);
    std::memcpy(procPath, kStage, n);
    std::memcpy(procPath + n, "/proc", 6);
  }
  if (::mount("proc", procPath, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "subset=pid,hidepid=invisible") != 0 &&
      ::mount("proc", procPath, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    return fail(e, "mount proc");
  if (::mount(nullptr, kStage, nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, nullptr) != 0)
    return fail(e, "remount the new root read-only");
  if (::chdir(kStage) != 0)
    return fail(e, "chdir", kStage);
  if (::syscall(SYS_pivot_root, ".", ".") != 0)
    return fail(e, "pivot_root");
  if (::umount2(".", MNT_DETACH) != 0)
    return fail(e, "detach the host's root");
  if (::chdir("/") != 0)
    return fail(e, "chdir /");
  if (root_) {
    // Raw system calls: glibc's set*id would signal msld's threads.
    if (::syscall(SYS_setgroups, 0, nullptr) != 0)
      return fail(e, "setgroups");
    if (::syscall(SYS_setresgid, gid_, gid_, gid_) != 0)
      return fail(e, "setresgid");
    if (::syscall(SYS_setresuid, uid_, uid_, uid_) != 0)
      return fail(e, "setresuid");
    ::prctl(PR_SET_DUMPABLE, 1, 0, 0, 0); // to write its own uid_map
    if (::unshare(CLONE_NEWUSER) != 0)
      return fail(e, "unshare (user namespace)");
    if (!writeFile("/proc/self/setgroups", "deny") && errno != ENOENT)
      return fail(e, "write /proc/self/setgroups");
    if (!writeFile("/proc/self/uid_map", uidMap_.c_str()))
      return fail(e, "write /proc/self/uid_map");
    if (!writeFile("/proc/self/gid_map", gidMap_.c_str()))
      return fail(e, "write /proc/self/gid_map");
  }
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return fail(e, "no_new_privs");
  return true;
}

bool sandboxAvailable(std::string &why) {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) {
    why = "cannot read /proc/self/exe";
    return false;
  }
  self[n] = '\0';
  auto plan = SandboxPlan::prepare(self, {}, why);
  if (!plan)
    return false;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    why = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  pid_t pid = plan->cloneChild();
  if (pid == 0) {
    ::close(p[0]);
    ::_exit(plan->enter(p[1]) ? 0 : 125);
  }
  int cloneErrno = errno;
  ::close(p[1]);
  if (pid < 0) {
    ::close(p[0]);
    why = std::string("clone into new user, mount, PID and network namespaces: ") + std::strerror(cloneErrno);
    if (cloneErrno == ENOSPC)
      why += " (user.max_user_namespaces is 0?)";
    if (std::ifstream in("/proc/sys/kernel/unprivileged_userns_clone"); in) {
      int v = 1;
      in >> v;
      if (v == 0)
        why += " (kernel.unprivileged_userns_clone is 0)";
    }
    return false;
  }
  std::string out;
  char buffer[1024];
  for (;;) {
    pollfd f{p[0], POLLIN, 0};
    int r = ::poll(&f, 1, 10000);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    ssize_t got = ::read(p[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      break;
    out.append(buffer, size_t(got));
  }
  ::close(p[0]);
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    return true;
  why = lastLines(out);
  if (why.rfind("msld sandbox: ", 0) == 0)
    why = why.substr(14);
  if (why.empty())
    why = "the sandbox test child " + std::string(WIFSIGNALED(status) ? "was killed" : "failed");
  else if (why.find("user namespace") != std::string::npos && why.find("No space left") != std::string::npos)
    why += " (user.max_user_namespaces is 0?)";
  else if (why.find("user namespace") != std::string::npos && why.find("not permitted") != std::string::npos)
    why += " (unprivileged user namespaces disabled? kernel.unprivileged_userns_clone)";
  return false;
}

bool startedInSandbox() {
  const char *v = std::getenv(kSandboxEnvironmentVariable);
  return v && std::strcmp(v, "1") == 0;
}

bool installWorkerSeccomp(bool allowFiles, std::string &error) {
#if MSLD_HAVE_SECCOMP
  // EPERM, not a kill or a trap: a call the list misses degrades (LLVM
  // checks its errors) instead of killing a worker (a trap would, on a
  // thread that blocks SIGSYS).
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
  if (!ctx) {
    error = "seccomp_init failed";
    return false;
  }
  int rc = 0;
  auto allow = [&](int nr) {
    if (rc == 0 && nr >= 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
  };
  // Pipes, memory, threads' synchronisation, signals, clocks, exit, and the
  // harmless questions (in the sandbox: its own empty file system).
  for (const char *name :
       {"read", "write", "readv", "writev", "recvmsg", "pread64", "pwrite64", "close", "lseek", "fstat", "newfstatat", "stat",
        "lstat", "statx", "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getcwd", "fcntl", "poll",
        "ppoll", "mmap", "munmap", "mremap", "mprotect", "madvise", "brk", "membarrier", "futex", "futex_waitv",
        "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "exit", "exit_group", "rt_sigaction",
        "rt_sigprocmask", "rt_sigreturn", "sigaltstack", "restart_syscall", "clock_gettime", "clock_getres",
        "clock_nanosleep", "nanosleep", "gettimeofday", "time", "getpid", "gettid", "getppid", "getuid", "geteuid",
        "getgid", "getegid", "getrusage", "times", "sysinfo", "uname", "sched_getaffinity", "sched_setaffinity",
        "sched_yield", "getrandom", "tgkill", "tkill", "kill", "getrlimit"})
    allow(seccomp_syscall_resolve_name(name));
  // Threads, never processes: clone only with CLONE_THREAD; clone3 (whose
  // flags a filter cannot see) says ENOSYS, and glibc falls back to clone.
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  // getrlimit through prlimit64 (no new limit), thread names.
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2, SCMP_A0(SCMP_CMP_EQ, 0),
                          SCMP_A2(SCMP_CMP_EQ, 0));
  for (int option : {PR_SET_NAME, PR_GET_NAME})
    if (rc == 0)
      rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1, SCMP_A0(SCMP_CMP_EQ, scmp_datum_t(option)));
  // isatty() and friends: not a terminal.
  if (rc == 0)
    rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOTTY), SCMP_SYS(ioctl), 0);
  for (const char *name : {"open", "openat", "openat2", "creat", "rename", "renameat", "renameat2", "unlink",
                           "unlinkat", "mkdir", "mkdirat"}) {
    int nr = seccomp_syscall_resolve_name(name);
    if (rc == 0 && nr >= 0)
      rc = seccomp_rule_add(ctx, allowFiles ? SCMP_ACT_ALLOW : SCMP_ACT_ERRNO(EACCES), nr, 0);
  }
  if (rc == 0)
    rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1); // every thread, also those started already
  if (rc == 0)
    rc = seccomp_load(ctx);
  seccomp_release(ctx);
  if (rc != 0) {
    error = std::string("cannot install the seccomp filter: ") + std::strerror(-rc);
    return false;
  }
  return true;
#else
  (void)allowFiles;
  error = "built without libseccomp (scripts/setup.sh installs libseccomp-dev)";
  return false;
#endif
}

void noteSandbox(const SandboxNote &note) {
  std::lock_guard lock(notesMu);
  for (auto &n : notes())
    if (n.role == note.role) {
      n = note;
      return;
    }
  notes().push_back(note);
}

std::vector<SandboxNote> sandboxNotes() {
  std::lock_guard lock(notesMu);
  return notes();
}

} // namespace msl::service
