// The scheduler state of a process or thread as Linux reports it in /proc:
// 'R' running, 'S' asleep until some event (a lock, a condition variable, a
// pipe, a timer), 'Z' exited but not yet reaped, and so on.
#pragma once
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace tula::testing {

// The state letter in a /proc/.../stat file, or '\0' when there is none
// (the process or thread is gone).
inline char state_in_stat_file(const std::string& path) {
  std::ifstream stat(path);
  std::string line;
  if (!std::getline(stat, line)) return '\0';
  // "pid (command) S ...": the command may itself hold spaces and parentheses.
  const auto paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return '\0';
  return line[paren + 2];
}

inline char process_state(pid_t pid) {
  return state_in_stat_file("/proc/" + std::to_string(pid) + "/stat");
}

// A thread of this process, by the id current_thread_id() gave it.
inline char thread_state(pid_t tid) {
  return state_in_stat_file("/proc/self/task/" + std::to_string(tid) + "/stat");
}

inline pid_t current_thread_id() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// True once `pid` no longer runs: gone, or a zombie awaiting its parent.
inline bool process_gone(pid_t pid) {
  const char state = process_state(pid);
  return state == '\0' || state == 'Z';
}

}  // namespace tula::testing
