// A long-running child process of the runner (`tula launch`, `tula
// profile`): its output appended to a log file, in a process group of its
// own, and tied to our life (it gets SIGTERM if we die), so nothing it starts
// runs on unseen. No shell: argv[0] is a path.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace tula::tune {

class ChildProcess {
 public:
  // Throws std::runtime_error when the log cannot be opened or fork fails;
  // a program that cannot be executed exits 127 (its reason in the log).
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path, const std::string& work_dir = "");
  ~ChildProcess();  // kills a child still running and reaps it
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Waits at most `timeout`; the exit status (128 + N for signal N), or nullopt while it runs.
  std::optional<int> wait_for(std::chrono::milliseconds timeout);
  void signal(int sig);  // to the child itself (a launcher passes it on)
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// The last non-empty line of a file ("" when none): a failed child's reason.
std::string last_line_of(const std::string& path);

}  // namespace tula::tune
