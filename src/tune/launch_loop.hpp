// The launch loop: one launch of the workers, from its start to its end,
// polled until the workers exit, a stop signal arrives, or the job decides
// to end it (a resize, the goal out of reach); a launch ended from here is
// asked to stop with a checkpoint and killed if it does not. What the job
// decides at each poll is the watcher's; this file only runs the launch.
// No LibTorch here.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "predict/predictor.hpp"
#include "tune/backend.hpp"

namespace tula::tune {

// How a launch of the workers ended, as the runner sees it.
struct SegmentEnd {
  enum class Kind { Finished, Resize, GoalOutOfReach, WorkerDied, Interrupted } kind = Kind::Finished;
  std::string reason;
  predict::Config next;  // Resize
  size_t next_machine = 0;
};

// The words a segment's record ends with.
std::string exit_words(const SegmentEnd& end);

// What the launch loop asks of the job while its launch runs.
class LaunchWatcher {
 public:
  virtual ~LaunchWatcher() = default;
  // After each poll interval, the workers running or just ended: read what
  // they wrote (metrics, the bill, the progress shown) and how `running`
  // stands (waiting in a queue, or not).
  virtual void read_progress(const RunningLaunch& running) = 0;
  // Then, with the workers still running and no stop signal: an end here
  // stops the launch (a re-plan, the goal out of reach).
  virtual std::optional<SegmentEnd> decide() = 0;
  // A stop signal's number, 0 while none arrived.
  virtual int stop_signal() const = 0;
  // The end a stop signal gives the launch (its reason names how to go on).
  virtual SegmentEnd interrupted(int signal) const = 0;
  // A line for the job's report.
  virtual void note(const std::string& text) = 0;
};

struct LaunchLoopTimes {
  std::chrono::milliseconds poll{300};         // between reads of the metrics
  std::chrono::milliseconds stop_grace{120000};  // a stopped launch's checkpoint and exit
};

// Runs `running` to its end: how it ended, with the watcher told at every poll.
SegmentEnd run_launch(RunningLaunch& running, LaunchWatcher& watcher, const LaunchLoopTimes& times = {});

// When the next watch is due: every `every_steps` new steps, or after
// `every_s` seconds with at least kMinStepsPerWatch new steps (a timed watch
// on fewer measures too little).
class WatchCadence {
 public:
  static constexpr int64_t kMinStepsPerWatch = 5;
  WatchCadence(int64_t every_steps, double every_s) : every_steps_(every_steps), every_s_(every_s) {}
  // Counts from `step` at job time `now` (the launch's first, or the last watch).
  void restart(int64_t step, double now) {
    at_step_ = step;
    at_s_ = now;
  }
  bool due(int64_t step, double now) const;

 private:
  int64_t every_steps_;
  double every_s_;
  int64_t at_step_ = 0;
  double at_s_ = 0;
};

}  // namespace tula::tune
