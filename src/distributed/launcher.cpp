#include "distributed/launcher.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bitset>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "common/cores.hpp"
#include "common/process.hpp"

namespace tula::distributed {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Signals the launcher passes on to its workers. The workers run in their own
// sessions (so a terminal's Ctrl-C reaches only the launcher, and each signal
// arrives exactly once, through us).
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// After SIGKILL a process normally vanishes at once; one stuck in the kernel
// (a dead NFS mount) may not, and the launcher must still return.
constexpr milliseconds kReapBound{std::chrono::seconds(10)};

// A safety net in case a SIGCHLD never reaches our handler (for instance when
// every thread of the process blocks it).
constexpr milliseconds kPollInterval{500};

// How long after a worker's failing exit status the death of another by a
// signal may still prove to be the cause. A process dies in steps: its
// sockets close (its peers see the connection drop, fail and exit) before
// its parent is told, and for a large multi-threaded process (tearing down
// its memory) the peer can finish first. So when a worker exits non-zero
// and, within this window, another turns out killed by a signal that the
// launcher did not send (SIGKILL from the OOM killer or a user, SIGSEGV),
// the killed one is the cause. SIGPIPE is a consequence, never a cause.
constexpr milliseconds kBlameWindow{std::chrono::seconds(1)};

using common::signal_name;

// "signal 9 (SIGKILL)": the launcher names a signal by its constant.
std::string describe_signal(int sig) {
  return fmt::format("signal {} ({})", sig, signal_name(sig));
}

void say(const LaunchOptions& options, const std::string& line) {
  if (options.quiet) return;
  // One write per line so lines from concurrent writers do not interleave.
  const std::string text = "tula launch: " + line + "\n";
  std::fwrite(text.data(), 1, text.size(), stderr);
  std::fflush(stderr);
}

void validate(const LaunchOptions& o) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("invalid launch options: " + what); };
  if (o.nproc_per_node < 1) bad(fmt::format("nproc must be >= 1, got {}", o.nproc_per_node));
  if (o.nnodes < 1) bad(fmt::format("nnodes must be >= 1, got {}", o.nnodes));
  if (o.node_rank < 0 || o.node_rank >= o.nnodes) {
    bad(fmt::format("node rank must be in [0, {}), got {}", o.nnodes, o.node_rank));
  }
  if (static_cast<long long>(o.nnodes) * o.nproc_per_node > INT_MAX) {
    bad("nnodes * nproc is too large");
  }
  if (o.command.empty() || o.command.front().empty()) bad("no command to run");
  if (o.master_addr.empty()) bad("master address is empty");
  if (o.master_port < 1 || o.master_port > 65535) {
    bad(fmt::format("master port must be in [1, 65535], got {}", o.master_port));
  }
  if (o.kill_grace.count() < 0) bad("kill grace must not be negative");
}

// ---------------------------------------------------------------------------
// Signals. The handlers only write what arrived into a pipe; the loop in
// Supervisor does the work outside signal context.

std::atomic<bool> g_launch_active{false};
volatile sig_atomic_t g_wake_fd = -1;

// One signal as the handler saw it. For SIGCHLD, the child it is about: the
// kernel keeps one pending SIGCHLD with the siginfo of the child that caused
// it, so the records name the workers in the order they died (one that died
// while a SIGCHLD was still pending has no record of its own, and is after).
struct SignalRecord {
  int32_t sig = 0;
  int32_t pid = 0;  // SIGCHLD: the child; else 0
};
static_assert(sizeof(SignalRecord) <= PIPE_BUF, "records must be written atomically");

extern "C" void tula_launch_on_signal(int sig, siginfo_t* info, void*) {
  const int saved_errno = errno;
  SignalRecord record;
  record.sig = sig;
  if (sig == SIGCHLD && info != nullptr) record.pid = info->si_pid;
  if (g_wake_fd >= 0) {
    // Non-blocking, and atomic (all of a record or none): a full pipe already
    // wakes the loop, so a lost SIGCHLD record is harmless (the loop rescans
    // every worker on every wake-up; only the order of deaths is lost).
    [[maybe_unused]] ssize_t n = write(g_wake_fd, &record, sizeof record);
  }
  errno = saved_errno;
}

