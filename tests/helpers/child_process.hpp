// A command started in the background, for tests that signal it while it
// runs: its pid, its output in a file, and its exit status as a shell
// reports it. Also what the tests of `tula train` read while a run goes on:
// the records of its metrics file, and the worker processes of a launcher.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"

namespace tula::testing {

// The words of `command`, split at spaces (no quoting).
inline std::vector<std::string> words(const std::string& command) {
  std::vector<std::string> out;
  std::istringstream in(command);
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

class ChildProcess {
 public:
  // Runs argv (argv[0] a path, no shell) with stdout and stderr into `log`,
  // SIGINT, SIGTERM and SIGPIPE at their defaults whatever this process
  // inherited, and no signal blocked.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log) : log_(log) {
    if (argv.empty()) throw std::invalid_argument("ChildProcess: no command");
    std::vector<std::string> strings = argv;
    std::vector<char*> pointers;
    for (auto& s : strings) pointers.push_back(s.data());
    pointers.push_back(nullptr);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("ChildProcess: cannot open " + log);
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls from here to exec
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      struct sigaction action {};
      action.sa_handler = SIG_DFL;
      sigemptyset(&action.sa_mask);
      for (int sig : {SIGINT, SIGTERM, SIGPIPE}) ::sigaction(sig, &action, nullptr);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
      ::execv(pointers[0], pointers.data());
      ::_exit(127);
    }
    ::close(fd);
    if (pid_ < 0) throw std::runtime_error("ChildProcess: fork failed");
  }
  ~ChildProcess() {
    if (running_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  std::string output() const { return read_text(log_); }
  bool send(int sig) const { return running_ && ::kill(pid_, sig) == 0; }

  // True once it has ended (and then reaped: exit_code() tells how).
  bool ended() {
    if (!running_) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    running_ = false;
    signaled_ = WIFSIGNALED(status);
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return true;
  }

  // Its exit status as a shell reports it (128 + N for signal N); -1, and a
  // test failure, when it has not ended within `patience`.
  int wait(std::chrono::milliseconds patience = kPatience) {
    const auto done = eventually([&] { return ended(); }, "pid " + std::to_string(pid_) + " to exit", patience);
    if (!done) {
      ADD_FAILURE() << done.message() << "\n" << output();
      return -1;
    }
    return exit_code_;
  }
  int exit_code() const { return exit_code_; }
  // It ended by a signal's default action, not by exit() (128 + N either way).
  bool signaled() const { return signaled_; }

 private:
  std::string log_;
  pid_t pid_ = -1;
  bool running_ = true;
  int exit_code_ = -1;
  bool signaled_ = false;
};

// The complete JSON lines of a metrics file so far (a line still being
// written is left out).
inline std::vector<nlohmann::json> metrics_records(const std::filesystem::path& file) {
  std::vector<nlohmann::json> records;
  const std::string text = read_text(file);
  std::istringstream in(text.substr(0, text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) records.push_back(nlohmann::json::parse(line));
  }
  return records;
}

// The step of the last "iter" record, or 0 when there is none yet.
inline int64_t last_iter_step(const std::vector<nlohmann::json>& records) {
  int64_t step = 0;
  for (const auto& r : records) {
    if (r["type"] == "iter") step = r["step"].get<int64_t>();
  }
  return step;
}

// The records of one type.
inline std::vector<nlohmann::json> records_of(const std::vector<nlohmann::json>& records, const std::string& type) {
  std::vector<nlohmann::json> out;
  for (const auto& r : records) {
    if (r["type"] == type) out.push_back(r);
  }
  return out;
}

// The children of `parent` whose environment holds RANK=`rank` (the workers
// a launcher started); none while it has not started it yet.
inline std::optional<pid_t> worker_of(pid_t parent, int rank) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto paren = line.rfind(')');
    if (paren == std::string::npos) continue;
    std::istringstream fields(line.substr(paren + 1));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid != parent) continue;
    std::ifstream environ(entry.path() / "environ", std::ios::binary);
    for (std::string var; std::getline(environ, var, '\0');) {
      if (var == "RANK=" + std::to_string(rank)) return static_cast<pid_t>(std::stol(name));
    }
  }
  return std::nullopt;
}

// Whether process `pid` ignores signal `sig` (its SigIgn mask in /proc).
inline bool ignores_signal(pid_t pid, int sig) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigIgn:", 0) == 0) return (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1)) & 1;
  }
  return false;
}

}  // namespace tula::testing
