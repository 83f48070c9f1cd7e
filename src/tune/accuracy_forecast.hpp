// When will the job reach its target accuracy? Progress is counted in
// "minimum steps": by McCandlish et al. (2018), a step at global batch B is
// worth 1 / (1 + B_noise / B) of a step at an unlimited batch, so the steps
// done at different batches (a job that resized) add up on one axis, and
// the steps still needed at any batch B are (S* - s) (1 + B_noise / B).
//
// The test error along that axis is fitted by a power law, error = a s^-k
// (least squares on logs, later evaluations weighted more: they are nearer
// the target), and S* is where it meets 1 - target. A curve that has stopped
// falling (k near 0, or no new best over the last four evaluations) is a plateau: the
// target is unreachable at this rate of progress.
// No LibTorch here.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace tula::tune {

struct AccuracyPoint {
  double min_steps = 0;  // progress in minimum steps when evaluated
  double accuracy = 0;
};

struct AccuracyForecast {
  std::optional<double> target_min_steps;  // S*: where the fit meets the target (nullopt: no fit yet or never)
  bool plateau = false;                    // no measurable progress: the target looks unreachable
  double exponent = 0;                     // k
  int points = 0;                          // evaluations used
  std::string note;                        // what the forecast rests on, for the report
};

// Minimum steps of one step at `global_batch`.
double min_steps_of_step(double global_batch, double b_noise);

// Needs two evaluations with progress; `target` in (0, 1).
AccuracyForecast forecast_target(const std::vector<AccuracyPoint>& points, double target);

}  // namespace tula::tune