// Installs the handlers for the duration of one launch and restores the
// process's previous dispositions and mask afterwards, since the launcher may
// run inside a larger program (or a test binary).
class SignalScope {
 public:
  SignalScope() {
    if (g_launch_active.exchange(true)) {
      throw std::logic_error("launch_workers: already running in this process");
    }
    if (pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0) {
      const int err = errno;
      g_launch_active = false;
      throw std::system_error(err, std::generic_category(), "launch_workers: pipe");
    }
    g_wake_fd = fds_[1];

    struct sigaction action {};
    action.sa_sigaction = tula_launch_on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART | SA_SIGINFO;
    for (int sig : kForwarded) {
      sigaction(sig, nullptr, &saved_[sig]);
      // As shells do: a signal ignored when we started (nohup, `cmd &` in a
      // script) stays ignored, for us and for the workers.
      if (saved_[sig].sa_handler != SIG_IGN) sigaction(sig, &action, nullptr);
    }
    // Always ours, even if SIGCHLD was ignored: with SIG_IGN the kernel reaps
    // children itself and we could never learn how a worker died.
    action.sa_flags = SA_RESTART | SA_SIGINFO | SA_NOCLDSTOP;
    sigaction(SIGCHLD, &action, &saved_[SIGCHLD]);

    sigset_t ours;
    sigemptyset(&ours);
    sigaddset(&ours, SIGCHLD);
    for (int sig : kForwarded) sigaddset(&ours, sig);
    pthread_sigmask(SIG_UNBLOCK, &ours, &saved_mask_);
  }

  ~SignalScope() {
    pthread_sigmask(SIG_SETMASK, &saved_mask_, nullptr);
    sigaction(SIGCHLD, &saved_[SIGCHLD], nullptr);
    for (int sig : kForwarded) sigaction(sig, &saved_[sig], nullptr);
    g_wake_fd = -1;
    close(fds_[0]);
    close(fds_[1]);
    g_launch_active = false;
  }

  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  int wake_fd() const { return fds_[0]; }

  // The disposition a worker should start with: what the launcher inherited,
  // except that our own handlers become the default.
  bool inherited_ignore(int sig) const { return saved_[sig].sa_handler == SIG_IGN; }
  const sigset_t& inherited_mask() const { return saved_mask_; }

  // The signals received since the last call, SIGCHLD included, in order.
  // Every write is one whole record, so every read returns whole records.
  std::vector<SignalRecord> drain() const {
    std::vector<SignalRecord> signals;
    SignalRecord buffer[32];
    ssize_t n;
    while ((n = read(fds_[0], buffer, sizeof(buffer))) > 0) {
      signals.insert(signals.end(), buffer, buffer + n / static_cast<ssize_t>(sizeof(SignalRecord)));
    }
    return signals;
  }

 private:
  int fds_[2] = {-1, -1};
  struct sigaction saved_[NSIG] {};
  sigset_t saved_mask_{};
};

// The environment torchrun gives its workers, set on top of ours.
common::EnvironmentVariables worker_environment(const LaunchOptions& o, int local_rank) {
  const int world_size = o.nnodes * o.nproc_per_node;
  common::EnvironmentVariables set = {
      {"RANK", std::to_string(o.node_rank * o.nproc_per_node + local_rank)},
      {"WORLD_SIZE", std::to_string(world_size)},
      {"LOCAL_RANK", std::to_string(local_rank)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
      {"GROUP_RANK", std::to_string(o.node_rank)},
      {"GROUP_WORLD_SIZE", std::to_string(o.nnodes)},
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(o.master_port)},
  };
  // Without this every worker's OpenMP pool claims every core and they
  // oversubscribe the node; an explicit setting is the user's to keep.
  if (std::getenv("OMP_NUM_THREADS") == nullptr) {
    set.emplace_back("OMP_NUM_THREADS",
                     std::to_string(std::max(1, common::usable_cores() / o.nproc_per_node)));
  }
  return set;
}

// ---------------------------------------------------------------------------
// Starting one worker.

