// `tula tune` through faults: a worker killed mid-training, SIGINT to the
// job followed by --resume, and SIGTERM while it profiles.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <unistd.h>
#include "helpers/wait.hpp"
#include "helpers/run_command.hpp"
#include "helpers/temp_dir.hpp"
#include "tune/end_to_end/tune_job.hpp"

namespace tula::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Starts `command` in the background; its exit status lands in `rc_file`.
// (run_command quotes with single quotes: commands here use double ones.)
void start_in_background(const std::string& command, const fs::path& log, const fs::path& rc_file) {
  const auto r = run_command("(" + command + " > " + log.string() + " 2>&1; echo $? > " + rc_file.string() +
                             ") > /dev/null 2>&1 &");
  ASSERT_EQ(r.exit_code, 0) << r.output;
}

int64_t last_step(const fs::path& metrics) {
  std::ifstream in(metrics);
  std::string line;
  int64_t step = 0;
  while (std::getline(in, line)) {
    const auto j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("type", "") == "iter") step = j.value("step", int64_t{0});
  }
  return step;
}

bool exists_nonempty(const fs::path& p) { return fs::exists(p) && fs::file_size(p) > 0; }

std::string read_all(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// The first process whose command line matches `pattern` (pgrep -f), 0 when
// none; pgrep's output in `said`. A bracket in the pattern keeps it from
// matching the shell running pgrep.
int first_pid(const std::string& pattern, std::string& said) {
  said = run_command("pgrep -f -- \"" + pattern + "\" | head -1").output;
  return std::atoi(said.c_str());
}

int read_rc(const fs::path& rc_file) {
  std::ifstream in(rc_file);
  int rc = -1;
  in >> rc;
  return rc;
}

TEST(TuneCommand, AWorkerKilledMidTrainingResumesFromItsCheckpoint) {
  TempDir dir;
  const fs::path out = dir.path() / "job";
  start_in_background(job(out.string(), "--epochs 6 --max-retries 2 --start-at 2x8 --no-replan --profile " + shared_profile()),
                      dir.path() / "log", dir.path() / "rc");
  // Past the first periodic checkpoint (every 4 steps here).
  ASSERT_TRUE(eventually([&] { return last_step(out / "metrics.jsonl") >= 10; }, "the job's 10th step",
                         std::chrono::seconds(240)));
  // One worker of this job (its argv names the job's metrics file), killed outright.
  std::string said;
  const int pid = first_pid("^[^ ]*tula train .*" + out.string() + "/metrics[.]jsonl", said);
  ASSERT_GT(pid, 0) << said;
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return exists_nonempty(dir.path() / "rc"); }, "the job to end",
                         std::chrono::seconds(300)));
  const std::string log = read_all(dir.path() / "log");
  EXPECT_EQ(read_rc(dir.path() / "rc"), 0) << log;
  EXPECT_NE(log.find("a worker died"), std::string::npos) << log;
  EXPECT_NE(log.find("resuming from the last checkpoint, retry 1 of 2"), std::string::npos) << log;
  const json report = read_json(out / "report.json");
  EXPECT_EQ(report["state"], "succeeded");
  EXPECT_EQ(report["measured"]["retries"], 1);
}

TEST(TuneCommand, SigintStopsCleanlyAndResumeFinishes) {
  TempDir dir;
  const fs::path out = dir.path() / "job";
  start_in_background(job(out.string(), "--epochs 6 --start-at 2x8 --no-replan --profile " + shared_profile()), dir.path() / "log",
                      dir.path() / "rc");
  ASSERT_TRUE(eventually([&] { return last_step(out / "metrics.jsonl") >= 6; }, "the job's 6th step",
                         std::chrono::seconds(240)));
  std::string said;
  const int pid = first_pid("^[^ ]*tula tune .*--out " + out.string() + " ", said);
  ASSERT_GT(pid, 0) << said;
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  ASSERT_TRUE(eventually([&] { return exists_nonempty(dir.path() / "rc"); }, "the job to stop",
                         std::chrono::seconds(180)));
  const std::string log = read_all(dir.path() / "log");
  EXPECT_EQ(read_rc(dir.path() / "rc"), 130) << log;
  EXPECT_EQ(read_json(out / "report.json")["state"], "stopped") << log;
  EXPECT_NE(log.find("tula tune --resume"), std::string::npos) << log;
  EXPECT_EQ(run_command("pgrep -f -- \"" + out.string() + "/metrics[.]jsonl\"").output, "") << "a worker outlived the job";
  const int64_t stopped_at = last_step(out / "metrics.jsonl");

  const auto resumed = run_command(tula_binary() + " tune --progress lines --resume " + out.string(), 300);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.output;
  const json report = read_json(out / "report.json");
  EXPECT_EQ(report["state"], "succeeded") << resumed.output;
  EXPECT_GE(report["measured"]["epochs"].get<double>(), 6.0);
  // The resumed launch starts where the stopped one left off, and its restart
  // is measured from its own first step (a restart takes seconds, never none).
  EXPECT_EQ(report["segments"].back()["first_step"].get<int64_t>(), stopped_at) << report["segments"].dump();
  EXPECT_GT(read_json(out / "tune.json")["restart_cost_s"].get<double>(), 0.0) << resumed.output;
}

// The profile runs in the tune process: a stop signal ends it at its next
// line, and the job stops there, with nothing cached. ResNet-20's compute grid
// takes seconds after the profile's first line, so the signal lands within it.
TEST(TuneCommand, SigtermWhileProfilingStopsTheJobThere) {
  TempDir dir;
  const fs::path out = dir.path() / "job";
  const fs::path cache = dir.path() / "cache";
  start_in_background("TULA_CACHE_DIR=" + cache.string() + " " + tula_binary() +
                          " tune --model resnet20 --dataset synthetic --synthetic-size 512 --progress lines"
                          " --epochs 1 --out " + out.string(),
                      dir.path() / "log", dir.path() / "rc");
  ASSERT_TRUE(eventually(
      [&] { return read_all(out / "logs" / "profile.log").find("  profile: profiling resnet20") != std::string::npos; },
      "the profile's first line in " + (out / "logs" / "profile.log").string(), std::chrono::seconds(240)));
  std::string said;
  const int pid = first_pid("^[^ ]*tula tune .*--out " + out.string(), said);
  ASSERT_GT(pid, 0) << said;
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  ASSERT_TRUE(eventually([&] { return exists_nonempty(dir.path() / "rc"); }, "the job to stop",
                         std::chrono::seconds(180)));
  const std::string log = read_all(dir.path() / "log");
  EXPECT_EQ(read_rc(dir.path() / "rc"), 128 + SIGTERM) << log;
  const json report = read_json(out / "report.json");
  EXPECT_EQ(report["state"], "stopped") << log;
  EXPECT_NE(report.dump().find("interrupted while profiling"), std::string::npos) << report.dump();
  EXPECT_FALSE(fs::exists(out / "profile.json"));
  if (fs::exists(cache)) {
    for (const auto& e : fs::directory_iterator(cache)) {
      EXPECT_NE(e.path().extension(), ".json") << "a profile cut short was cached: " << e.path();
    }
  }
}

}  // namespace
}  // namespace tula::testing
