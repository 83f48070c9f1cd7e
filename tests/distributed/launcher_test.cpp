#include "distributed/launcher.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "helpers/child_process.hpp"
#include "helpers/free_port.hpp"
#include "helpers/proc_state.hpp"
#include "helpers/run_command.hpp"
#include "helpers/shell_wait.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"

namespace tula::distributed {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using tula::testing::eventually;
using tula::testing::read_text;
using tula::testing::TempDir;

// What a worker runs to outlive any bound below: a launcher that returns
// before it ends has stopped the worker instead of waiting for it.
const std::string kOutlivesTheTest = "sleep 120";
// The launcher stops workers in milliseconds; a minute means it waited.
constexpr auto kNoHang = tula::testing::kPatience;

// Workers as `sh -c SCRIPT sh DIR`: the script sees the temp dir as $1.
LaunchOptions shell_workers(int nproc, const std::string& script, const fs::path& dir = "/") {
  LaunchOptions options;
  options.nproc_per_node = nproc;
  options.command = {"sh", "-c", script, "sh", dir.string()};
  options.kill_grace = 2s;
  options.quiet = true;
  return options;
}

// Shell code for a worker that waits until the other workers named have
// written their pid files into $1.
std::string wait_for_pid_files(const std::vector<int>& ranks) {
  std::string all_written = "true";
  std::string names;
  for (const int rank : ranks) {
    all_written += " && [ -s \"$1/pid." + std::to_string(rank) + "\" ]";
    names += " pid." + std::to_string(rank);
  }
  return tula::testing::shell_wait_until(all_written, "the pid files" + names);
}

::testing::AssertionResult eventually_gone(pid_t pid, const std::string& who) {
  return eventually([&] { return tula::testing::process_gone(pid); }, who + " (pid " + std::to_string(pid) + ") to exit");
}

// The pid a worker wrote into `file`, once the line is complete.
pid_t read_pid(const fs::path& file) {
  const auto written = eventually([&] {
    const std::string text = read_text(file);
    return !text.empty() && text.back() == '\n';
  }, "a pid in " + file.string());
  if (!written) {
    ADD_FAILURE() << written.message();
    return -1;
  }
  return static_cast<pid_t>(std::stol(read_text(file)));
}

TEST(Launcher, AllWorkersSucceed) {
  const LaunchResult result = launch_workers(shell_workers(3, "exit 0"));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.failed_rank, -1);
  EXPECT_EQ(result.failure, "");
}

TEST(Launcher, WorkersGetTheTorchrunEnvironment) {
  TempDir dir("tula-launch");
  LaunchOptions options = shell_workers(
      3,
      "echo \"$RANK $WORLD_SIZE $LOCAL_RANK $MASTER_PORT\" > \"$1/$LOCAL_RANK\"; "
      "echo \"$LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR $OMP_NUM_THREADS\" > \"$1/more.$LOCAL_RANK\"",
      dir.path());
  options.nnodes = 2;
  options.node_rank = 1;
  options.master_addr = "10.0.0.7";
  options.master_port = 23456;
  ASSERT_EQ(launch_workers(options).exit_code, 0);
  for (int local = 0; local < 3; ++local) {
    EXPECT_EQ(read_text(dir.path() / std::to_string(local)),
              std::to_string(3 + local) + " 6 " + std::to_string(local) + " 23456\n");
    std::istringstream more(read_text(dir.path() / ("more." + std::to_string(local))));
    std::string local_world, group_rank, addr;
    int omp_threads = 0;
    more >> local_world >> group_rank >> addr >> omp_threads;
    EXPECT_EQ(local_world, "3");
    EXPECT_EQ(group_rank, "1");
    EXPECT_EQ(addr, "10.0.0.7");
    EXPECT_GE(omp_threads, 1);
  }
}

