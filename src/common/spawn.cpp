// spawn(): fork and exec, and the PATH look-up it shares with find_program().
// The parent prepares everything (the argv and envp arrays, the candidate
// paths of the program, every descriptor); the child runs only the
// async-signal-safe calls of run_child() and allocates nothing.
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <system_error>
#include <tuple>
#include <vector>

#include "common/process.hpp"

extern char** environ;

namespace tula::common {
namespace {

// What a child that cannot become its program tells the parent, through a
// close-on-exec pipe that a successful exec closes unwritten. Smaller than
// PIPE_BUF, so it is written and read whole.
struct FailureRecord {
  int32_t step = 0;
  int32_t error = 0;
  int32_t cgroup = 0;  // JoinCgroup: which of the cgroups
};

// Everything the child touches between fork and exec.
struct Prepared {
  std::vector<std::string> args, env, programs;
  std::vector<char*> argv, envp;
  std::vector<const char*> program_paths;
  const char* cwd = nullptr;
  Fd stdin_fd, output_write, output_read, report_read, report_write;
  std::vector<Fd> cgroup_procs;  // each cgroup's cgroup.procs, open for writing
  Fd network_namespace;
  InheritedFd inherited;
  // The switches, signals and session the child takes, read in place (plain
  // reads of the caller's options, which outlive the fork).
  const SpawnOptions* options = nullptr;
  sigset_t mask{};
  pid_t parent = 0;
};

// The child's exit status when it cannot become its program, as a shell's:
// 127 for a program not found, else 126.
int start_exit_code(StartStep step, int error) { return step == StartStep::Execute && error == ENOENT ? 127 : 126; }

[[noreturn]] void fail(const std::string& what, int error = errno) {
  throw std::system_error(error, std::generic_category(), what);
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Our environment with `overrides` set on top; a name set twice keeps its last value.
std::vector<std::string> environment_with(const EnvironmentVariables& overrides) {
  auto overridden = [&](const std::string& entry) {
    const std::string name = entry.substr(0, entry.find('='));
    return std::any_of(overrides.begin(), overrides.end(), [&](const auto& o) { return o.first == name; });
  };
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (!overridden(*e)) env.emplace_back(*e);
  }
  for (auto o = overrides.begin(); o != overrides.end(); ++o) {
    const auto same_name = [&](const auto& later) { return later.first == o->first; };
    const bool set_again = std::any_of(o + 1, overrides.end(), same_name);
    if (!set_again) env.push_back(o->first + "=" + o->second);
  }
  return env;
}

// The value of `name` in an environment ("NAME=value" strings), or nullptr.
const char* value_in(const std::vector<std::string>& env, const std::string& name) {
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=') {
      return entry.c_str() + name.size() + 1;
    }
  }
  return nullptr;
}

// Where exec should look for `program`, in order: the directories of `path`
// (PATH's syntax, an empty entry the current directory) when it is searched
// there, else the program itself.
std::vector<std::string> candidates(const std::string& program, bool search, const char* path) {
  if (!search || program.find('/') != std::string::npos) return {program};
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::vector<std::string> out;
  for (size_t start = 0; start <= dirs.size();) {
    const size_t colon = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, colon - start);
    out.push_back((dir.empty() ? "." : dir) + "/" + program);
    start = colon + 1;
  }
  return out;
}

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

// `fd` moved to a number >= `lowest`, close-on-exec: the child's dup2()s onto
// 0, 1, 2 and the inherited fd's number then never land on a descriptor it
// still needs.
Fd above(Fd fd, int lowest) {
  if (!fd || fd.get() >= lowest) return fd;
  const int moved = ::fcntl(fd.get(), F_DUPFD_CLOEXEC, lowest);
  if (moved < 0) fail("cannot move a descriptor for a child process");
  return Fd(moved);
}

std::pair<Fd, Fd> make_pipe(int lowest) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) fail("cannot make a pipe for a child process");
  return {above(Fd(fds[0]), lowest), above(Fd(fds[1]), lowest)};
}

Fd open_fd(const std::string& path, int flags, const std::string& what, int lowest) {
  Fd fd(::open(path.c_str(), flags | O_CLOEXEC, 0644));
  if (!fd) fail("cannot open " + what + " " + path);
  return above(std::move(fd), lowest);
}

void validate(const std::vector<std::string>& argv, const SpawnOptions& o) {
  if (argv.empty() || argv.front().empty()) throw std::invalid_argument("spawn: no program to run");
  if (!o.output_file().empty() && o.output_pipe()) {
    throw std::invalid_argument("spawn: output goes to a file or to a pipe, not both");
  }
  const InheritedFd& in = o.inherit_fd();
  if (in.fd >= 0 && in.as < 3) throw std::invalid_argument("spawn: an inherited fd must become fd 3 or above");
  if (o.write_pid_to_inherited_fd() && in.fd < 0) {
    throw std::invalid_argument("spawn: the pid goes to the inherited fd, and there is none");
  }
}

