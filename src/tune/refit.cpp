#include "tune/refit.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "predict/error.hpp"
#include "predict/noise_scale.hpp"
#include "predict/stats.hpp"
#include "predict/statistical_model.hpp"

namespace tula::tune {

Refit::Refit(predict::Profile base, TuneOptions options, EpochsPrior prior)
    : base_(std::move(base)),
      options_(std::move(options)),
      prior_(std::move(prior)),
      growth_(options_.replay.noise_growth ? predict::measured_noise_growth() : predict::NoiseGrowth{}),
      epochs_floor_batch_(options_.replay.epochs_floor ? static_cast<double>(options_.training.reference_batch) : 0.0),
      train_samples_(static_cast<double>(std::max<int64_t>(1, base_.data.train_samples))) {}

void Refit::read_noise(const JobMetrics& metrics, JobView& v) const {
  v.b_noise_source = "none";
  std::optional<predict::NoiseEstimate> estimate;
  try {
    estimate = predict::estimate_noise_scale(metrics.noise_samples());  // throws FitError with too few
    v.b_noise_source = "job";
    v.noise = metrics.noise_samples();
  } catch (const predict::FitError&) {
    if (!base_.gradient_noise.empty()) {
      try {
        estimate = predict::estimate_noise_scale(base_.gradient_noise);
        v.b_noise_source = "profile";
      } catch (const predict::FitError&) {
      }
    }
  }
  if (!estimate) return;
  v.b_noise = v.b_noise_read = estimate->b_noise;
  v.read_progress = estimate->progress;
}

LogNormalEstimate Refit::prior_target(const JobView& v) const {
  const double reference = static_cast<double>(options_.training.reference_batch);
  const double examples = prior_.epochs * train_samples_;
  if (v.b_noise_read <= 0) return {examples / reference, prior_.log_sd};  // a minimum step: a step at the reference batch
  LogNormalEstimate grown;
  if (prior_.unit == EpochsPrior::Unit::MinEpochs) {
    // E_min spent at the grown B_noise: S* = (examples (a+1) s0^a / B0)^(1/(a+1)),
    // so log S* moves by 1/(a+1) of log E_min.
    grown = {predict::progress_for_examples(growth_, read_of(v), examples), prior_.log_sd / (growth_.exponent + 1)};
  } else {
    // Epochs at the reference batch: the S* whose steps there, counted at the
    // grown B_noise, are those epochs.
    const double steps = examples / reference;
    const double s = predict::progress_for_steps(growth_, read_of(v), steps, reference);
    // d log S / d log steps = steps / (S (1 + B_noise(S) / B_ref)), with
    // B_noise(S) = (1 + alpha) times the mean over [0, S] under the power law.
    const double grown_examples = predict::mean_b_noise(growth_, read_of(v), 0, s) * s;
    grown = {s, prior_.log_sd * steps / (s + (1 + growth_.exponent) * grown_examples / reference)};
  }
  if (!options_.replay.forecast_with_prior) return grown;  // as jobs before the option: on the grown axis
  // The view counts its progress (and the forecast its crossing) at the read:
  // the prior's steps at the running batch, S* (1 + mean B_noise over [0, S*] / B),
  // are that many minimum steps there.
  const double batch = static_cast<double>(v.global_batch > 0 ? v.global_batch : options_.training.reference_batch);
  const auto at_the_read = [&](double s) {
    const double steps = s * steps_per_min_step(batch, predict::mean_b_noise(growth_, read_of(v), 0, s));
    return steps / steps_per_min_step(batch, v.b_noise_read);
  };
  // The spread is carried by the map itself, through the points one sd
  // either side: the grown axis compresses the epochs' spread (by 0.6 for
  // small_cnn) and this axis, linear in steps, undoes that. Carried
  // unchanged, the range of the time left came out about half as wide as the
  // history's spread says (docs/notebook/round-17-18.md, "The oracle, round 17").
  const double wider = at_the_read(grown.median * std::exp(grown.log_sd));
  const double narrower = at_the_read(grown.median * std::exp(-grown.log_sd));
  return {at_the_read(grown.median), std::log(wider / narrower) / 2};
}

double Refit::reference_epochs_reached(const JobView& v) const {
  // In steps at the reference batch counted on the view's own axis (at the
  // read): a job that ran there gets its own epochs back.
  const double reference = static_cast<double>(options_.training.reference_batch);
  const double progress = v.crossed_min_steps.value_or(v.min_steps_done);
  return progress * steps_per_min_step(reference, v.b_noise_read) * reference / train_samples_;
}

void Refit::set_target(const std::vector<AccuracyPoint>& points, const std::vector<LossPoint>& losses,
                       JobView& v) const {
  v.forecast = forecast_target(
      points, options_.job.target_accuracy,
      options_.replay.forecast_exponent_prior ? std::optional(kRecordedCurvesExponentPrior) : std::nullopt);
  if (options_.pilot.loss_forecast) v.loss_forecast = forecast_from_loss(losses, points, options_.job.target_accuracy);
  const auto prior = prior_target(v);
  const auto forecast = combined_target_min_steps(v.forecast, v.loss_forecast);
  v.target_from_forecast = forecast.has_value();
  if (!options_.replay.forecast_with_prior) {  // as jobs before the option: one or the other, at least the progress made
    v.target_min_steps = std::max(forecast.value_or(prior.median), v.min_steps_done);
    return;
  }
  const auto estimate = forecast ? combine_estimates(prior, {*forecast, forecast_spread(v.forecast, *forecast)}) : prior;
  v.target_estimate = estimate;
  v.target_min_steps = median_beyond(estimate, v.min_steps_done);
}

double Refit::forecast_spread(const AccuracyForecast& forecast, double crossing) const {
  if (forecast.anchored) return anchored_forecast_log_sd(forecast.points);
  if (!forecast.has_interval()) return kForecastLogSdWithoutInterval;
  // Searched well past the crossing: the combined point can lie before the
  // evaluations' own, whose optimistic edge then reaches the target later.
  const auto earliest = forecast.earliest_within_interval(options_.job.target_accuracy, 10 * crossing);
  return earliest ? forecast_log_sd(crossing, *earliest) : kForecastLogSdWithoutInterval;
}

namespace {

// The running configuration's seconds per step, of them the allreduce waited
// for after backward, and the time some allreduce was in flight. The clock's:
// means over the pilot's length of steps (100 by default), since the job's
// wall time is the sum of its steps, slow ones included, and the median
// leaves their tail out (docs/notebook/round-05.md, "The oracle, round 5"); the
// means of the parts add up as the step does.
// Jobs recorded before: the median of the last 40, not split.
struct RunningStep {
  std::optional<double> iteration_s, comm_exposed_s, comm_busy_s;
};

RunningStep running_step(const JobMetrics& metrics, bool clock_times) {
  const auto steps = metrics.recent_steps(clock_times ? 100 : 40);
  if (steps.empty()) return {};
  std::vector<double> times, exposed, busy;
  for (const auto& s : steps) {
    times.push_back(s.iter_s);
    exposed.push_back(s.comm_exposed_s);
    busy.push_back(s.comm_busy_s);
  }
  if (clock_times) return {predict::mean(times), predict::mean(exposed), predict::mean(busy)};
  std::nth_element(times.begin(), times.begin() + static_cast<long>(times.size() / 2), times.end());
  return {times[times.size() / 2], std::nullopt, std::nullopt};
}

// The mean evaluation time: of the current launch alone (another launch's
// configuration evaluated its own shard at its own speed); jobs recorded
// before: of every evaluation. 0: none yet.
double running_eval_s(const JobMetrics& metrics, bool clock_times) {
  int64_t first_step = 0;
  if (clock_times) {
    if (metrics.launches().empty()) return 0;
    const size_t first = metrics.launches().back().first_step_index;
    if (first >= metrics.steps().size()) return 0;
    first_step = metrics.steps()[first].step;
  }
  double total = 0;
  int n = 0;
  for (const auto& e : metrics.evaluations()) {
    if (e.step < first_step) continue;
    total += e.eval_s;
    ++n;
  }
  return n > 0 ? total / n : 0;
}

}  // namespace

JobView Refit::view(const JobMetrics& metrics) const {
  JobView v;
  v.steps_done = metrics.last_step();
  if (!metrics.steps().empty()) v.global_batch = metrics.steps().back().global_batch;
  v.samples_done = metrics.samples();
  v.best_accuracy = metrics.best_accuracy();
  const RunningStep step = running_step(metrics, options_.replay.clock_times);
  v.iteration_s = step.iteration_s;
  v.comm_exposed_s = step.comm_exposed_s;
  v.comm_busy_s = step.comm_busy_s;
  read_noise(metrics, v);
  std::vector<AccuracyPoint> points;
  std::vector<LossPoint> losses;
  size_t next_eval = 0;
  const auto& evals = metrics.evaluations();
  for (const auto& s : metrics.steps()) {
    v.min_steps_done += min_steps_of_step(static_cast<double>(s.global_batch), v.b_noise_read, epochs_floor_batch_);
    if (!s.skipped) losses.push_back({v.min_steps_done, s.loss});
    while (next_eval < evals.size() && evals[next_eval].step <= s.step) {
      points.push_back({v.min_steps_done, evals[next_eval].test_accuracy});
      ++next_eval;
    }
  }
  v.eval_s = running_eval_s(metrics, options_.replay.clock_times);
  if (options_.to_target()) {
    v.crossed_min_steps = interpolated_crossing(points, options_.job.target_accuracy);
    set_target(points, losses, v);
    // S* lies on the view's own axis, counted at the read: a crossing read
    // off the curve already holds whatever growth the curve met, and the
    // prior was put there at the running batch. Its steps are counted at
    // the read too. Jobs before the option counted them at the read grown
    // over the rest.
    if (v.b_noise_read > 0 && !options_.replay.forecast_with_prior) {
      v.b_noise = predict::mean_b_noise(growth_, read_of(v), v.min_steps_done, v.target_min_steps);
    }
  }
  return v;
}

predict::Profile Refit::profile_with(const JobView& view, const predict::Config& running,
                                     const predict::MachineSpec& machine) const {
  predict::Profile p = base_;
  predict::PilotRun run;
  run.global_batch = running.global_batch();
  run.workers = running.workers();
  run.nodes = running.nodes;
  run.machine = machine;
  run.batch_per_worker = running.batch_per_worker;
  run.accumulation_steps = running.accumulation_steps;
  run.seconds_per_step = view.iteration_s.value_or(0.0);
  run.comm_exposed_s = view.comm_exposed_s.value_or(-1.0);
  run.comm_busy_s = view.comm_busy_s.value_or(-1.0);
  if (options_.replay.clock_times) run.eval_s = view.eval_s;
  p.pilots.clear();
  if (options_.to_target() && view.b_noise > 0) {
    // The job's noise samples stand for B_noise, and S* for the steps at the
    // running batch: [0, S*] on the view's axis, counted at the read (jobs
    // with --forecast-alone, and before it: at the read grown over it, so that
    // calibrate_statistical with the same growth gave S_min = S*). The
    // planner calibrated to those steps ranks the other configurations with
    // the growth over the whole job.
    // The same samples the view's B_noise came from, so the fit agrees with it.
    if (view.b_noise_source == "job") p.gradient_noise = view.noise;
    const double counted_at = options_.replay.forecast_with_prior
                                  ? view.b_noise_read
                                  : predict::mean_b_noise(growth_, read_of(view), 0, view.target_min_steps);
    run.steps_to_target = {view.target_min_steps * steps_per_min_step(static_cast<double>(run.global_batch), counted_at)};
    p.target_accuracy = options_.job.target_accuracy;
  } else {
    p.gradient_noise.clear();  // fixed epochs: no statistical model
  }
  if (run.seconds_per_step > 0 || run.eval_s > 0 || !run.steps_to_target.empty()) p.pilots.push_back(run);
  p.fitted = nullptr;
  return p;
}

predict::PredictorOptions Refit::predictor_options() const {
  predict::PredictorOptions o;
  o.epochs = options_.to_target() ? 0 : options_.job.epochs;
  o.draws = 200;
  o.noise_growth = growth_;
  o.epochs_floor_batch = epochs_floor_batch_;
  // The plan's front counts the evaluations the job makes (as
  // training_seconds does), not one an epoch: at 0.25 it left out three of four.
  o.evaluations_per_epoch = evaluations_per_epoch(options_);
  return o;
}

double Refit::steps_per_min_step(double global_batch, double b_noise) const {
  return predict::steps_per_min_step(global_batch, std::max(0.0, b_noise), epochs_floor_batch_);
}

double Refit::remaining_fraction(const JobView& view) const {
  if (options_.to_target()) {
    return view.target_min_steps > 0 ? std::clamp(1 - view.min_steps_done / view.target_min_steps, 0.0, 1.0) : 1.0;
  }
  const double total = options_.job.epochs * train_samples_;
  return std::clamp(1 - view.samples_done / total, 0.0, 1.0);
}

double Refit::remaining_steps(const JobView& view, const predict::Config& config) const {
  const double batch = static_cast<double>(config.global_batch());
  if (options_.to_target()) {
    if (!view.target_estimate) return steps_to_stop(view, config, view.target_min_steps);
    // The mean over equal shares of the estimate beyond the progress made.
    constexpr int kShares = 16;
    double total = 0;
    for (int i = 0; i < kShares; ++i) {
      const double p = (i + 0.5) / kShares;
      total += steps_to_stop(view, config, quantile_beyond(*view.target_estimate, view.min_steps_done, p));
    }
    return total / kShares;
  }
  return std::ceil(std::max(0.0, options_.job.epochs * train_samples_ - view.samples_done) / batch);
}

double Refit::steps_to_stop(const JobView& view, const predict::Config& config, double target_min_steps) const {
  const double batch = static_cast<double>(config.global_batch());
  const double to_crossing =
      std::max(0.0, target_min_steps - view.min_steps_done) * steps_per_min_step(batch, view.b_noise);
  return to_crossing + steps_to_next_evaluation(view, config, to_crossing);
}

double Refit::steps_to_next_evaluation(const JobView& view, const predict::Config& config, double steps) const {
  const double batch = static_cast<double>(config.global_batch());
  const double interval =
      static_cast<double>(evaluation_interval_steps(options_, base_.data.train_samples, config.global_batch()));
  // Evaluations come every `interval` steps, counted from each epoch's start
  // (or from step 0, as the trainer did before), and at each epoch's end.
  // An evaluation at the present step has been seen already.
  const double ahead = std::max(1.0, std::ceil(steps));
  const double samples_at = view.samples_done + ahead * batch;
  const double epochs_at = samples_at / train_samples_;
  const double counted = options_.replay.evaluations_from_epoch_start
                             ? std::round((epochs_at - std::floor(epochs_at + 1e-9)) * train_samples_ / batch)
                             : static_cast<double>(view.steps_done) + ahead;
  const double by_interval = std::ceil(counted / interval) * interval - counted;
  const double by_epoch = (std::ceil(epochs_at - 1e-9) * train_samples_ - samples_at) / batch;
  return ahead - steps + std::max(0.0, std::min(by_interval, std::ceil(by_epoch)));
}

double Refit::mean_b_noise(const JobView& view, double from, double to) const {
  if (view.b_noise_read <= 0) return 0;
  return predict::mean_b_noise(growth_, read_of(view), from, to);
}

double Refit::eval_seconds(const JobView& view, const predict::Breakdown& point) const {
  // The predictor's evaluation is calibrated to the running launch's (see
  // profile_with), and scaled to this configuration's shard and speed. Jobs
  // recorded before took the measured mean for every configuration.
  if (options_.replay.clock_times) return point.eval_s;
  return view.eval_s > 0 ? view.eval_s : point.eval_s;
}

double Refit::segment_seconds(double min_steps, double b_noise, const JobView& view, const predict::Config& config,
                              const predict::Predictor& predictor, const predict::MachineSpec& machine) const {
  const auto point = predictor.point(config, machine);
  const double batch = static_cast<double>(config.global_batch());
  double steps = std::max(0.0, min_steps) * steps_per_min_step(batch, b_noise);
  const double running = static_cast<double>(view.global_batch);
  if (options_.replay.forecast_with_prior && running > 0 && view.b_noise > 0) {
    // The progress axis is counted at the read (remaining_steps): a minimum
    // step at the running batch is steps_per_min_step(running, read) of its
    // steps, and another batch takes what the growth over the segment says
    // relative to it (as the planner calibrated to the running batch ranks
    // the others). Counting the segment at its grown B_noise instead put a
    // second axis beside the first: a schedule priced so saved more than the
    // whole remaining time.
    steps *= steps_per_min_step(running, view.b_noise) / steps_per_min_step(running, b_noise);
  }
  return training_seconds(view, config, point, steps);
}

double Refit::training_seconds(const JobView& view, const predict::Config& config, const predict::Breakdown& point,
                               double steps) const {
  const double epochs = steps * static_cast<double>(config.global_batch()) / train_samples_;
  return steps * point.iteration_s + epochs * evaluations_per_epoch(options_) * eval_seconds(view, point);
}

double Refit::remaining_seconds(const JobView& view, const predict::Config& config,
                                const predict::Predictor& predictor, const predict::MachineSpec& machine) const {
  const auto point = predictor.point(config, machine);
  // The test split's one reading at the end belongs to the job's time: 4 s
  // of small_cnn's 2-minute jobs on two emu-one nodes, 15 s of 4-minute jobs
  // on one emu-half (docs/notebook/round-14.md, "The oracle, round 14").
  return training_seconds(view, config, point, remaining_steps(view, config)) + point.final_test_s;
}

std::optional<records::SecondsRange> Refit::remaining_range(const JobView& view, const predict::Config& config,
                                                            const predict::Predictor& predictor,
                                                            const predict::MachineSpec& machine) const {
  if (!options_.to_target() || !view.target_estimate) return std::nullopt;
  const auto point = predictor.point(config, machine);
  const auto seconds_if_crossing_at = [&](double p) {
    const double crossing = quantile_beyond(*view.target_estimate, view.min_steps_done, p);
    return training_seconds(view, config, point, steps_to_stop(view, config, crossing)) + point.final_test_s;
  };
  const double tail = (1 - records::kRemainingRangeLevel) / 2;
  return records::SecondsRange{seconds_if_crossing_at(tail) * (1 - kTimeModelTolerance),
                               seconds_if_crossing_at(1 - tail) * (1 + kTimeModelTolerance)};
}

int64_t apply_validation_split(predict::Profile& profile, const TuneOptions& options) {
  const int64_t validation = validation_samples(options, profile.data.train_samples);
  profile.data.train_samples -= validation;
  if (validation > 0) {
    profile.data.final_test_samples = profile.data.test_samples;
    profile.data.test_samples = validation;
  }
  return validation;
}

}  // namespace tula::tune
