// The launch loop on real processes: the local backend starts a script in
// place of `tula launch`, and the loop runs it to its end as the runner does.
#include "tune/launch_loop.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "helpers/temp_dir.hpp"

namespace tula::tune {
namespace {

namespace fs = std::filesystem;

// A launcher that runs `body` (sh) whatever arguments the backend gives it.
std::string write_launcher(const testing::TempDir& dir, const std::string& body) {
  const std::string path = dir.file("fake-tula");
  std::ofstream(path) << "#!/bin/sh\ncd " << dir.str() << "\n" << body << "\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

std::unique_ptr<RunningLaunch> start(const testing::TempDir& dir, const std::string& launcher) {
  BackendOptions options;
  options.tula_binary = launcher;
  WorkerLaunch launch;
  launch.worker_command = {"/bin/true"};
  launch.log_path = dir.file("launch.log");
  launch.work_dir = dir.str();
  return make_backend("local", options)->start(launch);
}

// Answers the loop as a job would: once `ready` (a file the workers write
// when they run) exists, it ends the launch with `decision` or, with
// `signal_when_ready`, reports a stop signal.
class ScriptedWatcher : public LaunchWatcher {
 public:
  ScriptedWatcher(std::string ready, std::optional<SegmentEnd> decision, int signal_when_ready = 0)
      : ready_(std::move(ready)), decision_(std::move(decision)), signal_when_ready_(signal_when_ready) {}
  void read_progress(const RunningLaunch& running) override {
    ++reads;
    EXPECT_FALSE(running.queued()) << "a local launch never waits in a queue";
  }
  std::optional<SegmentEnd> decide() override {
    ++decisions;
    if (!fs::exists(ready_)) return std::nullopt;
    return decision_;
  }
  int stop_signal() const override { return fs::exists(ready_) ? signal_when_ready_ : 0; }
  SegmentEnd interrupted(int signal) const override {
    return {SegmentEnd::Kind::Interrupted, "signal " + std::to_string(signal), {}, 0};
  }
  void note(const std::string& text) override { notes.push_back(text); }

  int reads = 0, decisions = 0;
  std::vector<std::string> notes;

 private:
  std::string ready_;
  std::optional<SegmentEnd> decision_;
  int signal_when_ready_;
};

// Workers that run until stopped: once running they write `ready`; on
// SIGTERM they write `stopped` and exit 0 (as a checkpoint and a clean exit),
// or ignore it.
constexpr const char* kStopsOnSigterm =
    "trap 'echo checkpointed > stopped; exit 0' TERM\n"
    "echo running > ready\n"
    "while :; do sleep 0.05; done";
constexpr const char* kIgnoresSigterm =
    "trap '' TERM\n"
    "echo running > ready\n"
    "while :; do sleep 0.05; done";

constexpr LaunchLoopTimes kTimes{std::chrono::milliseconds(20), std::chrono::seconds(60)};

TEST(LaunchLoop, WorkersExitingNonZeroEndTheLaunchAsAWorkerDeathWithTheirLastLine) {
  testing::TempDir dir("tula-launch-loop");
  auto running = start(dir, write_launcher(dir, "echo 'rank 1: out of memory'; exit 3"));
  ScriptedWatcher watcher(dir.file("never"), std::nullopt);
  const SegmentEnd end = run_launch(*running, watcher, kTimes);
  EXPECT_EQ(end.kind, SegmentEnd::Kind::WorkerDied);
  EXPECT_NE(end.reason.find("exit status 3"), std::string::npos) << end.reason;
  EXPECT_NE(end.reason.find("rank 1: out of memory"), std::string::npos) << end.reason;
  EXPECT_EQ(exit_words(end), "worker died: " + end.reason);
  EXPECT_GE(watcher.reads, 1);  // what the workers wrote last is read
}

TEST(LaunchLoop, WorkersExitingZeroFinishTheLaunch) {
  testing::TempDir dir("tula-launch-loop");
  auto running = start(dir, write_launcher(dir, "exit 0"));
  ScriptedWatcher watcher(dir.file("never"), std::nullopt);
  const SegmentEnd end = run_launch(*running, watcher, kTimes);
  EXPECT_EQ(end.kind, SegmentEnd::Kind::Finished);
  EXPECT_EQ(exit_words(end), "finished");
}

TEST(LaunchLoop, ADecisionStopsTheWorkersWhichCheckpointOnSigterm) {
  testing::TempDir dir("tula-launch-loop");
  auto running = start(dir, write_launcher(dir, kStopsOnSigterm));
  SegmentEnd resize{SegmentEnd::Kind::Resize, "a better configuration", {}, 1};
  ScriptedWatcher watcher(dir.file("ready"), resize);
  const SegmentEnd end = run_launch(*running, watcher, kTimes);
  EXPECT_EQ(end.kind, SegmentEnd::Kind::Resize);
  EXPECT_EQ(end.reason, "a better configuration");
  EXPECT_EQ(end.next_machine, 1u);
  EXPECT_TRUE(fs::exists(dir.file("stopped"))) << "the workers were not asked to stop with SIGTERM";
  EXPECT_TRUE(watcher.notes.empty());
}

TEST(LaunchLoop, WorkersIgnoringTheStopAreKilledAfterTheGraceAndTheReportSaysSo) {
  testing::TempDir dir("tula-launch-loop");
  auto running = start(dir, write_launcher(dir, kIgnoresSigterm));
  ScriptedWatcher watcher(dir.file("ready"), SegmentEnd{SegmentEnd::Kind::GoalOutOfReach, "too slow", {}, 0});
  const SegmentEnd end = run_launch(*running, watcher, {std::chrono::milliseconds(20), std::chrono::milliseconds(200)});
  EXPECT_EQ(end.kind, SegmentEnd::Kind::GoalOutOfReach);
  ASSERT_EQ(watcher.notes.size(), 1u);
  EXPECT_NE(watcher.notes[0].find("did not stop within"), std::string::npos) << watcher.notes[0];
  EXPECT_NE(watcher.notes[0].find("killed"), std::string::npos) << watcher.notes[0];
  const auto exit = running->wait_for(std::chrono::seconds(0));
  ASSERT_TRUE(exit.has_value()) << "the launcher still runs after the kill";
  EXPECT_NE(exit->exit_code, 0);
}

TEST(LaunchLoop, AStopSignalInterruptsTheLaunchBeforeAnyDecision) {
  testing::TempDir dir("tula-launch-loop");
  auto running = start(dir, write_launcher(dir, kStopsOnSigterm));
  // The decision would resize; the signal comes first.
  ScriptedWatcher watcher(dir.file("ready"), SegmentEnd{SegmentEnd::Kind::Resize, "resize", {}, 0}, SIGINT);
  const SegmentEnd end = run_launch(*running, watcher, kTimes);
  EXPECT_EQ(end.kind, SegmentEnd::Kind::Interrupted);
  EXPECT_EQ(end.reason, "signal " + std::to_string(SIGINT));
  EXPECT_TRUE(fs::exists(dir.file("stopped")));
}

TEST(WatchCadence, DueEveryKStepsOrAfterTheSecondsWithEnoughNewSteps) {
  WatchCadence cadence(/*every_steps=*/50, /*every_s=*/30.0);
  cadence.restart(100, 10.0);
  EXPECT_FALSE(cadence.due(149, 20.0));
  EXPECT_TRUE(cadence.due(150, 20.0));
  // Past the seconds, a watch needs kMinStepsPerWatch new steps to measure anything.
  EXPECT_FALSE(cadence.due(100 + WatchCadence::kMinStepsPerWatch - 1, 41.0));
  EXPECT_TRUE(cadence.due(100 + WatchCadence::kMinStepsPerWatch, 41.0));
  cadence.restart(150, 41.0);
  EXPECT_FALSE(cadence.due(160, 70.0));
  EXPECT_TRUE(cadence.due(160, 71.0));
}

}  // namespace
}  // namespace tula::tune
