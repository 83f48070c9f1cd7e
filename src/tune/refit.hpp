// The runner's models, re-fitted from the job's own measurements (online, as
// Pollux does): the profile stays the prior for configurations the job has
// not run, and what the job measured overrides it where it has.
//   - iteration time: the running configuration's recent median step time
//     enters the profile as a timed pilot, so the predictor scales its
//     compute model to match it (predictor.hpp, pilot calibration);
//   - noise scale: every step with two batch sizes is a gradient-noise sample;
//     the read grows over the job (predict/noise_growth.hpp, unless
//     --no-noise-growth): the rest of the job is planned with the read's mean
//     over the progress still to make;
//   - steps to the target: a prior for E_min (the stated one, or earlier
//     jobs' of the same setup: job_history.hpp) gives S* before the job has
//     a curve; the accuracy forecast (accuracy_forecast.hpp) and the
//     training-loss forecast (loss_forecast.hpp) on the minimum-steps axis,
//     their combination weighed against the prior by their spreads
//     (target_estimate.hpp), after. S* enters as the running configuration's
//     steps to the target. Giving up reads the accuracy forecast's own
//     interval only.
// No LibTorch here.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "plan/catalog.hpp"
#include "predict/noise_growth.hpp"
#include "predict/predictor.hpp"
#include "predict/profile.hpp"
#include "records/tune_report.hpp"
#include "tune/accuracy_forecast.hpp"
#include "tune/job_metrics.hpp"
#include "tune/loss_forecast.hpp"
#include "tune/target_estimate.hpp"
#include "tune/tune_options.hpp"

namespace tula::tune {

// The profile's data as the job counts it, for every model the job plans
// with: a validation split (validation_samples) comes out of the training
// set, so an epoch is what is left; the curve's evaluations read the split;
// and the test split is read once when training ends (the trainer's
// --final-test). Returns the split's samples (0: none; the curve reads the
// test split and nothing is read at the end). Throws std::invalid_argument
// as validation_samples does.
int64_t apply_validation_split(predict::Profile& profile, const TuneOptions& options);

// Where the job stands, distilled from its metrics.
struct JobView {
  // The B_noise the remaining steps are counted at: the read (S* lies on the
  // axis counted at it); with --forecast-alone (and before it): toward a target,
  // the read's mean over [min_steps_done, target_min_steps] under the growth
  // law. 0: unknown.
  double b_noise = 0;
  double b_noise_read = 0;       // the estimator's B_noise, as read (0: unknown)
  double read_progress = 0;      // where it was read, in minimum steps
  std::string b_noise_source;    // of the read: "job" (its own steps), "profile", "none"
  std::vector<predict::NoiseSample> noise;  // the job's, when the source is "job"
  double min_steps_done = 0;     // progress on the minimum-steps axis, each step counted at the read
  double samples_done = 0;
  int64_t steps_done = 0;
  int64_t global_batch = 0;      // of the last step (0: none yet)
  AccuracyForecast forecast;     // the evaluations' (its interval decides a give-up)
  LossForecast loss_forecast;    // the training loss'
  double target_min_steps = 0;   // S*: the prior, weighed with the forecast once there is one (target mode)
  // S*'s estimate before the progress made rules its low end out (its median
  // beyond that is target_min_steps); nullopt with --forecast-alone.
  std::optional<LogNormalEstimate> target_estimate;
  bool target_from_forecast = false;
  // Toward a target the job reached: where its curve crossed it
  // (interpolated_crossing, accuracy_forecast.hpp), on the same axis.
  std::optional<double> crossed_min_steps;
  std::optional<double> iteration_s;  // the running configuration's recent mean step (median: jobs before)
  // Of it, the mean allreduce waited for after backward, and the mean time
  // some allreduce was in flight (nullopt: jobs before, whose median step is
  // not split): the predictor calibrates its compute to the rest of the step
  // and its communication to these.
  std::optional<double> comm_exposed_s, comm_busy_s;
  // The running configuration's mean evaluation time (its launch's
  // evaluations; 0: none yet): the predictor's evaluation model is calibrated
  // to it, as the compute model to the step.
  double eval_s = 0;
  std::optional<double> best_accuracy;
};

// The time model's own error in the time left, with the crossing known: 80%
// of the watches of round 15's twelve jobs within 9.2% (small_cnn) and 10.7%
// (LeNet-5). The range's ends are stops at evaluations, so a range over the
// crossing alone held the time left at 15 of 36 watches, most misses a few
// seconds past an end (docs/notebook/round-15-16.md, "The oracle, rounds 15 and 16").
inline constexpr double kTimeModelTolerance = 0.10;

class Refit {
 public:
  // `prior`: the examples the target needs before the job's own curve says
  // (target_estimate.hpp; E_min with growth is the integral of B_noise over
  // the minimum steps).
  Refit(predict::Profile base, TuneOptions options, EpochsPrior prior = stated_epochs_prior());

  JobView view(const JobMetrics& metrics) const;
  // The base profile with the job's measurements added (see above), taken
  // at `running` on nodes of `machine`.
  predict::Profile profile_with(const JobView& view, const predict::Config& running,
                                const predict::MachineSpec& machine) const;
  predict::PredictorOptions predictor_options() const;

