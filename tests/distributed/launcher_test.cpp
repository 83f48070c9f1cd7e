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
#include <thread>
#include <vector>

namespace tula::distributed {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Generous: only proves that nothing waits for a worker's `sleep 30`.
constexpr auto kNoHang = 15s;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "tula-launch-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string slurp(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Workers as `sh -c SCRIPT sh DIR`: the script sees the temp dir as $1.
LaunchOptions shell_workers(int nproc, const std::string& script, const fs::path& dir = "/") {
  LaunchOptions options;
  options.nproc_per_node = nproc;
  options.command = {"sh", "-c", script, "sh", dir.string()};
  options.kill_grace = 2s;
  options.quiet = true;
  return options;
}

// True once `pid` no longer runs: gone, or a zombie awaiting some other parent.
bool process_gone(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

bool eventually_gone(pid_t pid) {
  const auto until = Clock::now() + 5s;
  while (!process_gone(pid)) {
    if (Clock::now() > until) return false;
    std::this_thread::sleep_for(20ms);
  }
  return true;
}

pid_t read_pid(const fs::path& file) {
  const auto until = Clock::now() + 10s;
  while (Clock::now() < until) {
    const std::string text = slurp(file);
    if (!text.empty() && text.back() == '\n') return static_cast<pid_t>(std::stol(text));
    std::this_thread::sleep_for(10ms);
  }
  ADD_FAILURE() << "no pid in " << file;
  return -1;
}

TEST(Launcher, AllWorkersSucceed) {
  const LaunchResult result = launch_workers(shell_workers(3, "exit 0"));
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.failed_rank, -1);
  EXPECT_EQ(result.failure, "");
}

TEST(Launcher, WorkersGetTheTorchrunEnvironment) {
  TempDir dir;
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
    EXPECT_EQ(slurp(dir.path() / std::to_string(local)),
              std::to_string(3 + local) + " 6 " + std::to_string(local) + " 23456\n");
    std::istringstream more(slurp(dir.path() / ("more." + std::to_string(local))));
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
  TempDir dir;
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
  EXPECT_EQ(slurp(dir.path() / "0"), "7\n");
  EXPECT_EQ(slurp(dir.path() / "1"), "7\n");
}

TEST(Launcher, FailedWorkerStopsTheOthers) {
  TempDir dir;
  // Each worker records its own pid and that of a child it starts, so we can
  // check that nothing survives: neither the workers nor what they started.
  const LaunchOptions options = shell_workers(
      3,
      "sleep 30 & echo $! > \"$1/child.$RANK\"; echo $$ > \"$1/pid.$RANK\"; "
      "if [ \"$RANK\" = 1 ]; then while [ ! -s \"$1/pid.0\" ] || [ ! -s \"$1/pid.2\" ]; "
      "do sleep 0.05; done; exit 3; fi; wait",
      dir.path());
  const auto start = Clock::now();
  const LaunchResult result = launch_workers(options);
  EXPECT_LT(Clock::now() - start, kNoHang);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.failed_rank, 1);
  EXPECT_EQ(result.failure, "exit status 3");
  for (int rank = 0; rank < 3; ++rank) {
    const pid_t worker = read_pid(dir.path() / ("pid." + std::to_string(rank)));
    const pid_t child = read_pid(dir.path() / ("child." + std::to_string(rank)));
    // The launcher reaped its workers: not even a zombie is left.
    EXPECT_FALSE(fs::exists("/proc/" + std::to_string(worker))) << "worker rank " << rank;
    EXPECT_TRUE(eventually_gone(child)) << "child of worker rank " << rank;
  }
}

TEST(Launcher, TheBriefsFailureScenarioReturnsPromptly) {
  const auto start = Clock::now();
  const LaunchResult result =
      launch_workers(shell_workers(3, "if [ $RANK = 1 ]; then exit 3; fi; sleep 30"));
  EXPECT_LT(Clock::now() - start, kNoHang);
  EXPECT_EQ(result.exit_code, 3);
  EXPECT_EQ(result.failed_rank, 1);
}

TEST(Launcher, WorkerKilledBySignal) {
  LaunchOptions options =
      shell_workers(2, "if [ \"$RANK\" = 0 ]; then kill -KILL $$; fi; sleep 30");
  options.quiet = false;
  testing::internal::CaptureStderr();
  const auto start = Clock::now();
  const LaunchResult result = launch_workers(options);
  const std::string stderr_text = testing::internal::GetCapturedStderr();
  EXPECT_LT(Clock::now() - start, kNoHang);
  EXPECT_EQ(result.exit_code, 128 + 9);
  EXPECT_EQ(result.failed_rank, 0);
  EXPECT_EQ(result.failure, "killed by signal 9 (SIGKILL)");
  EXPECT_NE(stderr_text.find("tula launch: worker rank 0 (pid "), std::string::npos)
      << stderr_text;
  EXPECT_NE(stderr_text.find("killed by signal 9 (SIGKILL); stopping 1 other worker(s)"),
            std::string::npos)
      << stderr_text;
}

