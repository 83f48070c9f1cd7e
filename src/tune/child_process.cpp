#include "tune/child_process.hpp"

#include <signal.h>

namespace tula::tune {

common::Child start_child_process(const std::vector<std::string>& argv, const std::string& log_path,
                                  const std::string& work_dir) {
  return common::Child(argv, common::SpawnOptions()
                                 .cwd(work_dir)
                                 .stdin_from_null(true)
                                 .output_file(log_path)
                                 .new_process_group(true)
                                 .parent_death_signal(SIGTERM)
                                 // The runner ignores or handles some signals; the child starts clean.
                                 .reset_signals({SIGINT, SIGTERM, SIGPIPE, SIGHUP}));
}

}  // namespace tula::tune
