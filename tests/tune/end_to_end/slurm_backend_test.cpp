// The Slurm backend against a real single-node cluster on this machine, which
// ctest's slurm_cluster_start fixture starts (scripts/slurm-cluster). The
// SlurmCluster tests need it and skip only when its daemons could not start,
// saying why; the SlurmAvailability tests need no cluster.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "helpers/free_port.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "helpers/wait.hpp"
#include "tune/backend.hpp"

namespace tula::tune {
namespace {

using testing::eventually;
using testing::read_text;
using testing::TempDir;
using testing::tula_binary;

// A job's two workers start LibTorch side by side on a machine that may be
// busy: their first step can take a while, never minutes.
constexpr std::chrono::milliseconds kJobPatience{std::chrono::minutes(4)};

std::string slurm_dir() {
  const char* dir = std::getenv("TULA_SLURM_DIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp/tula-slurm";
}

// Sets an environment variable for one scope, restoring what was there.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) {
    if (const char* old = std::getenv(name_.c_str())) old_ = old;
    ::setenv(name_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::vector<nlohmann::json> records(const std::string& metrics_path) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(read_text(metrics_path));
  std::string line;
  while (std::getline(lines, line)) {
    // The last line may be half written while a worker runs.
    auto record = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_object()) out.push_back(std::move(record));
  }
  return out;
}

std::optional<nlohmann::json> record_of_type(const std::string& metrics_path, const std::string& type) {
  for (auto& r : records(metrics_path)) {
    if (r.value("type", "") == type) return r;
  }
  return std::nullopt;
}

// Pids of the processes whose command line holds `argument` as one of its words.
std::vector<int> processes_with_argument(const std::string& argument) {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_text(entry.path() / "cmdline");
    std::istringstream words(cmdline);
    std::string word;
    while (std::getline(words, word, '\0')) {
      if (word == argument) {
        pids.push_back(std::stoi(name));
        break;
      }
    }
  }
  return pids;
}

std::string joined(const std::vector<int>& pids) {
  std::string out;
  for (int pid : pids) out += (out.empty() ? "" : " ") + std::to_string(pid);
  return out;
}

// `tula train` on the synthetic set, writing its metrics to `metrics`.
std::vector<std::string> train_command(const std::string& metrics, const std::vector<std::string>& more) {
  std::vector<std::string> argv = {tula_binary(), "train",  "--model",      "small_cnn", "--dataset",
                                   "synthetic",   "--batch-size", "16",     "--metrics", metrics,
                                   "--progress",  "none"};
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

// A run that lasts far longer than any test: it ends only when stopped.
std::vector<std::string> long_train_command(const TempDir& dir) {
  return train_command(dir.file("metrics.jsonl"), {"--synthetic-size", "100000", "--epochs", "1000", "--no-eval",
                                                   "--checkpoint-dir", dir.file("checkpoints")});
}

BackendOptions backend_options() {
  BackendOptions options;
  options.tula_binary = tula_binary();
  return options;
}

std::string describe(const LaunchExit& exit) {
  return "exit code " + std::to_string(exit.exit_code) + ", \"" + exit.description + "\"";
}

class SlurmCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string dir = slurm_dir();
    const std::string failure = testing::read_text(dir + "/start-failure");
    if (!failure.empty()) {
      GTEST_SKIP() << "the test Slurm cluster could not start (scripts/slurm-cluster start): " << failure;
    }
    const std::string conf = dir + "/slurm.conf";
    ASSERT_TRUE(std::filesystem::exists(conf))
        << "no test Slurm cluster: " << conf << " is missing; ctest starts one (the slurm_cluster_start "
        << "fixture), or run scripts/slurm-cluster start before this binary";
    conf_.emplace("SLURM_CONF", conf);
    backend_ = make_slurm_backend(backend_options());
    ASSERT_NO_THROW(backend_->check_available());
  }

  WorkerLaunch launch(const TempDir& dir, std::vector<std::string> command, int workers = 2) const {
    WorkerLaunch l;
    l.workers = workers;
    l.worker_command = std::move(command);
    l.log_path = dir.file("launch.log");
    l.work_dir = dir.file("job");
    l.name = "tula-test";
    return l;
  }