  // Share of the whole job's work still to do (1 at the start): the same for
  // every configuration, so a full-job plan ranks the remainder correctly.
  double remaining_fraction(const JobView& view) const;
  // Optimizer steps still needed at `config`'s global batch. Toward a target
  // accuracy they run to the first evaluation at or after the crossing, since
  // the job can only see the target at an evaluation: the mean of that over
  // S*'s estimate (beyond the progress made), where the view has one. The
  // evaluation after S*'s median alone moved a whole interval as the median
  // passed an evaluation, and a history of crossings puts the median near
  // one (docs/notebook/round-13.md, "The oracle, round 13").
  double remaining_steps(const JobView& view, const predict::Config& config) const;
  // Seconds still needed at `config`: steps x its predicted step time, plus
  // evaluations and the test split's one reading at the end.
  double remaining_seconds(const JobView& view, const predict::Config& config, const predict::Predictor& predictor,
                           const predict::MachineSpec& machine) const;
  // How far the seconds still needed may lie from remaining_seconds: the
  // same seconds with the stop after S*'s 10% and 90% quantiles beyond the
  // progress made (records::kRemainingRangeLevel), a range over where the
  // crossing lies, each end widened by kTimeModelTolerance for the time
  // model's own error. A job's crossing scatters over seeds more than its
  // curve before half tells (docs/benchmarks/decisions.md, "What the curve says at
  // half"), so the time left is a range before it is a number. nullopt where
  // the view has no estimate of S* (fixed epochs, --forecast-alone).
  std::optional<records::SecondsRange> remaining_range(const JobView& view, const predict::Config& config,
                                                        const predict::Predictor& predictor,
                                                        const predict::MachineSpec& machine) const;

  // B_noise's mean over progress [from, to] (minimum steps) under the growth
  // law, from the view's read; 0 without a read.
  double mean_b_noise(const JobView& view, double from, double to) const;
  // Seconds to make `min_steps` of progress at `config` where B_noise
  // averages `b_noise` over it: steps x the predicted step time, plus the
  // evaluations among them (a part of the job, so no wait for the next one).
  // On the read's axis (forecast_with_prior) the steps are the running
  // batch's at the view's B_noise, scaled to `config`'s batch by the growth.
  double segment_seconds(double min_steps, double b_noise, const JobView& view, const predict::Config& config,
                         const predict::Predictor& predictor, const predict::MachineSpec& machine) const;

  const predict::Profile& base() const { return base_; }
  const EpochsPrior& prior() const { return prior_; }
  // Where the job crossed its target (its progress where it has not), in
  // epochs at --reference-batch (a prior's ReferenceEpochs): what a job that
  // reached its target leaves in the job history. The crossing, not the
  // evaluation that saw it: the prior's S* is rounded up to the next
  // evaluation where the remaining steps are counted, so a history of the
  // evaluations' epochs, up to an interval late each, counted that interval
  // twice (docs/notebook/round-13.md, "The oracle, round 13"). A job that
  // ran at that batch gets its own epochs.
  double reference_epochs_reached(const JobView& view) const;
  // The growth law the re-fit applies (none with --no-noise-growth).
  const predict::NoiseGrowth& growth() const { return growth_; }
  // Optimizer steps per minimum step at `global_batch` where B_noise is
  // `b_noise`, with the epochs floor the job plans with (if any).
  double steps_per_min_step(double global_batch, double b_noise) const;

 private:
  // The view's noise read: the job's own as soon as it has one, the profile's before.
  void read_noise(const JobMetrics& metrics, JobView& v) const;
  // Toward a target: S*, the prior weighed with the forecast (alone before one exists).
  void set_target(const std::vector<AccuracyPoint>& points, const std::vector<LossPoint>& losses, JobView& v) const;
  predict::NoiseRead read_of(const JobView& v) const { return {v.b_noise_read, v.read_progress}; }
  // The prior's S*, in minimum steps at the view's noise read.
  LogNormalEstimate prior_target(const JobView& v) const;
  // The log sd of a forecast crossing at `crossing`, from the evaluations' interval.
  double forecast_spread(const AccuracyForecast& forecast, double crossing) const;

  // One evaluation's seconds at the configuration `point` was predicted for.
  double eval_seconds(const JobView& view, const predict::Breakdown& point) const;
  // `steps` at `config` (predicted as `point`), with the evaluations among them.
  double training_seconds(const JobView& view, const predict::Config& config, const predict::Breakdown& point,
                          double steps) const;
  // Steps to the first evaluation at or after a crossing at `target_min_steps`.
  double steps_to_stop(const JobView& view, const predict::Config& config, double target_min_steps) const;
  // Steps from `steps` ahead of the present to the next evaluation after them.
  double steps_to_next_evaluation(const JobView& view, const predict::Config& config, double steps) const;

  predict::Profile base_;
  TuneOptions options_;
  EpochsPrior prior_;
  predict::NoiseGrowth growth_;
  double epochs_floor_batch_ = 0;  // the rate's reference batch with --epochs-floor (default), else 0
  double train_samples_ = 0;
};

}  // namespace tula::tune
