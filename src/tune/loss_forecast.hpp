// When will the job reach its target accuracy, read off the training loss?
// The evaluations are few (a handful before a target) and each is noisy;
// the training loss comes with every step. So the forecast is two fits:
//
//   the loss curve:  log loss  = a + b log s    over the recent half of the
//                    progress so far (s in minimum steps, as in
//                    accuracy_forecast.hpp), on log-spaced bin means;
//   the link:        log error = alpha + beta log loss   between each
//                    evaluation and the training loss just before it.
//
// Together: log error = alpha + beta a + beta b log s, a power law whose
// slope comes from hundreds of steps, not from the evaluations' scatter;
// S* is where it meets 1 - target. The give-up verdict keeps the
// evaluations' own interval (accuracy_forecast.hpp): this is the point
// forecast behind the remaining time and the plan.
// No LibTorch here.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tune/accuracy_forecast.hpp"

namespace tula::tune {

struct LossPoint {
  double min_steps = 0;  // progress in minimum steps after the step
  double loss = 0;       // the step's training loss
};

struct LossForecast {
  std::optional<double> target_min_steps;  // S* (nullopt: too little to fit, or no crossing ahead)
  double loss_slope = 0;                   // b: the loss falls as s^b
  double link_slope = 0;                   // beta: the error moves as loss^beta
  std::string note;                        // what it rests on, or why there is none
};

// `steps` in order of progress; `evaluations` as for forecast_target.
LossForecast forecast_from_loss(const std::vector<LossPoint>& steps, const std::vector<AccuracyPoint>& evaluations,
                                double target);

// The point forecast the job plans with: the geometric mean of the two where
// both have one, else the one there is. Replayed on recorded runs
// (bench/forecast_replay.py) the evaluations' fit crossed too early and the
// loss' too late; their mean erred least on the development runs.
std::optional<double> combined_target_min_steps(const AccuracyForecast& by_evaluations, const LossForecast& by_loss);

}  // namespace tula::tune
