#include "tune/child_process.hpp"

#include <signal.h>

namespace tula::tune {

common::SpawnOptions child_process_options(const std::string& log_path, const std::string& work_dir) {
  return common::SpawnOptions()
      .cwd(work_dir)
      .stdin_from_null(true)
      .output_file(log_path)
      .new_process_group(true)
      .parent_death_signal(SIGTERM)
      // The runner ignores or handles some signals; the child starts clean.
      .reset_signals({SIGINT, SIGTERM, SIGPIPE, SIGHUP});
}

common::Child start_child_process(const std::vector<std::string>& argv, const std::string& log_path,
                                  const std::string& work_dir) {
  return common::Child(argv, child_process_options(log_path, work_dir));
}

}  // namespace tula::tune