common::SpawnOptions worker_spawn_options(const LaunchOptions& o, int local_rank, const SignalScope& signals) {
  common::SpawnOptions options;
  options.search_path(true)
      .env(worker_environment(o, local_rank))
      // Its own session: the worker and whatever it starts form one process
      // group we can signal as a whole, and the terminal's Ctrl-C goes to the
      // launcher only.
      .new_session(true)
      // If the launcher dies without cleaning up (SIGKILL, OOM killer), take
      // the worker down too instead of leaving it to hold the GPU and the port.
      .parent_death_signal(SIGKILL)
      // What the launcher inherited: our handlers become the defaults, and a
      // signal ignored when we started stays ignored (SIGCHLD included, which
      // we always handle).
      .signal_mask(signals.inherited_mask());
  if (signals.inherited_ignore(SIGCHLD)) options.ignore_signals({SIGCHLD});
  return options;
}

// ---------------------------------------------------------------------------
// Watching the workers.

class Supervisor {
 public:
  Supervisor(const LaunchOptions& options, const SignalScope& signals)
      : o_(options), signals_(signals) {}

  // Only does something if run() was left by an exception: even then no
  // worker may outlive the launcher.
  ~Supervisor() {
    if (finished_) return;
    for (const Worker& w : workers_) {
      if (w.reaped) continue;
      common::signal_group(w.pid, SIGKILL);
      common::signal_process(w.pid, SIGKILL);
    }
    const auto until = Clock::now() + kReapBound;
    for (const Worker& w : workers_) {
      if (w.reaped) continue;
      common::wait_for(w.pid, std::max(milliseconds(0), std::chrono::ceil<milliseconds>(until - Clock::now())));
    }
  }

  Supervisor(const Supervisor&) = delete;
  Supervisor& operator=(const Supervisor&) = delete;

  LaunchResult run() {
    start_workers();
    while (true) {
      observe();
      if (blame_line_ && (running() == 0 || Clock::now() >= blame_until_)) report_blame();
      if (running() == 0) break;
      const auto now = Clock::now();
      if (stopping_ && now >= deadline_) {
        report_blame();
        if (!killed_) {
          say(o_, fmt::format("{} worker(s) still running {} ms after {}; sending SIGKILL", running(),
                              o_.kill_grace.count(), signal_name(stop_signal_)));
          kill_all();
          continue;
        }
        for (const Worker& w : workers_) {
          if (!w.exited) {
            say(o_, fmt::format("worker rank {} (pid {}) did not exit after SIGKILL; giving up on it", w.rank,
                                w.pid));
          }
        }
        break;
      }
      milliseconds timeout = kPollInterval;
      if (stopping_) {
        timeout = std::min(timeout, std::chrono::ceil<milliseconds>(deadline_ - now));
      }
      if (blame_line_) {
        timeout = std::min(timeout, std::max(milliseconds(0), std::chrono::ceil<milliseconds>(blame_until_ - now)));
      }
      pollfd wake{signals_.wake_fd(), POLLIN, 0};
      poll(&wake, 1, static_cast<int>(timeout.count()));
    }
    finish();
    return result_;
  }

 private:
  struct Worker {
    int rank;
    pid_t pid;
    bool exited = false;   // observed, but left a zombie until finish()
    bool reaped = false;
  };

  int running() const {
    return static_cast<int>(std::count_if(workers_.begin(), workers_.end(),
                                          [](const Worker& w) { return !w.exited; }));
  }

  int global_rank(int local_rank) const { return o_.node_rank * o_.nproc_per_node + local_rank; }

  void start_workers() {
    for (int local = 0; local < o_.nproc_per_node && !stopping_; ++local) {
      if (!start_worker(local)) break;
      observe(/*exits=*/false);
    }
  }