  // Waits for the launch to end; fails (with the log) when it does not.
  LaunchExit end_of(RunningLaunch& running, const TempDir& dir) {
    auto exit = running.wait_for(kJobPatience);
    if (!exit) {
      ADD_FAILURE() << running.where() << " did not end within " << kJobPatience.count() / 1000
                    << " s; its log:\n" << read_text(dir.file("launch.log"));
      running.kill();
      exit = running.wait_for(std::chrono::minutes(1));
    }
    return exit.value_or(LaunchExit{-1, "did not end"});
  }

  // Waits until rank 0 has written its first step's record.
  ::testing::AssertionResult first_step(RunningLaunch& running, const TempDir& dir) {
    const std::string metrics = dir.file("metrics.jsonl");
    auto stepped = eventually(
        [&] {
          if (record_of_type(metrics, "iter")) return true;
          return running.wait_for(std::chrono::milliseconds(0)).has_value();  // ended early: fail now
        },
        "the first \"iter\" record of " + running.where() + " in " + metrics, kJobPatience);
    if (stepped && !record_of_type(metrics, "iter")) {
      return ::testing::AssertionFailure() << running.where() << " ended before its first step: "
                                           << describe(*running.wait_for(std::chrono::milliseconds(0)))
                                           << "; its log:\n" << read_text(dir.file("launch.log"));
    }
    if (!stepped) stepped << "; its log:\n" << read_text(dir.file("launch.log"));
    return stepped;
  }

  std::optional<ScopedEnv> conf_;
  std::unique_ptr<Backend> backend_;
};

TEST_F(SlurmCluster, TwoTasksRendezvousThroughSlurmsVariables) {
  TempDir dir("tula-slurm");
  const std::string metrics = dir.file("metrics.jsonl");
  auto running = backend_->start(launch(
      dir, train_command(metrics, {"--synthetic-size", "256", "--epochs", "1", "--max-steps", "4"})));
  const std::string where = running->where();
  EXPECT_EQ(where.rfind("slurm job ", 0), 0u) << where;
  const nlohmann::json handle = running->handle();
  EXPECT_EQ(handle.value("backend", ""), "slurm") << handle.dump();
  EXPECT_EQ("slurm job " + std::to_string(handle.value("job_id", -1LL)), where) << handle.dump();

  const LaunchExit exit = end_of(*running, dir);
  ASSERT_EQ(exit.exit_code, 0) << describe(exit) << "; log:\n" << read_text(dir.file("launch.log"));
  const auto start = record_of_type(metrics, "start");
  ASSERT_TRUE(start) << "no \"start\" record in " << metrics << ":\n" << read_text(metrics);
  EXPECT_EQ(start->value("workers", 0), 2) << start->dump();
  EXPECT_EQ(start->value("rendezvous", ""), "slurm") << start->dump();
  // A second call reports the same end without asking Slurm again.
  const auto again = running->wait_for(std::chrono::milliseconds(0));
  ASSERT_TRUE(again);
  EXPECT_EQ(again->exit_code, 0);
}

TEST_F(SlurmCluster, RequestStopEndsTheJobAndLeavesNoWorker) {
  TempDir dir("tula-slurm");
  auto running = backend_->start(launch(dir, long_train_command(dir)));
  ASSERT_TRUE(first_step(*running, dir));

  running->request_stop();
  const LaunchExit exit = end_of(*running, dir);
  // SIGTERM reached the workers: they end by it or, stopping cleanly, with 128 + 15.
  EXPECT_NE(exit.exit_code, 0) << describe(exit);
  EXPECT_NE(exit.description.find("stop"), std::string::npos) << describe(exit);
  const auto left = processes_with_argument(dir.file("metrics.jsonl"));
  EXPECT_TRUE(left.empty()) << "still running after " << running->where() << " ended (" << describe(exit)
                            << "): pids " << joined(left);
  running->kill();  // after the end: does nothing, throws nothing
}

TEST_F(SlurmCluster, RequestStopBeforeTheWorkersStartEndsTheJob) {
  TempDir dir("tula-slurm");
  auto running = backend_->start(launch(dir, long_train_command(dir)));
  // Pending or still starting its step: a signal would reach nobody, so the job is cancelled.
  running->request_stop();
  const LaunchExit exit = end_of(*running, dir);
  EXPECT_NE(exit.exit_code, 0) << describe(exit);
  const auto left = processes_with_argument(dir.file("metrics.jsonl"));
  EXPECT_TRUE(left.empty()) << "still running after " << running->where() << " ended (" << describe(exit)
                            << "): pids " << joined(left);
}

