// Waiting for child processes, telling how they ended, signalling them; the
// Child owner; log tails. spawn() and the PATH look-up are in spawn.cpp.
#include "common/process.hpp"

#include <dirent.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

namespace tula::common {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// A descriptor that becomes readable when `pid` ends; invalid where the
// kernel has no pidfds (before Linux 5.3) or the process is gone.
Fd pidfd_of(pid_t pid) { return Fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0))); }

// Sleeps until the process behind `pidfd` ends or `most` passes; without a
// pidfd, a short sleep (the caller then looks again).
void pause_for_exit(const Fd& pidfd, Clock::duration most) {
  if (!pidfd) {
    std::this_thread::sleep_for(std::min<Clock::duration>(most, milliseconds(10)));
    return;
  }
  const auto ms = std::chrono::ceil<milliseconds>(most).count();
  pollfd ready{pidfd.get(), POLLIN, 0};
  ::poll(&ready, 1, static_cast<int>(std::min<long long>(ms, INT_MAX)));
}

}  // namespace

// ---------------------------------------------------------------------------
// How a process ended.

ExitStatus ExitStatus::from_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return exited(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return killed(WTERMSIG(wait_status));
  return unknown();
}

ExitStatus ExitStatus::from_siginfo(const siginfo_t& info) {
  if (info.si_code == CLD_EXITED) return exited(info.si_status);
  if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED) return killed(info.si_status);
  return unknown();
}

int ExitStatus::exit_code() const {
  switch (kind_) {
    case Kind::Exited:
      return value_;
    case Kind::Killed:
      return 128 + value_;
    case Kind::Unknown:
      break;
  }
  return -1;
}

std::string ExitStatus::describe() const {
  switch (kind_) {
    case Kind::Exited:
      return fmt::format("exit status {}", value_);
    case Kind::Killed:
      return fmt::format("killed by signal {} ({})", value_, signal_description(value_));
    case Kind::Unknown:
      break;
  }
  return "exit status unknown";
}

std::string signal_name(int sig) {
  const char* abbreviation = ::sigabbrev_np(sig);
  return abbreviation != nullptr ? fmt::format("SIG{}", abbreviation) : fmt::format("SIG{}", sig);
}

std::string signal_description(int sig) {
  const char* description = ::sigdescr_np(sig);
  return description != nullptr ? description : fmt::format("signal {}", sig);
}

// ---------------------------------------------------------------------------
// Waiting.

std::optional<ExitStatus> try_reap(pid_t pid) {
  if (pid <= 0) return ExitStatus::unknown();  // waitpid would take any child
  int status = 0;
  pid_t got;
  do {
    got = ::waitpid(pid, &status, WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got == 0) return std::nullopt;
  if (got < 0) return ExitStatus::unknown();
  return ExitStatus::from_wait_status(status);
}

std::optional<ExitStatus> wait_for(pid_t pid, milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Fd pidfd;
  while (true) {
    if (auto status = try_reap(pid)) return status;
    const auto left = deadline - Clock::now();
    if (left <= Clock::duration::zero()) return std::nullopt;
    if (!pidfd) pidfd = pidfd_of(pid);
    pause_for_exit(pidfd, left);
  }
}

std::optional<ExitStatus> peek_exit(pid_t pid) {
  if (pid <= 0) return ExitStatus::unknown();
  siginfo_t info{};
  int result;
  do {
    result = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (result != 0 && errno == EINTR);
  if (result != 0) return ExitStatus::unknown();
  if (info.si_pid == 0) return std::nullopt;  // still running
  return ExitStatus::from_siginfo(info);
}

// ---------------------------------------------------------------------------
// Signalling.

bool signal_process(pid_t pid, int sig) { return pid > 0 && ::kill(pid, sig) == 0; }

bool signal_group(pid_t group, int sig) { return group > 1 && ::killpg(group, sig) == 0; }

std::optional<pid_t> session_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  // Field 6, after the command name in parentheses, which may itself hold
  // spaces and parentheses.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long ppid = 0, pgrp = 0, session = 0;
  if (!(rest >> state >> ppid >> pgrp >> session)) return std::nullopt;
  if (state == "Z") return std::nullopt;  // ended, awaiting its parent
  return static_cast<pid_t>(session);
}

int signal_session(pid_t session, int sig) {
  if (session <= 1) return 0;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return 0;
  int reached = 0;
  while (const dirent* entry = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atol(entry->d_name));
    if (pid > 0 && session_of(pid) == session && ::kill(pid, sig) == 0) ++reached;
  }
  ::closedir(proc);
  return reached;
}

// ---------------------------------------------------------------------------
// Files.

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

// ---------------------------------------------------------------------------
// Child.

Child::Child(const std::vector<std::string>& argv, const SpawnOptions& options) {
  Started started = spawn(argv, options);
  pid_ = started.pid;
  output_ = std::move(started.output);
  failure_ = std::move(started.failure);
}

Child::~Child() { kill_and_reap(); }

Child::Child(Child&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      output_(std::move(other.output_)),
      failure_(std::move(other.failure_)),
      status_(std::move(other.status_)) {}

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    kill_and_reap();
    pid_ = std::exchange(other.pid_, -1);
    output_ = std::move(other.output_);
    failure_ = std::move(other.failure_);
    status_ = std::move(other.status_);
  }
  return *this;
}

void Child::kill_and_reap() {
  if (pid_ <= 0 || status_) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::optional<ExitStatus> Child::try_wait() {
  if (!status_ && pid_ > 0) status_ = try_reap(pid_);
  return status_;
}

std::optional<ExitStatus> Child::wait_for(milliseconds timeout) {
  if (!status_ && pid_ > 0) status_ = common::wait_for(pid_, timeout);
  return status_;
}

bool Child::signal(int sig) { return !status_ && signal_process(pid_, sig); }

bool Child::signal_group(int sig) { return !status_ && common::signal_group(pid_, sig); }

pid_t Child::release() {
  status_.reset();
  return std::exchange(pid_, -1);
}

}  // namespace tula::common
