// Runs a shell command with a time limit and captures its output, for tests
// that drive the `tula` binary the way a user does.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "helpers/free_port.hpp"

namespace tula::testing {

struct CommandResult {
  int exit_code = -1;  // 124: killed by the time limit
  std::string output;  // stdout and stderr together
};

inline CommandResult run_command(const std::string& command, int timeout_seconds = 120) {
  const std::string wrapped =
      "timeout -k 5 " + std::to_string(timeout_seconds) + " sh -c '" + command + "' 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(wrapped.c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buf{};
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) result.output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

inline std::string tula_binary() {
  // A copy of a stored string, not of the literal: GCC 12 misreads appends to
  // a string built from a literal as overflowing (-Wstringop-overflow).
  static const std::string binary = TULA_BINARY;
  return binary;
}

// Runs `tula ARGS` and expects it to refuse: a non-zero exit of its own (not
// the time limit's) and `message` in what it printed.
inline void expect_tula_fails(const std::string& args, const std::string& message, int timeout_seconds = 60) {
  const CommandResult r = run_command(tula_binary() + " " + args, timeout_seconds);
  EXPECT_NE(r.exit_code, 0) << args << "\n" << r.output;
  EXPECT_NE(r.exit_code, 124) << "timed out: " << args << "\n" << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << "expected '" << message << "' from " << args << " in:\n"
                                                       << r.output;
}

// Runs command_for(port) with a port free when picked. Under ctest -j
// another test may bind that port first; a run that failed saying so is
// retried on a fresh port, so only a run on a port of its own is judged.
template <class CommandFor>
CommandResult run_on_free_port(CommandFor command_for, int timeout_seconds = 120, int tries = 5) {
  CommandResult r;
  for (int i = 0; i < tries; ++i) {
    r = run_command(command_for(std::to_string(free_port())), timeout_seconds);
    if (r.exit_code == 0 || !says_port_in_use(r.output)) return r;
  }
  return r;
}

}  // namespace tula::testing