TEST(Launcher, ExplicitOmpNumThreadsIsKept) {
  TempDir dir("tula-launch");
  const char* saved = std::getenv("OMP_NUM_THREADS");
  const std::string saved_value = saved ? saved : "";
  ::setenv("OMP_NUM_THREADS", "7", 1);
  const LaunchResult result =
      launch_workers(shell_workers(2, "echo \"$OMP_NUM_THREADS\" > \"$1/$RANK\"", dir.path()));
  if (saved) {
    ::setenv("OMP_NUM_THREADS", saved_value.c_str(), 1);
  } else {
    ::unsetenv("OMP_NUM_THREADS");
  }
  ASSERT_EQ(result.exit_code, 0);
  EXPECT_EQ(read_text(dir.path() / "0"), "7\n");
  EXPECT_EQ(read_text(dir.path() / "1"), "7\n");
}

TEST(Launcher, FailedWorkerStopsTheOthers) {
  TempDir dir("tula-launch");
  // Each worker records its own pid and that of a child it starts, so we can
  // check that nothing survives: neither the workers nor what they started.
  // Rank 1 fails only once the others have recorded theirs.
  const LaunchOptions options = shell_workers(
      3,
      kOutlivesTheTest + " & echo $! > \"$1/child.$RANK\"; echo $$ > \"$1/pid.$RANK\"; " +
          "if [ \"$RANK\" = 1 ]; then " + wait_for_pid_files({0, 2}) + "exit 3; fi; wait",
      dir.path());
  const auto start = Clock::now();
  const LaunchResult result = launch_workers(options);
  EXPECT_LT(Clock::now() - start, kNoHang) << "launch_workers waited for the workers' " << kOutlivesTheTest;
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.failed_rank, 1);
  EXPECT_EQ(result.failure, "exit status 3");
  for (int rank = 0; rank < 3; ++rank) {
    const pid_t worker = read_pid(dir.path() / ("pid." + std::to_string(rank)));
    const pid_t child = read_pid(dir.path() / ("child." + std::to_string(rank)));
    // The launcher reaped its workers: not even a zombie is left.
    EXPECT_FALSE(fs::exists("/proc/" + std::to_string(worker))) << "worker rank " << rank;
    EXPECT_TRUE(eventually_gone(child, "the child of worker rank " + std::to_string(rank)));
  }
}

TEST(Launcher, TheBriefsFailureScenarioReturnsPromptly) {
  const auto start = Clock::now();
  const LaunchResult result =
      launch_workers(shell_workers(3, "if [ $RANK = 1 ]; then exit 3; fi; " + kOutlivesTheTest));
  EXPECT_LT(Clock::now() - start, kNoHang) << "launch_workers waited for the workers' " << kOutlivesTheTest;
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.failed_rank, 1);
}

TEST(Launcher, WorkerKilledBySignal) {
  LaunchOptions options =
      shell_workers(2, "if [ \"$RANK\" = 0 ]; then kill -KILL $$; fi; " + kOutlivesTheTest);
  options.quiet = false;
  ::testing::internal::CaptureStderr();
  const auto start = Clock::now();
  const LaunchResult result = launch_workers(options);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  EXPECT_LT(Clock::now() - start, kNoHang) << "launch_workers waited for the workers' " << kOutlivesTheTest;
  EXPECT_EQ(result.exit_code, 128 + 9);
  EXPECT_EQ(result.failed_rank, 0);
  EXPECT_EQ(result.failure, "killed by signal 9 (SIGKILL)");
  EXPECT_NE(stderr_text.find("tula launch: worker rank 0 (pid "), std::string::npos)
      << stderr_text;
  EXPECT_NE(stderr_text.find("killed by signal 9 (SIGKILL); stopping 1 other worker(s)"),
            std::string::npos)
      << stderr_text;
}

