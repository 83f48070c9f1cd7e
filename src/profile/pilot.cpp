#include "profile/pilot.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "predict/error.hpp"
#include "predict/noise_scale.hpp"
#include "predict/stats.hpp"
#include "records/metrics_file.hpp"
#include "records/record_error.hpp"

namespace tula::profile {

namespace {

// Steps before this are warm-up (allocator, caches, the first collectives)
// and left out of the pilot's step time.
constexpr size_t kWarmupSteps = 2;

}  // namespace

PilotMetrics read_pilot_metrics(const std::vector<std::string>& paths, double target_accuracy) {
  PilotMetrics out;
  std::map<int64_t, std::vector<double>> steps_at;  // global batch -> steps to target per run
  std::map<int64_t, predict::PilotRun> timing_at;     // global batch -> layout and step times of its runs
  std::map<int64_t, std::vector<double>> step_s_at;
  for (const auto& path : paths) {
    std::vector<records::MetricsRecord> metrics;
    try {
      metrics = records::read_metrics_file(path);
    } catch (const records::RecordError& e) {
      throw predict::ProfileError(e.what());
    }
    const auto noise = predict::noise_samples_of(metrics);
    out.noise.insert(out.noise.end(), noise.begin(), noise.end());
    if (target_accuracy <= 0) continue;
    int64_t global_batch = 0, workers = 0, batch_per_worker = 0, accumulation_steps = 1;
    double reached_at = -1, best = 0;
    std::vector<double> step_s;  // seconds per optimizer step until the target
    for (const auto& record : metrics) {
      if (const auto* start = std::get_if<records::StartRecord>(&record)) {
        global_batch = start->global_batch;
        workers = start->workers;
        batch_per_worker = start->batch_size;
        accumulation_steps = start->accumulation_steps;
      }
      if (reached_at >= 0) continue;
      if (const auto* step = std::get_if<records::IterRecord>(&record)) step_s.push_back(step->times.iter_s);
      // Epoch-end evaluations, and the finer ones of `tula train --eval-every`.
      if (const auto e = records::evaluation_of(record)) {
        best = std::max(best, e->evaluation.test_accuracy);
        if (e->evaluation.test_accuracy >= target_accuracy) reached_at = static_cast<double>(e->step);
      }
    }
    if (global_batch <= 0) {
      out.notes.push_back(path + ": no start record with the global batch; not used as a pilot");
    } else if (reached_at <= 0) {
      out.notes.push_back(fmt::format("{}: never reached {:f} test accuracy (best {:f}); not used as a pilot", path,
                                      target_accuracy, best));
    } else {
      steps_at[global_batch].push_back(reached_at);
      // Runs of one batch with another layout than the first timed one are
      // left out of the step time (it calibrates one configuration).
      const bool layout_known = workers > 0 && batch_per_worker > 0 &&
                                workers * batch_per_worker * accumulation_steps == global_batch;
      if (layout_known && step_s.size() > kWarmupSteps) {
        auto [it, fresh] = timing_at.try_emplace(global_batch);
        if (fresh) {
          it->second.workers = workers;
          it->second.batch_per_worker = batch_per_worker;
          it->second.accumulation_steps = accumulation_steps;
        }
        if (it->second.workers == workers && it->second.batch_per_worker == batch_per_worker) {
          // A run's mean step: its wall time per step, slow steps included
          // (the median leaves out the tail the wall time pays for).
          step_s_at[global_batch].push_back(predict::mean({step_s.begin() + kWarmupSteps, step_s.end()}));
        }
      }
    }
  }
  for (auto& [batch, steps] : steps_at) {
    predict::PilotRun run;
    if (auto t = timing_at.find(batch); t != timing_at.end()) {
      run = t->second;
      run.seconds_per_step = predict::median(step_s_at[batch]);
    }
    run.global_batch = batch;
    run.steps_to_target = steps;
    out.pilots.push_back(std::move(run));
  }
  return out;
}

}  // namespace tula::profile