TEST(Launcher, WorkerIgnoringSigtermIsKilledAfterTheGrace) {
  TempDir dir;
  LaunchOptions options = shell_workers(
      2,
      "trap '' TERM; echo $$ > \"$1/pid.$RANK\"; "
      "if [ \"$RANK\" = 0 ]; then while [ ! -s \"$1/pid.1\" ]; do sleep 0.05; done; exit 5; fi; "
      "sleep 30",
      dir.path());
  options.kill_grace = 500ms;
  options.quiet = false;
  testing::internal::CaptureStderr();
  const auto start = Clock::now();
  const LaunchResult result = launch_workers(options);
  const auto elapsed = Clock::now() - start;
  const std::string stderr_text = testing::internal::GetCapturedStderr();
  EXPECT_LT(elapsed, kNoHang);
  EXPECT_GE(elapsed, 500ms);  // the grace was honoured before SIGKILL
  EXPECT_EQ(result.exit_code, 5);
  EXPECT_EQ(result.failed_rank, 0);
  EXPECT_EQ(result.failure, "exit status 5");
  EXPECT_NE(stderr_text.find("failed with exit status 5; stopping 1 other worker(s)"),
            std::string::npos)
      << stderr_text;
  EXPECT_NE(stderr_text.find("sending SIGKILL"), std::string::npos) << stderr_text;
  EXPECT_FALSE(fs::exists("/proc/" + std::to_string(read_pid(dir.path() / "pid.1"))));
}

TEST(Launcher, CommandNotFound) {
  LaunchOptions options;
  options.nproc_per_node = 2;
  options.command = {"tula-no-such-command-for-tests", "--flag"};
  options.kill_grace = 1s;
  testing::internal::CaptureStderr();
  const LaunchResult result = launch_workers(options);
  const std::string stderr_text = testing::internal::GetCapturedStderr();
  EXPECT_EQ(result.exit_code, 127);
  EXPECT_EQ(result.failed_rank, 0);
  EXPECT_NE(result.failure.find("command not found: tula-no-such-command-for-tests"),
            std::string::npos)
      << result.failure;
  EXPECT_NE(stderr_text.find("command not found"), std::string::npos) << stderr_text;
}

TEST(Launcher, CommandNotExecutable) {
  TempDir dir;
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
// aimed at it cannot hit the test runner.
struct LauncherProcess {
  pid_t pid;
  int wait_status(std::chrono::seconds bound) const {
    const auto until = Clock::now() + bound;
    int status = 0;
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (Clock::now() > until) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        ADD_FAILURE() << "launcher did not return within the bound";
        return -1;
      }
      std::this_thread::sleep_for(20ms);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

LauncherProcess start_launcher(const LaunchOptions& options) {
  const pid_t pid = fork();
  if (pid == 0) {
    // As from an interactive shell, even if this test runs where they are
    // ignored (nohup, a background job of a script).
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    int code = 99;
    try {
      code = launch_workers(options).exit_code;
    } catch (...) {
    }
    _exit(code);
  }
  return {pid};
}

class LauncherSignals : public testing::TestWithParam<int> {};

TEST_P(LauncherSignals, ForwardsTheSignalAndReturns) {
  const int sig = GetParam();
  TempDir dir;
  LaunchOptions options = shell_workers(
      2,
      "trap 'echo got > \"$1/got.$RANK\"; exit 0' INT TERM; "
      "sleep 30 & echo $$ > \"$1/pid.$RANK\"; wait",
      dir.path());
  const LauncherProcess launcher = start_launcher(options);
  const pid_t worker0 = read_pid(dir.path() / "pid.0");
  const pid_t worker1 = read_pid(dir.path() / "pid.1");
  ASSERT_EQ(kill(launcher.pid, sig), 0);
  EXPECT_EQ(launcher.wait_status(kNoHang), 128 + sig);
  // The workers' traps ran: they got the signal, through the launcher.
  EXPECT_EQ(slurp(dir.path() / "got.0"), "got\n");
  EXPECT_EQ(slurp(dir.path() / "got.1"), "got\n");
  EXPECT_TRUE(eventually_gone(worker0));
  EXPECT_TRUE(eventually_gone(worker1));
}

INSTANTIATE_TEST_SUITE_P(IntAndTerm, LauncherSignals, testing::Values(SIGINT, SIGTERM),
                         [](const testing::TestParamInfo<int>& info) {
                           return info.param == SIGINT ? std::string("SIGINT")
                                                       : std::string("SIGTERM");
                         });

TEST(Launcher, SecondInterruptKillsAtOnce) {
  TempDir dir;
  LaunchOptions options = shell_workers(
      2, "trap '' INT TERM; echo $$ > \"$1/pid.$RANK\"; sleep 30", dir.path());
  options.kill_grace = 60s;  // only the second Ctrl-C can end this early
  const LauncherProcess launcher = start_launcher(options);
  const pid_t worker0 = read_pid(dir.path() / "pid.0");
  read_pid(dir.path() / "pid.1");
  ASSERT_EQ(kill(launcher.pid, SIGINT), 0);
  std::this_thread::sleep_for(200ms);
  ASSERT_EQ(kill(launcher.pid, SIGINT), 0);
  EXPECT_EQ(launcher.wait_status(kNoHang), 128 + SIGINT);
  EXPECT_TRUE(eventually_gone(worker0));
}

}  // namespace
}  // namespace tula::distributed
