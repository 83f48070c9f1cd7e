#include "tune/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "tune/subprocess.hpp"

namespace tula::tune {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path,
                           const std::string& work_dir) {
  if (argv.empty()) throw std::invalid_argument("a child process needs a program");
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0) throw std::runtime_error("cannot open the log " + log_path + ": " + std::strerror(errno));
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(log);
    throw std::runtime_error("cannot start " + argv[0] + ": fork failed: " + std::strerror(errno));
  }
  if (pid_ == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(1);  // the parent died before prctl took effect
    // The runner ignores or handles some signals; the child starts clean.
    for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    if (!work_dir.empty() && ::chdir(work_dir.c_str()) != 0) {
      const std::string msg = "cannot enter " + work_dir + ": " + std::strerror(errno) + "\n";
      (void)!::write(STDERR_FILENO, msg.data(), msg.size());
      ::_exit(126);
    }
    ::execv(cargv[0], cargv.data());
    const std::string msg = "cannot execute " + args[0] + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, msg.data(), msg.size());
    ::_exit(127);
  }
  ::close(log);
}

ChildProcess::~ChildProcess() {
  if (status_ || pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

std::optional<int> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  if (status_) return status_;
  // Polling, not a blocking wait: the runner reads the child's metrics between polls.
  const auto status = wait_for_child(pid_, timeout, std::chrono::milliseconds(50));
  if (status) status_ = *status == kNotWaitable ? 1 : exit_code_of(*status);  // reaped elsewhere: a failure as far as we know
  return status_;
}

void ChildProcess::signal(int sig) {
  if (!status_ && pid_ > 0) ::kill(pid_, sig);
}

std::string last_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (!line.empty()) last = line;
  }
  return last;
}

}  // namespace tula::tune
