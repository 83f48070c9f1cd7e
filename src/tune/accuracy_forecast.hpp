// When will the job reach its target accuracy? Progress is counted in
// "minimum steps": by McCandlish et al. (2018), a step at global batch B is
// worth 1 / (1 + B_noise / B) of a step at an unlimited batch, so the steps
// done at different batches (a job that resized) add up on one axis, and
// the steps still needed at any batch B are (S* - s) (1 + B_noise / B).
//
// The error on the evaluated split (the validation split where the job has
// one, else the test set) along that axis is fitted by a power law, error = a s^-k
// (least squares on logs, later evaluations weighted more: they are nearer
// the target), and S* is where it meets 1 - target.
//
// Two or three evaluations a quarter epoch apart span too little of log s to
// fix k: their slope alone put the crossing off by a factor of 2.3 (rms in
// log) after two. With a prior on k (ExponentPrior) the slope is pulled
// toward the prior's in proportion to how little the evaluations spread, so
// one evaluation already gives a crossing (the line through it at the
// prior's slope) and the evaluations' own slope takes over as they spread
// (docs/notebook/round-57.md, "An exponent prior for the forecast").
//
// Giving a target up stops a job the user pays for, so the forecast also
// says how early the target could still come: the fit's one-sided 95%
// prediction interval for an evaluation at progress s (Student t with the
// fit's own residuals), and whether the curve has flattened (no new best
// over the last few evaluations). The watch (watch.hpp) gives up only when
// both say so.
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

// The weighted least-squares line log(error) = intercept + slope log(s),
// with what its prediction interval needs.
struct PowerLawFit {
  double intercept = 0;
  double slope = 0;         // -k
  double x_mean = 0;        // weighted mean of log(s)
  double sxx = 0;           // weighted sum of squares of log(s) about x_mean
  double weight_sum = 0;
  double next_weight = 1;   // the weight an evaluation after the last would get
  double residual_var = 0;  // weighted residual variance (per unit weight)
  int dof = 0;              // points - 2

  double log_error(double min_steps) const;
  // The lower edge of the one-sided 95% prediction interval of log(error) for
  // one evaluation at `min_steps`: the best the evidence allows. Needs dof >= 1.
  double optimistic_log_error(double min_steps) const;
};

// The slope minimizes the fit's weighted squares plus weight x (slope + exponent)^2.
// The weight is in the fit's units: the first evaluation weighs 1, the i-th i.
struct ExponentPrior {
  double exponent = 0;
  double weight = 0;
};

// Chosen on 1097 recorded validation curves (bench/forecast_on_curves.py
// --anchor-screen): the median exponent from the first evaluation to the
// crossing, and the weight of least error in the time left half way.
inline constexpr ExponentPrior kRecordedCurvesExponentPrior{0.30, 3.0};

struct AccuracyForecast {
  std::optional<double> target_min_steps;  // S*: where the fit meets the target (nullopt: no fit yet or never)
  std::optional<PowerLawFit> fit;          // two evaluations at distinct progress at least, without the prior
  bool flattened = false;                  // below the target with no new best over the last evaluations
  bool anchored = false;                   // k and S* are from the fit with an exponent prior
  double exponent = 0;                     // k
  int points = 0;                          // evaluations used
  double last_min_steps = 0;               // progress at the last evaluation used
  std::string note;                        // what the forecast rests on, for the report

  // The first progress, searched from the last evaluation up to `horizon`
  // minimum steps, at which the target lies within the prediction interval;
  // nullopt when even the interval's optimistic edge stays short of it by
  // then. Needs has_interval() (std::logic_error otherwise): with fewer
  // points the answer is "cannot tell". The interval is the evaluations'
  // own (the fit without the prior): a give-up rests on them alone.
  std::optional<double> earliest_within_interval(double target, double horizon) const;
  bool has_interval() const { return fit && fit->dof >= 1; }
};

// Minimum steps of one step at `global_batch`: 1 / steps_per_min_step
// (predict/statistical_model.hpp), with its floor below `floor_batch` (> 0).
double min_steps_of_step(double global_batch, double b_noise, double floor_batch = 0);

// Where the curve crossed `target`: between the last evaluation below it and
// the first at or above it, linear in accuracy (at the first evaluation where
// none came before it); nullopt where no evaluation reached it. The job can
// only see the target at an evaluation, so the first one at or above it is
// where it stopped, not where the crossing lay: that is up to an evaluation
// interval earlier.
std::optional<double> interpolated_crossing(const std::vector<AccuracyPoint>& points, double target);

// Needs two evaluations with progress, or one with `prior`; `target` in (0, 1).
AccuracyForecast forecast_target(const std::vector<AccuracyPoint>& points, double target,
                                 const std::optional<ExponentPrior>& prior = std::nullopt);

}  // namespace tula::tune
