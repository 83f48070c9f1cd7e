#include "tune/subprocess.hpp"

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "common/process.hpp"

namespace tula::tune {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// After SIGKILL a process normally vanishes at once; one stuck in the kernel
// may not, and the caller must still get an answer.
constexpr milliseconds kReapBound{std::chrono::seconds(10)};

common::SpawnOptions spawn_options(const ProcessOptions& options) {
  return common::SpawnOptions()
      .search_path(true)
      .env(options.env)
      .cwd(options.cwd)
      .stdin_from_null(true)
      .output_pipe(true)
      // Its own group, so a terminal's Ctrl-C does not reach it and the time
      // limit can kill what it spawned.
      .new_process_group(true)
      // What a caller ignores or handles (SIGPIPE, SIGTERM, ...) is not the command's business.
      .reset_signals({SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM});
}

// "sbatch: No such file or directory"; a directory it could not enter says so.
std::string start_error_of(const std::string& program, const common::StartFailure& failure) {
  if (failure.step == common::StartStep::EnterDirectory) return failure.describe();
  return program + ": " + std::generic_category().message(failure.error);
}

void set_status(ProcessResult& result, const common::ExitStatus& status) {
  // An unknown status (reaped by someone else, SIGCHLD ignored) leaves exit_code at -1.
  if (status.is_known()) result.exit_code = status.exit_code();
  result.signal = status.signal();
}

void keep(ProcessResult& result, const char* data, size_t n, size_t max_output) {
  const size_t room = max_output - std::min(max_output, result.output.size());
  if (n > room) result.output_truncated = true;
  result.output.append(data, std::min(n, room));
}

// Reads the command's output until its end (EOF, or it exited and nothing
// more waits in the pipe) or the deadline; timed_out then.
void collect_output(common::Child& child, Clock::time_point deadline, size_t max_output, ProcessResult& result) {
  std::array<char, 8192> buf{};
  while (true) {
    const auto now = Clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      return;
    }
    // Short polls: a command that exits while something it started keeps
    // the pipe open must not hold us until the time limit.
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - now);
    const bool exited = child.status().has_value();
    pollfd pfd{child.output_fd(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count() + 1, exited ? 0 : 50)));
    if (ready > 0) {
      const ssize_t n = ::read(child.output_fd(), buf.data(), buf.size());
      if (n > 0) keep(result, buf.data(), static_cast<size_t>(n), max_output);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return;
      continue;
    }
    if ((ready < 0 && errno != EINTR) || exited) return;
    child.try_wait();
  }
}

// Kills the command and what it started in its group, and reaps it within
// kReapBound; one stuck in the kernel is left behind rather than waited on.
void kill_command(common::Child& child, ProcessResult& result) {
  // The group too when the command itself has been reaped already: what it
  // started may still write into the pipe.
  common::signal_group(child.pid(), SIGKILL);
  child.signal(SIGKILL);  // in case it left its group
  if (!child.wait_for(kReapBound)) child.release();
  result.timed_out = true;
  result.exit_code = 128 + SIGKILL;
  result.signal = SIGKILL;
}

}  // namespace

std::string ProcessResult::describe() const {
  if (!started) return "could not start: " + start_error;
  if (timed_out) return "timed out (killed)";
  if (signal != 0) return common::ExitStatus::killed(signal).describe();
  if (exit_code < 0) return "exit status unknown";
  return fmt::format("exit status {}", exit_code);
}

std::string trimmed(const std::string& text) {
  const auto end = text.find_last_not_of(" \t\r\n");
  const auto begin = text.find_first_not_of(" \t\r\n");
  if (end == std::string::npos) return "";
  return text.substr(begin, end - begin + 1);
}

std::string find_program(const std::string& program) { return common::find_program(program); }

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  if (argv.empty() || argv.front().empty()) throw std::invalid_argument("run_process: no command");
  ProcessResult result;
  const auto deadline = Clock::now() + options.timeout;
  common::Child child;
  try {
    child = common::Child(argv, spawn_options(options));
  } catch (const std::system_error& e) {
    result.start_error = e.what();
    return result;
  }
  if (child.start_failure()) {
    result.start_error = start_error_of(argv.front(), *child.start_failure());
    return result;  // the child has exited; ~Child reaps it
  }
  result.started = true;
  collect_output(child, deadline, options.max_output, result);
  if (!result.timed_out && !child.status()) {
    // EOF: the command closed its output; it ends now, or is about to.
    child.wait_for(std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(deadline - Clock::now())));
  }
  if (result.timed_out || !child.status()) {
    kill_command(child, result);
  } else {
    set_status(result, *child.status());
  }
  return result;
}

ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  ProcessOptions options;
  options.timeout = timeout;
  return run_process(argv, options);
}

}  // namespace tula::tune
