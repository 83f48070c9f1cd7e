// The `tula tune` process of a service job. It runs in a session of its own
// and outlives the server, so a server killed with SIGKILL loses no work; it
// holds the job's lock file (an flock shared by everything it starts) for as
// long as it or any of its workers lives, and the file names its pid. So a
// restarted server tells a live job from a dead one by the lock, re-adopts the
// live one, and can never start a second process for the same job.
// No LibTorch here.
#pragma once
#include <sys/types.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tula::service {

// The job's lock is held: a process for it runs already.
class JobBusy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Starts argv (argv[0] a path) in a new session, cwd work_dir, stdout and
// stderr appended to log_path, holding lock_path. Returns its pid. Throws
// JobBusy when the lock is held, std::runtime_error when it cannot start.
pid_t start_tune_process(const std::vector<std::string>& argv, const std::string& lock_path,
                         const std::string& log_path, const std::string& work_dir);

// The pid the lock file names while its lock is held; nullopt when nothing
// holds it (the job's processes have all ended).
std::optional<pid_t> lock_holder(const std::string& lock_path);

// Sends `sig` to every process of session `session`: the tune process and
// the launcher it runs. Not the workers: the launcher puts each in a session
// of its own, and they die with it (parent-death signal). Returns how many
// processes it reached.
int signal_session(pid_t session, int sig);

// Reaps our own child without blocking: its exit status (128 + N for signal
// N) once it ended, nullopt while it runs or when it is not our child.
std::optional<int> reap_child(pid_t pid);

}  // namespace tula::service