void prepare_program(Prepared& p, const std::vector<std::string>& argv, const SpawnOptions& o) {
  p.args = argv;
  p.argv = pointers(p.args);
  p.env = environment_with(o.env());
  p.envp = pointers(p.env);
  const char* path = value_in(p.env, "PATH");
  p.programs = candidates(argv.front(), o.search_path(), path);
  for (const std::string& program : p.programs) p.program_paths.push_back(program.c_str());
  if (!o.cwd().empty()) p.cwd = o.cwd().c_str();
}

// Opened here, so that a cgroup or namespace that is not there is an
// exception naming it; the child only writes and calls setns.
void prepare_placement(Prepared& p, const SpawnOptions& o, int lowest) {
  for (const std::string& dir : o.cgroups()) {
    p.cgroup_procs.push_back(open_fd(dir + "/cgroup.procs", O_WRONLY, "the cgroup file", lowest));
  }
  if (!o.network_namespace().empty()) {
    p.network_namespace = open_fd(o.network_namespace(), O_RDONLY, "the network namespace", lowest);
  }
}

void prepare_fds(Prepared& p, const SpawnOptions& o) {
  const int lowest = std::max(3, o.inherit_fd().as + 1);
  if (o.stdin_from_null()) p.stdin_fd = open_fd("/dev/null", O_RDONLY, "the null device", lowest);
  if (!o.output_file().empty()) {
    p.output_write = open_fd(o.output_file(), O_WRONLY | O_CREAT | O_APPEND, "the log", lowest);
  } else if (o.output_pipe()) {
    std::tie(p.output_read, p.output_write) = make_pipe(lowest);
  }
  std::tie(p.report_read, p.report_write) = make_pipe(lowest);
  p.inherited = o.inherit_fd();
  prepare_placement(p, o, lowest);
}

void prepare_process(Prepared& p, const SpawnOptions& o) {
  p.options = &o;
  if (o.signal_mask()) {
    p.mask = *o.signal_mask();
  } else {
    sigemptyset(&p.mask);
  }
  p.parent = ::getpid();
}

// ---------------------------------------------------------------------------
// The child, from fork to exec: async-signal-safe calls only.

[[noreturn]] void report_and_exit(const Prepared& p, StartStep step, int error, int cgroup = 0) {
  const FailureRecord record{static_cast<int32_t>(step), error, cgroup};
  [[maybe_unused]] const ssize_t n = ::write(p.report_write.get(), &record, sizeof record);
  ::_exit(start_exit_code(step, error));
}

void set_disposition(int sig, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  ::sigaction(sig, &action, nullptr);
}

// A handler of ours must not run in the child before exec (it would act on
// the parent's state, through descriptors the child shares): every handled
// signal goes back to its default, before the mask lets any through.
void reset_dispositions(const Prepared& p) {
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction current {};
    if (::sigaction(sig, nullptr, &current) != 0) continue;
    if (current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN) set_disposition(sig, SIG_DFL);
  }
  for (const int sig : p.options->reset_signals()) set_disposition(sig, SIG_DFL);
  for (const int sig : p.options->ignore_signals()) set_disposition(sig, SIG_IGN);
}

void enter_group(const Prepared& p) {
  if (p.options->new_session()) {
    ::setsid();
  } else if (p.options->new_process_group()) {
    ::setpgid(0, 0);
  }
}

void tie_to_parent(const Prepared& p) {
  if (p.options->parent_death_signal() == 0) return;
  ::prctl(PR_SET_PDEATHSIG, p.options->parent_death_signal());
  // The parent may have died between fork and prctl: then no signal comes.
  if (::getppid() != p.parent) ::_exit(1);
}

// `fd` as number `target`, kept open across exec.
void place(int fd, int target) {
  if (fd == target) {
    ::fcntl(fd, F_SETFD, 0);  // dup2 onto itself would keep close-on-exec
  } else {
    ::dup2(fd, target);  // the copy is not close-on-exec
  }
}

void redirect(const Prepared& p) {
  if (p.inherited.fd >= 0) place(p.inherited.fd, p.inherited.as);
  if (p.stdin_fd) place(p.stdin_fd.get(), STDIN_FILENO);
  if (p.output_write) {
    place(p.output_write.get(), STDOUT_FILENO);
    place(p.output_write.get(), STDERR_FILENO);
  }
}

// Our pid and a newline into `line`, without allocating; the length.
size_t own_pid_line(char (&line)[16]) {
  char digits[16];
  int n = 0;
  for (pid_t pid = ::getpid(); pid > 0 && n < 15; pid /= 10) digits[n++] = static_cast<char>('0' + pid % 10);
  for (int i = 0; i < n; ++i) line[i] = digits[n - 1 - i];
  line[n] = '\n';
  return static_cast<size_t>(n) + 1;
}

// "1234\n" over the inherited file.
void write_own_pid(const Prepared& p) {
  if (!p.options->write_pid_to_inherited_fd()) return;
  char line[16];
  const size_t n = own_pid_line(line);
  const int fd = p.inherited.as;
  (void)!::ftruncate(fd, 0);
  (void)!::pwrite(fd, line, n, 0);
}