// Two workers: rank 1 sets `rank1_trap`, records its pid and runs on; rank 0
// fails once that pid is there, so the launcher stops rank 1 with SIGTERM.
LaunchOptions failure_beside_a_worker_that_traps_sigterm(const std::string& rank1_trap, const fs::path& dir) {
  return shell_workers(
      2,
      "if [ \"$RANK\" = 0 ]; then " + wait_for_pid_files({1}) + "exit 5; fi; " + rank1_trap +
          "; echo $$ > \"$1/pid.$RANK\"; " + kOutlivesTheTest + " & wait",
      dir);
}

TEST(Launcher, WorkerIgnoringSigtermIsKilledAfterTheGrace) {
  TempDir dir("tula-launch");
  // The background sleep inherits the ignored SIGTERM, so only SIGKILL ends
  // either process.
  LaunchOptions options = failure_beside_a_worker_that_traps_sigterm("trap '' TERM", dir.path());
  options.kill_grace = 500ms;
  options.quiet = false;
  ::testing::internal::CaptureStderr();
  const auto start = Clock::now();
  const LaunchResult result = launch_workers(options);
  const auto elapsed = Clock::now() - start;
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  EXPECT_LT(elapsed, kNoHang) << "launch_workers waited for a worker that ignores SIGTERM";
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_EQ(result.failed_rank, 0);
  EXPECT_EQ(result.failure, "exit status 5");
  EXPECT_NE(stderr_text.find("failed with exit status 5; stopping 1 other worker(s)"),
            std::string::npos)
      << stderr_text;
  EXPECT_NE(stderr_text.find("sending SIGKILL"), std::string::npos) << stderr_text;
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(read_pid(dir.path() / "pid.1"))));
}

// Rank 1 answers SIGTERM with a cleanup that takes a moment; within the
// grace it finishes, and no SIGKILL cuts it short.
TEST(Launcher, WorkerCleaningUpAfterSigtermGetsTheGrace) {
  TempDir dir("tula-launch");
  LaunchOptions options = failure_beside_a_worker_that_traps_sigterm(
      "trap 'sleep 0.5; echo done > \"$1/cleaned.$RANK\"; exit 0' TERM", dir.path());
  options.kill_grace = kNoHang;
  options.quiet = false;
  ::testing::internal::CaptureStderr();
  const LaunchResult result = launch_workers(options);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_EQ(result.failed_rank, 0);
  EXPECT_EQ(read_text(dir.path() / "cleaned.1"), "done\n") << stderr_text;
  EXPECT_EQ(stderr_text.find("SIGKILL"), std::string::npos) << stderr_text;
}

TEST(Launcher, CommandNotFound) {
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.command = {"tula-no-such-command-for-tests", "--flag"};
  options.kill_grace = 1s;
  ::testing::internal::CaptureStderr();
  const LaunchResult result = launch_workers(options);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_EQ(result.failed_rank, 0);
  EXPECT_NE(result.failure.find("command not found: tula-no-such-command-for-tests"),
            std::string::npos)
      << result.failure;
  EXPECT_NE(stderr_text.find("command not found"), std::string::npos) << stderr_text;
}

TEST(Launcher, CommandNotExecutable) {
  TempDir dir("tula-launch");
  const fs::path script = dir.path() / "not-executable";
  std::ofstream(script) << "#!/bin/sh\nexit 0\n";
  fs::permissions(script, fs::perms::owner_read | fs::perms::owner_write);
  LaunchOptions options;
  options.command = {script.string()};
  options.quiet = true;
  const LaunchResult result = launch_workers(options);
  EXPECT_EQ(result.exit_code, 126);
  EXPECT_NE(result.failure.find("cannot execute"), std::string::npos) << result.failure;
}

