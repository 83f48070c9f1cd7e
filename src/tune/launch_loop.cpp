#include "tune/launch_loop.hpp"

#include "common/text.hpp"

namespace tula::tune {

std::string exit_words(const SegmentEnd& end) {
  switch (end.kind) {
    case SegmentEnd::Kind::Finished:
      return "finished";
    case SegmentEnd::Kind::Resize:
      return "stopped for resize";
    case SegmentEnd::Kind::GoalOutOfReach:
      return "stopped: goal out of reach";
    case SegmentEnd::Kind::Interrupted:
      return "interrupted";
    case SegmentEnd::Kind::WorkerDied:
      return "worker died: " + end.reason;
  }
  return "";
}

namespace {

// Asks the workers to stop (they checkpoint at the end of the step) and waits
// for them; those still running after the grace are killed.
SegmentEnd stop_launch(RunningLaunch& running, LaunchWatcher& watcher, const LaunchLoopTimes& times, SegmentEnd end) {
  running.request_stop();
  if (!running.wait_for(times.stop_grace)) {
    watcher.note("the workers did not stop within " +
                 common::format_duration(std::chrono::duration<double>(times.stop_grace).count()) +
                 " of SIGTERM; killed (the last periodic checkpoint is kept)");
    running.kill();
    running.wait_for(std::chrono::seconds(30));
  }
  return end;
}

SegmentEnd ended_by_workers(const RunningLaunch& running, const LaunchExit& exit) {
  SegmentEnd end;
  end.kind = exit.exit_code == 0 ? SegmentEnd::Kind::Finished : SegmentEnd::Kind::WorkerDied;
  end.reason = exit.exit_code == 0 ? "the workers finished" : running.where() + ": " + exit.description;
  return end;
}

}  // namespace

SegmentEnd run_launch(RunningLaunch& running, LaunchWatcher& watcher, const LaunchLoopTimes& times) {
  for (;;) {
    const auto exit = running.wait_for(times.poll);
    watcher.read_progress(running);
    if (exit) return ended_by_workers(running, *exit);
    if (const int signal = watcher.stop_signal(); signal != 0) {
      return stop_launch(running, watcher, times, watcher.interrupted(signal));
    }
    if (auto decision = watcher.decide()) return stop_launch(running, watcher, times, *decision);
  }
}

bool WatchCadence::due(int64_t step, double now) const {
  const int64_t new_steps = step - at_step_;
  return new_steps >= every_steps_ || (new_steps >= kMinStepsPerWatch && now - at_s_ >= every_s_);
}

}  // namespace tula::tune
