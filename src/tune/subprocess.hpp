// Running a short external command to completion: argv (no shell), stdout
// and stderr captured together, a time limit after which the command and
// everything it started in its process group are killed. For the backends'
// calls to sbatch, scontrol, scancel and the like; not for the workers
// themselves, which outlive any one call.
//
//   ProcessResult r = run_process({"scontrol", "ping"}, std::chrono::seconds(10));
//   if (!r.ok()) throw BackendError("scontrol ping: " + r.describe() + ": " + r.output);
//
// Safe to call from several threads at once; it changes no signal
// disposition of the calling process and reaps only its own child. The
// command starts in a process group of its own, so a terminal's Ctrl-C does
// not reach it and the time limit can kill what it spawned.
// No LibTorch here.
#pragma once
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tula::tune {

struct ProcessOptions {
  // From the start until SIGKILL to the command's process group.
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  std::string cwd;                                        // empty: the caller's
  std::vector<std::pair<std::string, std::string>> env;   // set (or replaced) on top of the caller's environment
  std::size_t max_output = 1 << 20;                       // bytes kept; the rest is read and dropped
};

struct ProcessResult {
  bool started = false;    // false: the command could not be run (start_error says why)
  std::string start_error; // "No such file or directory", ...
  bool timed_out = false;  // killed by the time limit
  int exit_code = -1;      // 0..255 when it exited; 128 + N when signal N ended it; -1 when not started
  int signal = 0;          // the signal that ended it, else 0
  std::string output;      // stdout and stderr, interleaved as written (up to max_output bytes)
  bool output_truncated = false;

  // Exited on its own with status 0.
  bool ok() const { return started && !timed_out && signal == 0 && exit_code == 0; }
  // For messages: "exit status 1", "killed by signal 9 (Killed)",
  // "timed out after 10 s", "could not start: No such file or directory".
  std::string describe() const;
};

// Runs argv[0] (looked up in PATH when it has no slash) with argv, waits for
// it to end or for the time limit. Never throws for what the command does;
// throws std::invalid_argument for an empty argv.
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

// run_process with the default options but for the time limit.
ProcessResult run_process(const std::vector<std::string>& argv, std::chrono::milliseconds timeout);

// The full path of `program` as run_process would find it in PATH (or the
// program itself when it holds a slash and is executable), or "" when there
// is none.
std::string find_program(const std::string& program);

// The output without trailing white space and newlines, for messages.
std::string trimmed(const std::string& text);

}  // namespace tula::tune