TEST(Launcher, RejectsBadOptions) {
  LaunchOptions options = shell_workers(1, "exit 0");
  options.nproc_per_node = 0;
  EXPECT_THROW(launch_workers(options), std::invalid_argument);
  options = shell_workers(1, "exit 0");
  options.nnodes = 2;
  options.node_rank = 2;
  EXPECT_THROW(launch_workers(options), std::invalid_argument);
  options.node_rank = -1;
  EXPECT_THROW(launch_workers(options), std::invalid_argument);
  options = shell_workers(1, "exit 0");
  options.command.clear();
  EXPECT_THROW(launch_workers(options), std::invalid_argument);
  options = shell_workers(1, "exit 0");
  options.master_port = 70000;
  EXPECT_THROW(launch_workers(options), std::invalid_argument);
}

TEST(Launcher, LeavesTheProcessSignalStateAsItFoundIt) {
  struct sigaction before {};
  sigaction(SIGCHLD, nullptr, &before);
  struct sigaction term_before {};
  sigaction(SIGTERM, nullptr, &term_before);
  ASSERT_EQ(launch_workers(shell_workers(1, "exit 0")).exit_code, 0);
  struct sigaction after {};
  sigaction(SIGCHLD, nullptr, &after);
  struct sigaction term_after {};
  sigaction(SIGTERM, nullptr, &term_after);
  EXPECT_EQ(before.sa_handler, after.sa_handler);
  EXPECT_EQ(term_before.sa_handler, term_after.sa_handler);
}

