// Child processes: starting a program (no shell), waiting for it with a time
// limit, telling how it ended, signalling it, its group or its session, and
// reading the last line of its log. The one fork/exec path of Tula: `tula
// launch` starts its workers with it, `tula tune` its launcher (on an
// emulated cluster, one per node, placed into the node's cgroups and
// network namespace), the profiler and its short Slurm commands, `tula
// serve` its tune processes.
//
//   Child child({"/bin/sh", "-c", "echo hi"},
//               SpawnOptions().output_file(log).new_process_group(true).parent_death_signal(SIGTERM));
//   if (const auto status = child.wait_for(std::chrono::seconds(10)); status && !status->success())
//     throw std::runtime_error(status->describe() + ": " + last_line_of(log));
//
// Everything the child needs is prepared before fork(), so between fork and
// exec the child only makes async-signal-safe calls and allocates nothing
// (another thread may hold malloc's lock at the moment of the fork). Safe to
// call from several threads at once; it changes no signal disposition of the
// calling process.
// No LibTorch here.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/fd.hpp"

namespace tula::common {

// An option with a chained setter and a getter, as LibTorch's C++ frontend
// writes its options: SpawnOptions().cwd(dir).new_session(true).
#define TULA_PROCESS_OPTION(T, name)                   \
 public:                                               \
  SpawnOptions& name(const T& value) {                 \
    name##_ = value;                                   \
    return *this;                                      \
  }                                                    \
  SpawnOptions& name(T&& value) {                      \
    name##_ = std::move(value);                        \
    return *this;                                      \
  }                                                    \
  const T& name() const noexcept { return name##_; }   \
                                                       \
 private:                                              \
  T name##_

// A descriptor of ours that the child keeps open across exec, as number `as`
// (3 or above), with close-on-exec cleared: the service's job lock.
struct InheritedFd {
  int fd = -1;
  int as = -1;
};

using EnvironmentVariables = std::vector<std::pair<std::string, std::string>>;

class SpawnOptions {
  // argv[0] without a slash is looked up in the child's PATH, as a shell
  // would; otherwise it is a path.
  TULA_PROCESS_OPTION(bool, search_path) = false;
  // Set, or replaced, on top of this process's environment.
  TULA_PROCESS_OPTION(EnvironmentVariables, env) = {};
  // The child's working directory; empty: ours.
  TULA_PROCESS_OPTION(std::string, cwd) = {};
  // stdin from /dev/null instead of ours.
  TULA_PROCESS_OPTION(bool, stdin_from_null) = false;
  // stdout and stderr appended to this file (created 0644); empty: ours. A
  // child that cannot enter cwd or execute its program gets the reason
  // written here too.
  TULA_PROCESS_OPTION(std::string, output_file) = {};
  // stdout and stderr into one pipe, interleaved as written; Started::output
  // is its read end. Not together with output_file.
  TULA_PROCESS_OPTION(bool, output_pipe) = false;
  // A session of its own (and so a process group of its own, and no
  // controlling terminal): a terminal's Ctrl-C does not reach it.
  TULA_PROCESS_OPTION(bool, new_session) = false;
  // A process group of its own, whose id is its pid: it and what it starts
  // can be signalled as one.
  TULA_PROCESS_OPTION(bool, new_process_group) = false;
  TULA_PROCESS_OPTION(InheritedFd, inherit_fd) = {};
  // The child writes its own pid ("1234\n") over the inherited file before
  // exec, so the file names it from its first moment, even if we die just
  // after the fork.
  TULA_PROCESS_OPTION(bool, write_pid_to_inherited_fd) = false;
  // Closes every descriptor but 0, 1, 2 and the inherited one, whether or not
  // it is close-on-exec: no socket or database handle of ours outlives us in
  // a long-lived child.
  TULA_PROCESS_OPTION(bool, close_other_fds) = false;
  // Sent to the child when the thread that started it ends (PR_SET_PDEATHSIG),
  // so that it does not outlive us; 0: none. A child whose parent died
  // before this took effect exits at once with status 1.
  TULA_PROCESS_OPTION(int, parent_death_signal) = 0;
  // Signals the child starts with at their default action even where we
  // ignore them. The signals we handle start at their default action anyway
  // (exec cannot keep a handler), and the others we ignore stay ignored.
  TULA_PROCESS_OPTION(std::vector<int>, reset_signals) = {};
  // Signals the child starts ignoring.
  TULA_PROCESS_OPTION(std::vector<int>, ignore_signals) = {};
  // The signals the child starts with blocked; nullopt: none.
  TULA_PROCESS_OPTION(std::optional<sigset_t>, signal_mask) = std::nullopt;
  // Cgroup directories the child moves itself into before exec (its pid
  // written to each one's cgroup.procs), so that it and all it starts run
  // under their limits from the first instruction: one per cgroup v1
  // hierarchy (cpu, cpuset) or the one v2 directory. Empty: ours.
  TULA_PROCESS_OPTION(std::vector<std::string>, cgroups) = {};
  // The network namespace the child enters (setns) before exec, as a file
  // (/run/netns/NAME, /proc/PID/ns/net); empty: ours. Needs CAP_SYS_ADMIN.
  TULA_PROCESS_OPTION(std::string, network_namespace) = {};

 public:
  // Sets (or replaces) one variable.
  SpawnOptions& env(std::string name, std::string value) {
    env_.emplace_back(std::move(name), std::move(value));
    return *this;
  }
  SpawnOptions& inherit_fd(int fd, int as) { return inherit_fd(InheritedFd{fd, as}); }
};

#undef TULA_PROCESS_OPTION

// The step at which a child failed to become its program.
enum class StartStep { EnterDirectory, Execute, JoinCgroup, EnterNetworkNamespace };

struct StartFailure {
  StartStep step = StartStep::Execute;
  int error = 0;     // errno of chdir, exec, the write to cgroup.procs or setns
  std::string path;  // the directory, the program as given, the cgroup or the namespace

  // "cannot enter /x: No such file or directory", "cannot execute tula: Permission denied",
  // "cannot join the cgroup /sys/fs/cgroup/cpu/a: No space left on device".
  std::string describe() const;
  // The exit status the child left with, as a shell's: 127 for a program not
  // found, else 126.
  int exit_code() const;
};

struct Started {
  pid_t pid = -1;
  Fd output;  // with output_pipe: the read end
  // Set when the child could not enter its directory or execute its program;
  // it has then exited (with failure->exit_code()) and still has to be reaped.
  std::optional<StartFailure> failure;
};

// Starts argv. Returns once the child has executed its program or failed to
// (Started::failure). Throws std::invalid_argument for an empty argv or
// inconsistent options, std::system_error when a file, a pipe or the process
// cannot be made, or a cgroup's or namespace's file cannot be opened. The
// caller reaps the child (or lets Child do it).
Started spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// How a process ended.
class ExitStatus {
 public:
  static ExitStatus exited(int code) { return ExitStatus(Kind::Exited, code); }
  static ExitStatus killed(int signal) { return ExitStatus(Kind::Killed, signal); }
  // It ended, but how is unknown: someone else reaped it (SIGCHLD ignored).
  static ExitStatus unknown() { return ExitStatus(Kind::Unknown, 0); }
  static ExitStatus from_wait_status(int wait_status);
  static ExitStatus from_siginfo(const siginfo_t& info);  // from waitid()

  bool is_exited() const { return kind_ == Kind::Exited; }
  bool is_killed() const { return kind_ == Kind::Killed; }
  bool is_known() const { return kind_ != Kind::Unknown; }
  bool success() const { return is_exited() && value_ == 0; }
  // As a shell reports it: the exit status 0..255, or 128 + N for signal N;
  // -1 when unknown.
  int exit_code() const;
  int signal() const { return is_killed() ? value_ : 0; }
  // "exit status 1", "killed by signal 9 (Killed)", "exit status unknown".
  std::string describe() const;

  bool operator==(const ExitStatus&) const = default;

 private:
  enum class Kind { Exited, Killed, Unknown };
  ExitStatus(Kind kind, int value) : kind_(kind), value_(value) {}
  Kind kind_;
  int value_;  // the exit status or the signal
};

// Reaps child `pid` if it has ended, without blocking: nullopt while it
// runs; ExitStatus::unknown() when it is not ours to wait for (reaped
// elsewhere, or not our child).
std::optional<ExitStatus> try_reap(pid_t pid);
// Waits up to `timeout` for child `pid` to end and reaps it; nullopt when it
// still runs. Wakes as the child ends (a pidfd), not on a polling interval.
std::optional<ExitStatus> wait_for(pid_t pid, std::chrono::milliseconds timeout);
// Notes that child `pid` has ended without reaping it: its zombie keeps the
// pid (and its process group id) from being reused while we may still
// signal them. nullopt while it runs.
std::optional<ExitStatus> peek_exit(pid_t pid);

// Signals one process, a process group, or every process of a session.
// False (0 reached) when there is none, or it is not ours to signal.
bool signal_process(pid_t pid, int sig);
bool signal_group(pid_t group, int sig);
// A process started with new_session() and all it started that stayed in its
// session; the count of processes reached. Scans /proc.
int signal_session(pid_t session, int sig);
// The session of a live process; nullopt when it is gone or a zombie.
std::optional<pid_t> session_of(pid_t pid);

// "SIGKILL" (SIG34 for one without a name); and "Killed", its description.
std::string signal_name(int sig);
std::string signal_description(int sig);

// The full path of `program` as search_path would find it in our PATH (or
// the program itself when it holds a slash and is executable), or "" when
// there is none.
std::string find_program(const std::string& program);

// The last non-empty line of a file ("" when none, or no file): the reason a
// child that logs its errors failed.
std::string last_line_of(const std::string& path);

// A child process we own: started by spawn(), killed (SIGKILL) and reaped if
// it still runs when this object goes, unless released.
class Child {
 public:
  Child() = default;
  Child(const std::vector<std::string>& argv, const SpawnOptions& options);
  ~Child();
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  int output_fd() const { return output_.get(); }
  const std::optional<StartFailure>& start_failure() const { return failure_; }
  // Once reaped: how it ended.
  const std::optional<ExitStatus>& status() const { return status_; }

  std::optional<ExitStatus> try_wait();
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds timeout);
  // To the child, or to its process group; false once it has been reaped
  // (its pid may belong to another process by then).
  bool signal(int sig);
  bool signal_group(int sig);
  // Gives the child up: it is neither killed nor reaped here any more.
  pid_t release();

 private:
  void kill_and_reap();

  pid_t pid_ = -1;
  Fd output_;
  std::optional<StartFailure> failure_;
  std::optional<ExitStatus> status_;
};

}  // namespace tula::common