  // Starts one worker; false, with the failure recorded, when it could not
  // start. A worker whose program could not be executed has exited already
  // (127 or 126, as a shell's) and is kept, to be reaped with the others.
  bool start_worker(int local) {
    const int rank = global_rank(local);
    common::Started started;
    try {
      started = common::spawn(o_.command, worker_spawn_options(o_, local, signals_));
    } catch (const std::system_error& e) {
      const std::string failure = "could not start: " + e.code().message();
      fail(rank, -1, failure, failure, 1, /*exit_status=*/false);
      return false;
    }
    workers_.push_back({rank, started.pid});
    if (!started.failure) return true;
    const common::StartFailure& failed = *started.failure;
    const std::string what =
        failed.error == ENOENT ? "command not found: " + o_.command.front() : failed.describe();
    const int code = failed.exit_code();
    const std::string failure = fmt::format("exit status {} ({})", code, what);
    fail(rank, started.pid, failure, "could not start: " + what, code, /*exit_status=*/false);
    return false;
  }

  // Records the first failure and stops everyone else. `how` completes the
  // sentence "worker rank 1 (pid 1234) ..." on stderr. The first failure is
  // the one to blame: the workers that die after it die of it (a peer's
  // closed connection) or of the SIGTERM sent here, and so do those that die
  // after the launcher itself was told to stop. One exception: a failing
  // exit status is blamed only provisionally (kBlameWindow), and its line
  // waits until that is settled.
  void fail(int rank, pid_t pid, const std::string& failure, const std::string& how,
            int exit_code, bool exit_status) {
    if (result_.failed_rank >= 0 || stopping_) return;
    result_.failed_rank = rank;
    result_.failure = failure;
    result_.exit_code = exit_code;
    const int others = static_cast<int>(std::count_if(
        workers_.begin(), workers_.end(), [&](const Worker& w) { return !w.exited && w.pid != pid; }));
    std::string line = fmt::format("worker rank {}", rank);
    if (pid > 0) line += fmt::format(" (pid {})", pid);
    line += " " + how;
    if (others > 0) line += fmt::format("; stopping {} other worker(s)", others);
    if (exit_status) {
      blame_line_ = line;
      blame_until_ = Clock::now() + kBlameWindow;
    } else {
      say(o_, line);
    }
    begin_stop(SIGTERM);
  }

  // Whether a worker just seen killed by `sig` is the cause of the
  // provisionally blamed exit status (see kBlameWindow).
  bool takes_the_blame(int sig) const {
    return blame_line_ && Clock::now() < blame_until_ && !sent_.test(static_cast<size_t>(sig)) &&
           sig != SIGPIPE;
  }

  void blame_instead(const Worker& w, const std::string& failure, int sig) {
    const std::string before =
        fmt::format("; rank {}'s {}, seen first, came of it", result_.failed_rank, result_.failure);
    result_.failed_rank = w.rank;
    result_.failure = failure;
    result_.exit_code = 128 + sig;
    blame_line_.reset();
    say(o_, fmt::format("worker rank {} (pid {}) {}{}", w.rank, w.pid, failure, before));
  }

  // The provisional blame is final: say it.
  void report_blame() {
    if (!blame_line_) return;
    say(o_, *blame_line_);
    blame_line_.reset();
  }

  // Takes in what happened since the last look, in the order it happened:
  // the signals the launcher got and the exits SIGCHLD reported, one by one,
  // so that when several workers die together the first to die is the one
  // blamed, not the lowest rank; then every other exit (a SIGCHLD merged
  // into a pending one, or none delivered at all), in rank order. With
  // exits = false (while starting the workers) only signals are acted on,
  // and the SIGCHLDs wait, in order, for the first look at the exits.
  void observe(bool exits = true) {
    for (const SignalRecord& record : signals_.drain()) {
      if (record.sig == SIGCHLD) {
        exited_pids_.push_back(record.pid);
        continue;
      }
      if (exits) take_reported_exits();  // a worker that died before the signal came may be blamed
      on_signal(record.sig);
    }
    if (!exits) return;
    take_reported_exits();
    for (Worker& w : workers_) check_exit(w);
  }

  // The exits SIGCHLD reported so far, in the order reported.
  void take_reported_exits() {
    for (const pid_t pid : exited_pids_) {
      for (Worker& w : workers_) {
        if (w.pid == pid) check_exit(w);
      }
    }
    exited_pids_.clear();
  }

