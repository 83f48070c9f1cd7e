#include "tune/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace tula::tune {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// After SIGKILL a process normally vanishes at once; one stuck in the kernel
// may not, and the caller must still get an answer.
constexpr milliseconds kReapBound{std::chrono::seconds(10)};

// Closes a descriptor when it goes out of scope.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

class SpawnActions {
 public:
  SpawnActions() { posix_spawn_file_actions_init(&actions_); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
  SpawnActions(const SpawnActions&) = delete;
  SpawnActions& operator=(const SpawnActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

class SpawnAttr {
 public:
  SpawnAttr() { posix_spawnattr_init(&attr_); }
  ~SpawnAttr() { posix_spawnattr_destroy(&attr_); }
  SpawnAttr(const SpawnAttr&) = delete;
  SpawnAttr& operator=(const SpawnAttr&) = delete;
  posix_spawnattr_t* get() { return &attr_; }

 private:
  posix_spawnattr_t attr_;
};

// The caller's environment with `overrides` set on top.
std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    const bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                      [&](const auto& o) { return o.first == name; });
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [name, value] : overrides) env.push_back(name + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

void set_status(ProcessResult& result, int status) {
  result.exit_code = exit_code_of(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
}

// Waits until the child is reaped or `bound` passes; true when reaped.
bool reap(pid_t pid, ProcessResult& result, milliseconds bound) {
  const auto status = wait_for_child(pid, bound, milliseconds(5));
  if (!status) return false;
  if (*status != kNotWaitable) set_status(result, *status);  // else reaped elsewhere (SIGCHLD ignored): unknown
  return true;
}

}  // namespace

std::optional<int> wait_for_child(pid_t pid, milliseconds timeout, milliseconds poll) {
  const auto deadline = Clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return kNotWaitable;
    const auto now = Clock::now();
    if (now >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::min<Clock::duration>(poll, deadline - now));
  }
}

int exit_code_of(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + start_error;
  if (timed_out) return "timed out (killed)";
  if (signal != 0) {
    const char* name = ::strsignal(signal);
    return "killed by signal " + std::to_string(signal) + (name ? std::string(" (") + name + ")" : "");
  }
  if (exit_code < 0) return "exit status unknown";
  return "exit status " + std::to_string(exit_code);
}

std::string trimmed(const std::string& text) {
  const auto end = text.find_last_not_of(" \t\r\n");
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  return text.substr(begin, end - begin + 1);
}

std::string find_program(const std::string& program) {
  auto executable = [](const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
  };
  if (program.empty()) return "";
  if (program.find('/') != std::string::npos) return executable(program) ? program : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    std::string dir = dirs.substr(start, colon - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (executable(candidate)) return candidate;
    start = colon + 1;
  }
  return "";
}

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty() || argv.front().empty()) throw std::invalid_argument("run_process: no command");
  ProcessResult result;

  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    result.start_error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  Fd read_end(fds[0]);
  Fd write_end(fds[1]);

  SpawnActions actions;
  posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(actions.get(), write_end.get(), STDERR_FILENO);
  if (!options.cwd.empty()) posix_spawn_file_actions_addchdir_np(actions.get(), options.cwd.c_str());

  SpawnAttr attr;
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  // What a caller ignores or handles (SIGPIPE, SIGTERM, ...) is not the command's business.
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM}) {
    sigaddset(&defaults, sig);
  }
  posix_spawnattr_setsigmask(attr.get(), &empty);
  posix_spawnattr_setsigdefault(attr.get(), &defaults);
  posix_spawnattr_setpgroup(attr.get(), 0);
  posix_spawnattr_setflags(attr.get(), POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<std::string> args = argv;
  std::vector<char*> arg_ptrs = pointers(args);
  std::vector<std::string> env = environment_with(options.env);
  std::vector<char*> env_ptrs = pointers(env);

  const auto start = Clock::now();
  pid_t pid = -1;
  const int err = ::posix_spawnp(&pid, argv.front().c_str(), actions.get(), attr.get(), arg_ptrs.data(),
                                 env_ptrs.data());
  if (err != 0) {
    result.start_error = argv.front() + ": " + std::strerror(err);
    return result;
  }
  result.started = true;
  write_end.reset();  // only the child writes; EOF once it (and what it started) closed the pipe

  const auto deadline = start + options.timeout;
  std::array<char, 8192> buf{};
  auto keep = [&](size_t n) {
    const size_t room = options.max_output - std::min(options.max_output, result.output.size());
    if (n > room) result.output_truncated = true;
    result.output.append(buf.data(), std::min(n, room));
  };
  bool eof = false;
  bool reaped = false;
  while (!eof) {
    const auto now = Clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    // Short polls: a command that exits while something it started keeps
    // the pipe open must not hold us until the time limit.
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - now);
    pollfd pfd{read_end.get(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count() + 1, reaped ? 0 : 50)));
    if (ready > 0) {
      const ssize_t n = ::read(read_end.get(), buf.data(), buf.size());
      if (n > 0) {
        keep(static_cast<size_t>(n));
        continue;
      }
      if (n == 0 || (errno != EINTR && errno != EAGAIN)) eof = true;
      continue;
    }
    if (ready < 0 && errno != EINTR) break;
    if (reaped) break;  // exited, and nothing more is waiting in the pipe
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      set_status(result, status);
      reaped = true;
    } else if (r < 0 && errno == ECHILD) {
      reaped = true;  // reaped by someone else (SIGCHLD ignored): status unknown
    }
  }

  if (result.timed_out) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);  // in case it left its group
    reaped = reaped || reap(pid, result, kReapBound);
    result.exit_code = 128 + SIGKILL;
    result.signal = SIGKILL;
  } else if (!reaped) {
    // EOF: the command closed its output; it ends now, or is about to.
    if (!reap(pid, result, std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(deadline - Clock::now())))) {
      ::kill(-pid, SIGKILL);
      ::kill(pid, SIGKILL);
      reap(pid, result, kReapBound);
      result.timed_out = true;
      result.exit_code = 128 + SIGKILL;
      result.signal = SIGKILL;
    }
  }
  return result;
}

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ProcessOptions options;
  options.timeout = timeout;
  return run_process(argv, options);
}

}  // namespace tula::tune
