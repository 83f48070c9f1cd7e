// Statistical efficiency: optimizer steps and examples needed to reach a
// target as a function of the global batch B (McCandlish et al. 2018, eq. 2.11
// and sec. 2.3):
//   S(B) = S_min (1 + B_noise / B),   E(B) = E_min (1 + B / B_noise),
//   E_min = S_min B_noise.
// Two ways to pin down (S_min, B_noise), in order of preference:
//   pilots:   steps to the target measured at 3+ global batches; S is linear
//             in 1/B (S = S_min + E_min / B), fitted directly;
//   calibrated: B_noise from the gradient-noise estimator and S_min from pilot
//             runs at any batch, S_min = S_pilot / (1 + B_noise / B_pilot).
//             With a growth law (noise_growth.hpp) the estimator's read is
//             grown to the mean B_noise over the job's progress [0, S_min].
// Below a floor batch (the batch the rate was tuned at) the calibrated law
// may be held to that batch's epochs: see steps_per_min_step.
#pragma once
#include <string>
#include <vector>

#include "predict/noise_growth.hpp"
#include "predict/noise_scale.hpp"
#include "predict/profile.hpp"
#include "predict/stats.hpp"

namespace tula::predict {

// Run-to-run spread of steps-to-target assumed when a pilot was run once.
inline constexpr double kAssumedPilotSpread = 0.10;

// Optimizer steps per minimum step at global batch B: 1 + B_noise / B, the
// law's. With `floor_batch` > 0 and B below it: floor_batch / B + B_noise / B,
// so that a batch below floor_batch needs no fewer examples (epochs) than
// floor_batch itself. Why: the law's saving at small batches assumes a rate
// tuned for each batch; with a rate tuned at floor_batch and scaled down from
// it (AGS's noise gain, or a linear rule), small_cnn's batches of a quarter
// and a half of it saved no epochs on the oracle grid's two seeds (1.00 and
// 0.92 of floor_batch's, the law 0.91 and 0.94), and plans made with the law
// went to the smallest batches for that saving (docs/notebook/round-02.md, "Why the
// batches are too small").
double steps_per_min_step(double global_batch, double b_noise, double floor_batch = 0);

struct StatisticalModel {
  double target_accuracy = 0;
  ParamBlock params;  // {"s_min", "b_noise"}
  std::string source;  // "pilots" or "noise+pilot"
  std::vector<std::string> notes;
  // "noise+pilot": the estimator's B_noise as read (params' b_noise is the one
  // planned with: the read grown over the job, or the read itself), and the
  // growth exponent applied (0: none). 0 and 0 for "pilots".
  double b_noise_pilot = 0;
  double growth_exponent = 0;
  // Below this global batch no fewer epochs than at it (steps_per_min_step);
  // 0: the law alone.
  double epochs_floor_batch = 0;

  static double steps(double global_batch, double s_min, double b_noise, double floor_batch) {
    return s_min * steps_per_min_step(global_batch, b_noise, floor_batch);
  }
  double steps(double global_batch) const {
    return steps(global_batch, params.value(0), params.value(1), epochs_floor_batch);
  }
  double examples(double global_batch) const { return steps(global_batch) * global_batch; }
  double s_min() const { return params.value(0); }
  double b_noise() const { return params.value(1); }
  double e_min() const { return s_min() * b_noise(); }
};

// S_min from pilots with B_noise held at the noise estimate; the covariance
// of (S_min, B_noise) by the delta method from the pilots' spread and the
// estimate's standard error. Throws FitError without pilots.
// With `growth`, B_noise is the mean of the grown read over [0, S_min], solved
// with S_min (one pilot: S_pilot = integral over [0, S_min] of (1 + B_noise(s)
// / B_pilot) ds exactly); its standard error scales with it. An estimate that
// does not say where it was read (progress 0) is taken as read, noted.
// `epochs_floor_batch` > 0: the pilots and the model count steps below it
// with steps_per_min_step's floor.
StatisticalModel calibrate_statistical(const NoiseEstimate& noise, const std::vector<PilotRun>& pilots,
                                       double target_accuracy, const NoiseGrowth& growth = {},
                                       double epochs_floor_batch = 0);

// Least squares on S = S_min + E_min (1/B) over every pilot repeat (relative
// weights); throws FitError with fewer than 3 distinct global batches or a
// fit that makes S_min or B_noise non-positive.
StatisticalModel fit_statistical_from_pilots(const std::vector<PilotRun>& pilots, double target_accuracy);

nlohmann::json to_json(const StatisticalModel& m);
StatisticalModel statistical_model_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tula::predict