// The launcher runs in a forked copy of this test binary so that a signal
// aimed at it cannot hit the test runner. A test that ends before the copy
// returned kills it (and, through it, the workers). With `result_file`, the
// copy writes the failed rank and the failure there, as "1 exit status 3".
class LauncherProcess {
 public:
  explicit LauncherProcess(const LaunchOptions& options, const fs::path& result_file = {}) : pid_(fork()) {
    if (pid_ == 0) {
      // As from an interactive shell, even if this test runs where they are
      // ignored (nohup, a background job of a script).
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      signal(SIGPIPE, SIG_DFL);  // for the workers, which inherit it
      int code = 99;
      try {
        const LaunchResult result = launch_workers(options);
        code = result.exit_code;
        if (!result_file.empty()) std::ofstream(result_file) << result.failed_rank << " " << result.failure << "\n";
      } catch (...) {
      }
      _exit(code);
    }
  }
  ~LauncherProcess() {
    if (running_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  LauncherProcess(const LauncherProcess&) = delete;
  LauncherProcess& operator=(const LauncherProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Its exit code, as a shell reports it; -1 (and a failure) if it has not
  // returned within kNoHang.
  int exit_code() {
    int status = 0;
    const auto exited = eventually([&] { return waitpid(pid_, &status, WNOHANG) == pid_; },
                                   "the launcher to return");
    if (!exited) {
      ADD_FAILURE() << exited.message();
      return -1;
    }
    running_ = false;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_;
  bool running_ = true;
};

class LauncherSignals : public ::testing::TestWithParam<int> {};

TEST_P(LauncherSignals, ForwardsTheSignalAndReturns) {
  const int sig = GetParam();
  TempDir dir("tula-launch");
  LaunchOptions options = shell_workers(
      2,
      "trap 'echo got > \"$1/got.$RANK\"; exit 0' INT TERM; " + kOutlivesTheTest +
          " & echo $$ > \"$1/pid.$RANK\"; wait",
      dir.path());
  LauncherProcess launcher(options);
  const pid_t worker0 = read_pid(dir.path() / "pid.0");
  const pid_t worker1 = read_pid(dir.path() / "pid.1");
  ASSERT_EQ(kill(launcher.pid(), sig), 0);
  EXPECT_EQ(launcher.exit_code(), 128 + sig);
  // The workers' traps ran: they got the signal, through the launcher.
  EXPECT_EQ(read_text(dir.path() / "got.0"), "got\n");
  EXPECT_EQ(read_text(dir.path() / "got.1"), "got\n");
  EXPECT_TRUE(eventually_gone(worker0, "worker rank 0"));
  EXPECT_TRUE(eventually_gone(worker1, "worker rank 1"));
}

// Two workers die while the launcher cannot look (it is stopped), so that
// when it is continued it sees both exits at once: rank 0 exits with status
// 1 (as the peer of a dead worker does), and the test kills rank 1 with
// `rank1_signal`, before or after rank 0's exit. Returns the launcher's exit
// code and "failed_rank failure".
std::pair<int, std::string> two_deaths_unseen(int rank1_signal, bool rank1_first) {
  TempDir dir("tula-launch");
  const LaunchOptions options = shell_workers(
      2,
      "echo $$ > \"$1/pid.$RANK\"; if [ \"$RANK\" = 0 ]; then " +
          tula::testing::shell_wait_until("[ -e \"$1/go\" ]", "the file go") + "exit 1; fi; " +
          kOutlivesTheTest + " & wait",
      dir.path());
  LauncherProcess launcher(options, dir.path() / "result");
  const pid_t worker0 = read_pid(dir.path() / "pid.0");
  const pid_t worker1 = read_pid(dir.path() / "pid.1");
  EXPECT_EQ(kill(launcher.pid(), SIGSTOP), 0);
  EXPECT_TRUE(eventually([&] { return tula::testing::process_state(launcher.pid()) == 'T'; },
                         "the launcher to stop"));
  const auto kill_rank1 = [&] {
    EXPECT_EQ(kill(worker1, rank1_signal), 0);
    EXPECT_TRUE(eventually_gone(worker1, "worker rank 1"));
  };
  if (rank1_first) kill_rank1();
  std::ofstream(dir.path() / "go") << "go\n";
  EXPECT_TRUE(eventually_gone(worker0, "worker rank 0"));
  if (!rank1_first) kill_rank1();
  EXPECT_EQ(kill(launcher.pid(), SIGCONT), 0);
  const int code = launcher.exit_code();
  return {code, read_text(dir.path() / "result")};
}

// Rank 1 dies first, of a SIGKILL no one in the job sent, then rank 0: the
// launcher blames rank 1, the first to die, not rank 0, the first in rank
// order.
TEST(Launcher, BlamesTheFirstWorkerToDieNotTheLowestRank) {
  const auto [code, result] = two_deaths_unseen(SIGKILL, /*rank1_first=*/true);
  EXPECT_EQ(code, 128 + SIGKILL);
  EXPECT_EQ(result, "1 killed by signal 9 (SIGKILL)\n");
}

// The kernel reports rank 0's exit first, yet rank 1 was killed by a
// signal the launcher did not send, within the blame window: a killed
// worker's sockets close before its death is reported, so rank 1 is the
// cause of rank 0's failure.
TEST(Launcher, AWorkerKilledJustAfterAnotherFailedIsTheCause) {
  const auto [code, result] = two_deaths_unseen(SIGKILL, /*rank1_first=*/false);
  EXPECT_EQ(code, 128 + SIGKILL);
  EXPECT_EQ(result, "1 killed by signal 9 (SIGKILL)\n");
}

// SIGPIPE is what a worker dies of when its peer is gone, never the cause:
// rank 0's exit status stays blamed.
TEST(Launcher, AWorkerDeadOfSigpipeIsNotTheCause) {
  const auto [code, result] = two_deaths_unseen(SIGPIPE, /*rank1_first=*/false);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(result, "0 exit status 1\n");
}

// The same with `tula train`: rank 1 of a two-worker run is SIGKILLed
// mid-training; rank 0 then fails too (its collective meets a closed
// connection) or is stopped by the launcher, and is not the one blamed.
TEST(Launcher, TrainingJobBlamesTheKilledWorker) {
  TempDir dir("tula-launch");
  const fs::path metrics = dir.path() / "metrics.jsonl";
  const std::string train = tula::testing::tula_binary() +
                            " train --nproc 2 --model small_cnn --dataset synthetic --synthetic-size 256"
                            " --synthetic-shape 1x28x28 --batch-size 8 --no-eval --threads 1 --progress none"
                            " --epochs 1000 --metrics " + metrics.string() + " --master-port ";
  for (int attempt = 0; attempt < 5; ++attempt) {
    tula::testing::ChildProcess job(tula::testing::words(train + std::to_string(tula::testing::free_port())),
                                    (dir.path() / "job.log").string());
    ASSERT_TRUE(eventually(
        [&] { return tula::testing::last_iter_step(tula::testing::metrics_records(metrics)) >= 2 || job.ended(); },
        "step 2 in " + metrics.string(), 300s))
        << job.output();
    if (job.ended()) {  // it cannot end by itself, unless its port was taken
      ASSERT_TRUE(tula::testing::says_port_in_use(job.output())) << "exit " << job.exit_code() << "\n"
                                                                 << job.output();
      continue;
    }
    const auto worker0 = tula::testing::worker_of(job.pid(), 0);
    const auto worker1 = tula::testing::worker_of(job.pid(), 1);
    ASSERT_TRUE(worker0.has_value() && worker1.has_value()) << job.output();
    // A training worker ignores SIGPIPE: a write to its dead peer fails, it
    // does not kill the writer.
    EXPECT_TRUE(tula::testing::ignores_signal(*worker0, SIGPIPE));
    ASSERT_EQ(kill(*worker1, SIGKILL), 0);
    EXPECT_EQ(job.wait(), 128 + SIGKILL) << job.output();
    const std::string output = job.output();
    EXPECT_NE(output.find("tula launch: worker rank 1 (pid " + std::to_string(*worker1) +
                          ") killed by signal 9 (SIGKILL)"),
              std::string::npos)
        << output;
    EXPECT_EQ(output.find("worker rank 0 (pid"), std::string::npos) << output;
    // Rank 0 learns of its peer's death as an error of its collective,
    // whether or not the launcher's SIGTERM came first. Except when Gloo
    // leaves it waiting on a send to the dead peer (a pending send does not
    // notice the closed connection; seen once in ~200 runs on a loaded
    // machine): then, SIGTERM only asking it to stop after the step, the
    // launcher's SIGKILL ends it after the grace.
    EXPECT_TRUE(output.find("tula: error: collective failed") != std::string::npos ||
                output.find("sending SIGKILL") != std::string::npos)
        << output;
    return;
  }
  FAIL() << "each of 5 free ports was taken before the job used it";
}

INSTANTIATE_TEST_SUITE_P(IntAndTerm, LauncherSignals, ::testing::Values(SIGINT, SIGTERM),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == SIGINT ? std::string("SIGINT")
                                                       : std::string("SIGTERM");
                         });

// The workers note each SIGINT and keep running; the second SIGINT is sent
// only once the first has reached them, so the launcher sees two.
TEST(Launcher, SecondInterruptKillsAtOnce) {
  TempDir dir("tula-launch");
  LaunchOptions options = shell_workers(
      2,
      "trap 'echo int >> \"$1/int.$RANK\"' INT; trap '' TERM; " + kOutlivesTheTest +
          " & echo $$ > \"$1/pid.$RANK\"; wait $!; wait $!",
      dir.path());
  options.kill_grace = 10min;  // only the second Ctrl-C can end this early
  LauncherProcess launcher(options);
  const pid_t worker0 = read_pid(dir.path() / "pid.0");
  read_pid(dir.path() / "pid.1");
  ASSERT_EQ(kill(launcher.pid(), SIGINT), 0);
  ASSERT_TRUE(eventually(
      [&] { return !read_text(dir.path() / "int.0").empty() && !read_text(dir.path() / "int.1").empty(); },
      "the first SIGINT to reach both workers through the launcher"));
  ASSERT_EQ(kill(launcher.pid(), SIGINT), 0);
  EXPECT_EQ(launcher.exit_code(), 128 + SIGINT);
  EXPECT_TRUE(eventually_gone(worker0, "worker rank 0"));
}

}  // namespace
}  // namespace tula::distributed
