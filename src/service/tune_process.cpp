#include "service/tune_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/fd.hpp"
#include "common/process.hpp"

namespace tula::service {
namespace {

using common::Fd;

// The descriptor the tune process and everything it starts hold the lock by.
constexpr int kLockFd = 3;

// The job's lock, taken: before the process starts, so there is no moment at
// which the job runs without its lock held.
Fd take_lock(const std::string& lock_path) {
  Fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (!lock) throw std::runtime_error("cannot open the job lock " + lock_path + ": " + std::strerror(errno));
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw JobBusy("the job's lock " + lock_path + " is held: its tune process runs already");
    throw std::runtime_error("cannot lock " + lock_path + ": " + std::strerror(errno));
  }
  return lock;
}

}  // namespace

pid_t start_tune_process(const std::vector<std::string>& argv, const std::string& lock_path,
                         const std::string& log_path, const std::string& work_dir) {
  if (argv.empty()) throw std::invalid_argument("a tune process needs a program");
  const Fd lock = take_lock(lock_path);
  const auto options = common::SpawnOptions()
                           .cwd(work_dir)
                           .stdin_from_null(true)
                           .output_file(log_path)
                           // It outlives the server: no terminal's Ctrl-C, no parent-death signal.
                           .new_session(true)
                           // Inherited across exec by the tune process and everything it starts,
                           // and naming the tune process from its first moment.
                           .inherit_fd(lock.get(), kLockFd)
                           .write_pid_to_inherited_fd(true)
                           // No listening socket or database handle of the server's.
                           .close_other_fds(true)
                           .reset_signals({SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGCHLD});
  // A program that cannot run exits 126 or 127 with its reason in the log.
  return common::spawn(argv, options).pid;  // our copy of the lock closes here; the child's keeps it held
}

std::optional<pid_t> lock_holder(const std::string& lock_path) {
  Fd lock(::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!lock) return std::nullopt;  // never started
  if (::flock(lock.get(), LOCK_SH | LOCK_NB) == 0) return std::nullopt;  // nobody holds it
  char text[32] = {};
  const ssize_t n = ::pread(lock.get(), text, sizeof text - 1, 0);
  // Held, but the child may not have written its pid yet: 0 then.
  return n > 0 ? static_cast<pid_t>(std::atol(text)) : 0;
}

int signal_session(pid_t session, int sig) { return common::signal_session(session, sig); }

std::optional<int> reap_child(pid_t pid) {
  const auto status = common::try_reap(pid);
  // Not our child (or reaped elsewhere): nothing to report.
  if (!status || !status->is_known()) return std::nullopt;
  return status->exit_code();
}

}  // namespace tula::service
