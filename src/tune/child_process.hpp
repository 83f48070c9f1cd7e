// A long-running child process of the runner (`tula launch`): its output
// appended to a log file, in a process group of its own, and tied to our life
// (it gets SIGTERM if we die), so nothing it starts runs on unseen. No shell:
// argv[0] is a path. A program that cannot be executed exits 127 (126 when it
// is not executable or the directory cannot be entered), its reason the last
// line of the log (common::last_line_of).
// No LibTorch here.
#pragma once
#include <string>
#include <vector>

#include "common/process.hpp"

namespace tula::tune {

// Throws std::system_error when the log cannot be opened or fork fails. The
// Child kills (SIGKILL) and reaps a child still running when it goes.
common::Child start_child_process(const std::vector<std::string>& argv, const std::string& log_path,
                                  const std::string& work_dir = "");

// The options start_child_process() uses, for a caller that adds its own
// (the emulated backend places the child into a node's cgroups and namespace).
common::SpawnOptions child_process_options(const std::string& log_path, const std::string& work_dir = "");

}  // namespace tula::tune
