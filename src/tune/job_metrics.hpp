// What a running job has measured so far, read incrementally from the
// metrics file its rank 0 writes (`tula train --metrics`, JSON lines): steps
// with their times and gradient statistics, test evaluations, and the start
// of each launch. A relaunch resumes from a checkpoint and may redo steps
// the crash lost: a step number seen again replaces everything from it on.
// No LibTorch here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "predict/profile.hpp"
#include "records/metrics_file.hpp"

namespace tula::tune {

struct StepMeasurement {
  int64_t step = 0;  // optimizer steps done, this one included
  int64_t global_batch = 0;
  int64_t workers = 1;
  double iter_s = 0;
  double comm_exposed_s = 0;  // the allreduce it waited for after backward
  double comm_busy_s = 0;     // the time some allreduce was in flight
  double loss = 0;  // training loss of the step's batch (rank 0's)
  double local_grad_sq = 0, global_grad_sq = 0;
  bool skipped = false;
  double time = 0;     // wall-clock (seconds since the Unix epoch) when it was written
  double samples = 0;  // training samples consumed up to and including this step
  std::optional<predict::NoiseSample> noise;  // its gradient-noise sample, where it gives one
};

struct EvaluationMeasurement {
  int64_t step = 0;
  double samples = 0;  // training samples consumed when it ran
  double test_accuracy = 0;
  double test_loss = 0;
  double eval_s = 0;
  double time = 0;
};

struct LaunchStart {
  int64_t global_batch = 0;
  int64_t workers = 0;
  int64_t steps_per_epoch = 0;
  int64_t train_samples = 0;
  std::string evaluated_on = "test";  // the split the launch's evaluations read
  double time = 0;
  size_t first_step_index = 0;  // index into steps() of its first step
};

class JobMetrics {
 public:
  explicit JobMetrics(std::string path) : tail_(std::move(path)) {}
  // Reads the records completed since the last call; true when any was new.
  bool poll();
  // Lines that were not records (a worker killed mid-line), skipped.
  int64_t skipped_lines() const { return tail_.skipped_lines(); }
  const std::string& first_problem() const { return tail_.first_problem(); }

  const std::vector<StepMeasurement>& steps() const { return steps_; }
  const std::vector<EvaluationMeasurement>& evaluations() const { return evaluations_; }
  const std::vector<LaunchStart>& launches() const { return launches_; }
  int64_t last_step() const { return steps_.empty() ? 0 : steps_.back().step; }
  double samples() const { return steps_.empty() ? 0.0 : steps_.back().samples; }
  std::optional<double> best_accuracy() const;
  // "validation" when the evaluations read a split held out of the training set.
  std::string evaluated_on() const { return launches_.empty() ? "test" : launches_.back().evaluated_on; }
  // The one test-split evaluation after a run on a validation split ended by itself.
  const std::optional<EvaluationMeasurement>& final_test() const { return final_test_; }

  // The last `count` steps of the current launch, latest first (its first
  // two skipped: they pay one-time costs; skipped steps left out); empty when
  // fewer than `at_least`.
  std::vector<StepMeasurement> recent_steps(size_t count, size_t at_least = 5) const;
  // Their iteration times.
  std::vector<double> recent_iteration_times(size_t count, size_t at_least = 5) const;
  // The gradient-noise samples of every step with two batch sizes.
  std::vector<predict::NoiseSample> noise_samples() const;

 private:
  void take(const records::MetricsRecord& record);
  // An evaluation (of the curve, or the final test) as measured now.
  EvaluationMeasurement measured(int64_t step, const records::Evaluation& e, double time) const;

  records::MetricsTail tail_;
  std::vector<StepMeasurement> steps_;
  std::vector<EvaluationMeasurement> evaluations_;
  std::vector<LaunchStart> launches_;
  std::optional<EvaluationMeasurement> final_test_;
};

}  // namespace tula::tune