  void on_signal(int sig) {
    report_blame();
    if (!stopping_) {
      interrupted_by_ = sig;
      say(o_, fmt::format("received {}; forwarding it to {} worker(s)", signal_name(sig), running()));
      begin_stop(sig);
    } else if (!killed_) {
      // Already stopping: a second Ctrl-C means "now".
      say(o_, fmt::format("received {} while stopping; killing {} worker(s)", signal_name(sig), running()));
      kill_all();
    }
  }

  void begin_stop(int sig) {
    stopping_ = true;
    stop_signal_ = sig;
    deadline_ = Clock::now() + o_.kill_grace;
    signal_all(sig);
  }

  void kill_all() {
    stopping_ = true;
    killed_ = true;
    deadline_ = Clock::now() + kReapBound;
    signal_all(SIGKILL);
  }

  // To each worker's process group, so that what the worker started goes
  // too. The group of a worker that already exited is still safe to signal:
  // its zombie keeps the id from being reused until finish().
  void signal_all(int sig) {
    sent_.set(static_cast<size_t>(sig));
    for (const Worker& w : workers_) {
      if (!common::signal_group(w.pid, sig) && !w.exited) common::signal_process(w.pid, sig);
      // A stopped process would sit on SIGTERM until continued.
      if (sig != SIGKILL && sig != SIGCONT) common::signal_group(w.pid, SIGCONT);
    }
  }

  // Notes whether worker `w` has exited, and if it failed, blames it (when
  // it is the first failure).
  void check_exit(Worker& w) {
    if (w.exited) return;
    // Peeking: note the exit but keep the zombie, so the pid (and its
    // process group id) cannot be reused while we may still signal it.
    const std::optional<common::ExitStatus> status = common::peek_exit(w.pid);
    if (!status) return;  // still running
    w.exited = true;
    if (!status->is_known()) {
      w.reaped = true;  // someone else reaped it
    } else if (status->is_exited()) {
      if (!status->success()) {
        const std::string failure = status->describe();
        fail(w.rank, w.pid, failure, "failed with " + failure, status->exit_code(), /*exit_status=*/true);
      }
    } else {
      const int sig = status->signal();
      const std::string failure = "killed by " + describe_signal(sig);
      if (takes_the_blame(sig)) {
        blame_instead(w, failure, sig);
      } else {
        fail(w.rank, w.pid, failure, failure, 128 + sig, /*exit_status=*/false);
      }
    }
  }

  void finish() {
    report_blame();
    if (stopping_) {
      // Whatever the workers left behind in their groups goes too.
      for (const Worker& w : workers_) common::signal_group(w.pid, SIGKILL);
    }
    for (Worker& w : workers_) {
      if (w.reaped) continue;
      // An exited worker is a zombie and goes at once. A worker we gave up on
      // stays unreaped: its pid is no longer ours to signal once we return,
      // so it is abandoned either way.
      if (w.exited) {
        common::wait_for(w.pid, kReapBound);
      } else {
        common::try_reap(w.pid);
      }
      w.reaped = true;
    }
    finished_ = true;
    if (interrupted_by_ != 0 && result_.failed_rank < 0) {
      result_.exit_code = 128 + interrupted_by_;
      result_.failure = "interrupted by " + describe_signal(interrupted_by_);
    }
  }

  const LaunchOptions& o_;
  const SignalScope& signals_;
  std::vector<Worker> workers_;
  std::vector<pid_t> exited_pids_;  // from SIGCHLD records not yet looked at, in order
  std::bitset<NSIG> sent_;           // the signals the launcher sent its workers
  LaunchResult result_;
  std::optional<std::string> blame_line_;  // a provisional blame, not yet said
  Clock::time_point blame_until_{};
  bool stopping_ = false;
  bool killed_ = false;
  bool finished_ = false;
  int stop_signal_ = SIGTERM;
  int interrupted_by_ = 0;
  Clock::time_point deadline_{};
};

}  // namespace

LaunchResult launch_workers(const LaunchOptions& options) {
  validate(options);
  SignalScope signals;
  Supervisor supervisor(options, signals);
  return supervisor.run();
}

}  // namespace tula::distributed