TEST_F(SlurmCluster, KillEndsTheJobAndLeavesNoWorker) {
  TempDir dir("tula-slurm");
  auto running = backend_->start(launch(dir, long_train_command(dir)));
  ASSERT_TRUE(first_step(*running, dir));

  running->kill();
  const LaunchExit exit = end_of(*running, dir);
  EXPECT_NE(exit.exit_code, 0) << describe(exit);
  EXPECT_NE(exit.description.find("cancelled"), std::string::npos) << describe(exit);
  const auto left = processes_with_argument(dir.file("metrics.jsonl"));
  EXPECT_TRUE(left.empty()) << "still running after " << running->where() << " ended (" << describe(exit)
                            << "): pids " << joined(left);
}

TEST_F(SlurmCluster, WorkersThatFailGiveTheirStatus) {
  TempDir dir("tula-slurm");
  auto running = backend_->start(launch(
      dir, train_command(dir.file("metrics.jsonl"), {"--synthetic-size", "256", "--model", "no_such_model"})));
  const LaunchExit exit = end_of(*running, dir);
  EXPECT_NE(exit.exit_code, 0) << describe(exit);
  EXPECT_NE(exit.description.find("exit status " + std::to_string(exit.exit_code)), std::string::npos)
      << describe(exit);
  EXPECT_NE(exit.description.find("rank"), std::string::npos) << describe(exit);
}

TEST_F(SlurmCluster, OneFailingRankEndsTheOthersAndIsNamed) {
  TempDir dir("tula-slurm");
  // Rank 1 fails at once; rank 0 would train for hours, but srun's
  // --kill-on-bad-exit ends it.
  std::vector<std::string> command = {"/bin/sh", "-c",
                                      "if [ \"$SLURM_PROCID\" = 1 ]; then exit 3; fi; exec \"$0\" \"$@\""};
  const auto train = long_train_command(dir);
  command.insert(command.end(), train.begin(), train.end());
  auto running = backend_->start(launch(dir, command));
  const LaunchExit exit = end_of(*running, dir);
  EXPECT_EQ(exit.exit_code, 3) << describe(exit) << "; log:\n" << read_text(dir.file("launch.log"));
  EXPECT_NE(exit.description.find("exit status 3 (rank 1)"), std::string::npos) << describe(exit);
  const auto left = processes_with_argument(dir.file("metrics.jsonl"));
  EXPECT_TRUE(left.empty()) << "rank 0 still runs after " << running->where() << " ended: pids " << joined(left);
}

TEST(SlurmAvailability, UnreachableControllerIsReported) {
  if (std::system("command -v sbatch >/dev/null && command -v scontrol >/dev/null") != 0) {
    GTEST_SKIP() << "Slurm's client commands are not installed (scripts/setup installs slurm-wlm)";
  }
  TempDir dir("tula-slurm");
  // A controller on a port nobody listens on.
  const std::string conf = dir.file("slurm.conf");
  std::ofstream(conf) << "ClusterName=nowhere\n"
                      << "SlurmctldHost=localhost\n"
                      << "SlurmctldPort=" << testing::free_port() << "\n"
                      << "NodeName=localhost CPUs=1 State=UNKNOWN\n"
                      << "PartitionName=nowhere Nodes=localhost Default=YES State=UP\n";
  ScopedEnv env("SLURM_CONF", conf);
  auto backend = make_slurm_backend(backend_options());
  try {
    backend->check_available();
    FAIL() << "check_available() passed with SLURM_CONF=" << conf;
  } catch (const BackendError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("Slurm is not reachable"), std::string::npos) << message;
    EXPECT_NE(message.find("is slurmctld running?"), std::string::npos) << message;
    EXPECT_NE(message.find("SLURM_CONF=" + conf), std::string::npos) << message;
  }
}

TEST(SlurmAvailability, MissingCommandsAreNamed) {
  TempDir empty("tula-slurm");
  ScopedEnv path("PATH", empty.str());
  auto backend = make_slurm_backend(backend_options());
  try {
    backend->check_available();
    FAIL() << "check_available() passed with PATH=" << empty.str();
  } catch (const BackendError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("sbatch is not installed"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace tula::tune