// Into the cgroups, then the namespace: what the program starts stays in both.
void enter_placement(const Prepared& p) {
  char line[16];
  const size_t n = own_pid_line(line);
  for (size_t i = 0; i < p.cgroup_procs.size(); ++i) {
    if (::write(p.cgroup_procs[i].get(), line, n) != static_cast<ssize_t>(n)) {
      report_and_exit(p, StartStep::JoinCgroup, errno, static_cast<int>(i));
    }
  }
  if (p.network_namespace && ::setns(p.network_namespace.get(), CLONE_NEWNET) != 0) {
    report_and_exit(p, StartStep::EnterNetworkNamespace, errno);
  }
}

// Closes every descriptor from 3 up but the inherited one and the report
// pipe (close-on-exec: exec closes it, or it carries the failure).
void close_other_fds(const Prepared& p) {
  if (!p.options->close_other_fds()) return;
  int keep[2] = {p.inherited.fd >= 0 ? p.inherited.as : p.report_write.get(), p.report_write.get()};
  if (keep[0] > keep[1]) std::swap(keep[0], keep[1]);
  unsigned first = 3;
  for (const int fd : keep) {
    if (static_cast<unsigned>(fd) > first) ::close_range(first, static_cast<unsigned>(fd) - 1, 0);
    first = std::max(first, static_cast<unsigned>(fd) + 1);
  }
  ::close_range(first, ~0U, 0);
}

// As execvp() does: on to the next candidate while the program is not
// there, and EACCES if any candidate was there but not executable.
int exec_program(const Prepared& p) {
  bool denied = false;
  int error = ENOENT;
  for (const char* program : p.program_paths) {
    ::execve(program, p.argv.data(), p.envp.data());
    error = errno;
    if (error == EACCES) {
      denied = true;
    } else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ENODEV && error != ETIMEDOUT) {
      return error;
    }
  }
  return denied ? EACCES : error;
}

[[noreturn]] void run_child(const Prepared& p) {
  reset_dispositions(p);
  enter_group(p);
  tie_to_parent(p);
  enter_placement(p);
  redirect(p);
  write_own_pid(p);
  close_other_fds(p);
  if (p.cwd != nullptr && ::chdir(p.cwd) != 0) report_and_exit(p, StartStep::EnterDirectory, errno);
  ::sigprocmask(SIG_SETMASK, &p.mask, nullptr);  // the child has one thread
  report_and_exit(p, StartStep::Execute, exec_program(p));
}

// ---------------------------------------------------------------------------
// The parent.

// Blocks until the child has executed its program (EOF) or reported why not.
std::optional<FailureRecord> read_failure(const Fd& report) {
  FailureRecord record;
  ssize_t n;
  do {
    n = ::read(report.get(), &record, sizeof record);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof record)) return record;
  return std::nullopt;
}

std::optional<StartFailure> failure_of(const Prepared& p, const SpawnOptions& o,
                                       const std::optional<FailureRecord>& record) {
  if (!record) return std::nullopt;
  const auto step = static_cast<StartStep>(record->step);
  switch (step) {
    case StartStep::EnterDirectory:
      return StartFailure{step, record->error, p.cwd};
    case StartStep::JoinCgroup:
      return StartFailure{step, record->error, o.cgroups().at(static_cast<size_t>(record->cgroup))};
    case StartStep::EnterNetworkNamespace:
      return StartFailure{step, record->error, o.network_namespace()};
    case StartStep::Execute:
      break;
  }
  return StartFailure{step, record->error, p.args.front()};
}

pid_t fork_child(const Prepared& p) {
  // Blocked across fork, so that no handler of ours runs in the child before
  // it has reset the dispositions.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t pid = ::fork();
  if (pid == 0) run_child(p);
  const int error = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (pid < 0) fail("cannot start " + p.args.front() + ": fork failed", error);
  return pid;
}

}  // namespace

std::string StartFailure::describe() const {
  const char* what = "cannot execute ";
  switch (step) {
    case StartStep::EnterDirectory:
      what = "cannot enter ";
      break;
    case StartStep::JoinCgroup:
      what = "cannot join the cgroup ";
      break;
    case StartStep::EnterNetworkNamespace:
      what = "cannot enter the network namespace ";
      break;
    case StartStep::Execute:
      break;
  }
  return what + path + ": " + std::generic_category().message(error);
}

std::string find_program(const std::string& program) {
  if (program.empty()) return "";
  for (const std::string& candidate : candidates(program, true, std::getenv("PATH"))) {
    if (executable_file(candidate)) return candidate;
  }
  return "";
}

int StartFailure::exit_code() const { return start_exit_code(step, error); }

Started spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  validate(argv, options);
  Prepared p;
  prepare_program(p, argv, options);
  prepare_fds(p, options);
  prepare_process(p, options);
  Started started;
  started.pid = fork_child(p);
  p.report_write.reset();
  started.failure = failure_of(p, options, read_failure(p.report_read));
  if (started.failure && !options.output_file().empty()) {
    // The child's log says why it never ran, where its own errors would be.
    const std::string line = started.failure->describe() + "\n";
    (void)!::write(p.output_write.get(), line.data(), line.size());
  }
  started.output = std::move(p.output_read);
  return started;
}

}  // namespace tula::common
