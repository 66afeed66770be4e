//===- Sandbox.h - Workers in namespaces, with a seccomp filter -----------===//
//
// Compile and execution workers run in a sandbox on top of their rlimits
// (README "Sandbox"):
//
// - msld's side (SandboxPlan, before exec): the worker is cloned into its own
//   user, mount, PID, network, IPC and UTS namespaces. Its root is a
//   read-only tmpfs holding only, at their host paths and read-only, the
//   worker binary, its ELF interpreter and the shared libraries it links
//   (as `ld.so --list` resolves them, plus /etc/ld.so.cache), /dev/null and
//   /dev/urandom, and its own /proc (its PID namespace only, subset=pid):
//   nothing of the host file system is writable or visible beyond that. The
//   network namespace has no interface up (not even loopback). Under root,
//   the worker runs as nobody (65534) in a user namespace of its own;
//   otherwise as msld's user. No new privileges (PR_SET_NO_NEW_PRIVS); the
//   worker is PID 1 of its namespace, so everything it could start dies
//   with it.
//
// - the worker's side (installWorkerSeccomp, after it loaded everything and
//   computed its hello, before it reads a request): a seccomp allow-list of
//   the system calls a compile or a kernel makes (memory, futexes, pipes,
//   threads, signals, clocks); anything else fails with EPERM (opening files
//   with EACCES, clone3 with ENOSYS so that threads fall back to clone,
//   which is allowed only with CLONE_THREAD). The filter is installed by
//   the worker rather than between fork and exec because exec and the
//   dynamic loader need open, mmap of files and execve, which the filter
//   denies; once the worker has loaded, the list can be tight.
//
// CUDA workers are not sandboxed: they need /dev/nvidia*, the driver's
// libraries (dlopen'ed by name) and /proc/driver/nvidia.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

namespace msl::service {

struct SandboxOptions {
  /// Run the workers in the sandbox. Off by default (the CUDA workers).
  bool enabled = false;
  /// With `enabled`: a worker that cannot be sandboxed (e.g. a script)
  /// refuses the pool's start; otherwise it runs with rlimits only, logged.
  bool required = false;
  /// Host paths (files or directories) also visible, at the same path,
  /// read-only and read-write (e.g. MSLD_COMPILE_REPLAY_DIR and _RECORD_DIR).
  std::vector<std::string> readOnlyPaths;
  std::vector<std::string> writablePaths;
};

/// Everything a sandboxed child needs, computed before the fork: between
/// clone and exec only async-signal-safe system calls are made.
class SandboxPlan {
public:
  /// The mounts for `binary` (its interpreter and libraries). Null with
  /// `error` when it cannot be sandboxed (not a dynamically linked ELF
  /// executable, e.g. a `#!` script, or a library that cannot be found).
  static std::unique_ptr<SandboxPlan> prepare(const std::string &binary, const SandboxOptions &options,
                                              std::string &error);
  ~SandboxPlan();

  /// Like fork(), into new namespaces: the child (which returns 0) is PID 1
  /// of its PID namespace. -1 with errno on failure.
  pid_t cloneChild() const;
  /// In the child of cloneChild(): sets up the mounts, the credentials and
  /// no_new_privs. On failure writes "msld sandbox: STEP: ERROR\n" to
  /// `errorFd` and returns false (the child should _exit). Async-signal-safe.
  bool enter(int errorFd) const;

  /// The binary to exec, as an absolute path (the same inside and out).
  const std::string &executable() const { return executable_; }
  /// The host paths visible in the sandbox (for logs and tests).
  std::vector<std::string> visiblePaths() const;

  struct Mount;

private:
  SandboxPlan() = default;
  std::string executable_;
  std::vector<Mount> mounts_;
  std::vector<std::string> dirs_; // to create under the new root, parents first
  bool root_ = false;             // msld runs as root: drop to nobody
  uid_t uid_ = 0;
  gid_t gid_ = 0;
  std::string uidMap_, gidMap_;
};

/// Whether workers can be sandboxed here: a throwaway child sets up a whole
/// sandbox (namespaces, mounts, credentials) and exits. False with `why`
/// (e.g. "unshare: user namespaces: Operation not permitted").
bool sandboxAvailable(std::string &why);

/// Set in a sandboxed worker's environment by WorkerPool: the worker then
/// installs its seccomp filter (installWorkerSeccomp) before its hello.
constexpr const char *kSandboxEnvironmentVariable = "MSLD_WORKER_SANDBOX";
/// Whether this process was started sandboxed by WorkerPool.
bool startedInSandbox();

/// Worker side: installs the seccomp allow-list on every thread of the
/// process (TSYNC). `allowFiles` keeps open/openat (a compile worker that
/// records its compiles into MSLD_COMPILE_RECORD_DIR). False with `error`.
bool installWorkerSeccomp(bool allowFiles, std::string &error);

/// What each worker pool did (WorkerPool notes it at start): msld reports it
/// in its log and ready file.
struct SandboxNote {
  std::string role; // "compile", "execution", ...
  bool sandboxed = false;
  std::string why; // when not sandboxed although asked
};
void noteSandbox(const SandboxNote &note);
std::vector<SandboxNote> sandboxNotes();

} // namespace msl::service
