#include "service/tune_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tula::service {
namespace {

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// The session id of a process, from /proc/PID/stat (field 6, after the
// command name in parentheses, which may itself hold spaces and parentheses).
std::optional<pid_t> session_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return std::nullopt;
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  std::string state;
  long ppid = 0, pgrp = 0, session = 0;
  if (!(rest >> state >> ppid >> pgrp >> session)) return std::nullopt;
  if (state == "Z") return std::nullopt;  // ended, awaiting its parent
  return static_cast<pid_t>(session);
}

}  // namespace

pid_t start_tune_process(const std::vector<std::string>& argv, const std::string& lock_path,
                         const std::string& log_path, const std::string& work_dir) {
  if (argv.empty()) throw std::invalid_argument("a tune process needs a program");
  Fd lock(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
  if (lock.get() < 0) throw std::runtime_error("cannot open the job lock " + lock_path + ": " + std::strerror(errno));
  // Taken here, before fork, so there is no moment at which the job runs
  // without its lock held.
  if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) throw JobBusy("the job's lock " + lock_path + " is held: its tune process runs already");
    throw std::runtime_error("cannot lock " + lock_path + ": " + std::strerror(errno));
  }
  Fd log(::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log.get() < 0) throw std::runtime_error("cannot open the job log " + log_path + ": " + std::strerror(errno));
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (auto& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("cannot start the tune process: fork failed: " + std::string(std::strerror(errno)));
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec: the server has threads.
    ::setsid();
    for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGHUP, SIGCHLD}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::dup2(log.get(), STDOUT_FILENO);
    ::dup2(log.get(), STDERR_FILENO);
    ::dup2(lock.get(), 3);  // inherited across exec by the tune process and everything it starts
    ::fcntl(3, F_SETFD, 0);  // dup2 onto itself (the lock was fd 3 already) keeps close-on-exec: clear it
    ::close_range(4, ~0U, 0);  // no listening socket or database handle of the server's
    char text[32];
    int n = 0;
    for (pid_t p = ::getpid(); p > 0; p /= 10) text[n++] = static_cast<char>('0' + p % 10);
    char line[34];
    for (int i = 0; i < n; ++i) line[i] = text[n - 1 - i];
    line[n] = '\n';
    (void)!::ftruncate(3, 0);
    (void)!::pwrite(3, line, n + 1, 0);
    if (!work_dir.empty() && ::chdir(work_dir.c_str()) != 0) ::_exit(126);
    ::execv(cargv[0], cargv.data());
    static const char msg[] = "cannot execute the tula binary\n";
    (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  return pid;  // our copy of the lock closes here; the child's keeps it held
}

std::optional<pid_t> lock_holder(const std::string& lock_path) {
  Fd lock(::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (lock.get() < 0) return std::nullopt;  // never started
  if (::flock(lock.get(), LOCK_SH | LOCK_NB) == 0) return std::nullopt;  // nobody holds it
  char text[32] = {};
  const ssize_t n = ::pread(lock.get(), text, sizeof text - 1, 0);
  // Held, but the child may not have written its pid yet: 0 then.
  return n > 0 ? static_cast<pid_t>(std::atol(text)) : 0;
}

int signal_session(pid_t session, int sig) {
  if (session <= 1) return 0;
  int reached = 0;
  DIR* proc = ::opendir("/proc");
  if (!proc) return 0;
  while (const dirent* e = ::readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atol(e->d_name));
    if (pid <= 0) continue;
    if (session_of(pid) == session && ::kill(pid, sig) == 0) ++reached;
  }
  ::closedir(proc);
  return reached;
}

std::optional<int> reap_child(pid_t pid) {
  int status = 0;
  const pid_t r = ::waitpid(pid, &status, WNOHANG);
  if (r != pid) return std::nullopt;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return std::nullopt;
}

}  // namespace tula::service
