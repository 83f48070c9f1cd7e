// The remaining work toward a target accuracy runs to an evaluation: the job
// can only see the target when it evaluates. And the first plan of a recorded
// job, from its pilot's noise read, with and without the growth of B_noise.
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <optional>

#include "helpers/temp_dir.hpp"
#include "plan/local_catalog.hpp"
#include "plan/planner.hpp"
#include "predict/noise_growth.hpp"
#include "tune/refit.hpp"
#include "tune/target_estimate.hpp"
#include "tune/watch.hpp"

namespace tula::tune {
namespace {

const std::string kRecordedJob = std::string(TULA_SOURCE_DIR) + "/bench/results/tune/";

// The first `steps` optimizer steps of a gzipped metrics file (and the
// records between them) written to `path`.
void write_first_steps(const std::string& gz, int64_t steps, const std::string& path) {
  gzFile f = gzopen(gz.c_str(), "rb");
  ASSERT_TRUE(f) << gz;
  std::ofstream out(path);
  char line[1 << 16];
  while (gzgets(f, line, sizeof line)) {
    const auto r = nlohmann::json::parse(line);
    if (r.value("type", "") == "iter" && r.value("step", int64_t{0}) > steps) break;
    out << line;
  }
  gzclose(f);
}

// The knee re-plan of small_cnn's recorded `tula tune` (c) job at the end of
// its pilot (100 steps at 2 x 64), on its own profile and machine, with
// `options`; `epochs_floor_batch` is its models' floor.
Replan pilot_end_replan(const TuneOptions& options, double* epochs_floor_batch = nullptr) {
  testing::TempDir dir;
  const auto metrics_path = (dir.path() / "metrics.jsonl").string();
  write_first_steps(kRecordedJob + "small_cnn-c.metrics.jsonl.gz", 100, metrics_path);
  auto profile = predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json");
  const Refit refit(profile, options);
  if (epochs_floor_batch != nullptr) *epochs_floor_batch = refit.predictor_options().epochs_floor_batch;
  JobMetrics metrics(metrics_path);
  metrics.poll();
  RunningJob pilot;
  pilot.config = {1, 2, 64, 1};
  pilot.train_samples = static_cast<double>(profile.data.train_samples);
  return replan_remainder(refit, metrics, pilot, plan::local_catalog(profile), plan::Objective::knee(), {});
}

std::optional<plan::Plan> first_plan(bool noise_growth, bool epochs_floor, JobView& view) {
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  options.replay.noise_growth = noise_growth;
  options.replay.epochs_floor = epochs_floor;
  options.watch.eval_every_epochs = 0.5;  // the recorded job read its test split every half epoch
  const auto r = pilot_end_replan(options);
  EXPECT_TRUE(r.plan) << r.fit_error << r.infeasible;
  view = r.view;
  return r.plan;
}

int64_t first_plans_global_batch(bool noise_growth, bool epochs_floor, JobView& view) {
  const auto plan = first_plan(noise_growth, epochs_floor, view);
  return plan ? plan->chosen_candidate().config.global_batch() : 0;
}

// The plan's fastest time at a global batch (0: none there).
double fastest_at(const plan::Plan& plan, int64_t global_batch) {
  double best = 0;
  for (const auto& c : plan.candidates) {
    if (c.config.global_batch() == global_batch && (best == 0 || c.time_s < best)) best = c.time_s;
  }
  return best;
}

TEST(Refit, TheFirstPlanGrowsThePilotsNoiseReadAndLeansToLargerBatches) {
  JobView as_read, grown;
  const auto read_plan = first_plan(false, false, as_read);
  const auto grown_plan = first_plan(true, false, grown);
  ASSERT_TRUE(read_plan && grown_plan);
  const int64_t before = read_plan->chosen_candidate().config.global_batch();
  const int64_t now = grown_plan->chosen_candidate().config.global_batch();
  // docs/benchmarks.md: the job planned 2 x 16 (B = 32) with B_noise 290 read in the pilot.
  EXPECT_EQ(as_read.b_noise_source, "job");
  EXPECT_NEAR(as_read.b_noise, 290, 1);
  EXPECT_EQ(as_read.b_noise, as_read.b_noise_read);
  EXPECT_EQ(before, 32);
  // Grown over the job's progress, the read makes the larger batches
  // cheaper against B = 32 (the planner ranks with the growth; the view
  // counts the running batch's steps at the read, the axis its S* lies on).
  // With the job's evaluations counted (every half epoch, more of them at a
  // larger batch's epochs) 32 and 64 come out level here, within 0.2%.
  EXPECT_EQ(grown.b_noise_read, as_read.b_noise);
  EXPECT_EQ(grown.b_noise, grown.b_noise_read);
  EXPECT_GE(now, before);
  for (const int64_t b : {64, 128, 256}) {
    const double read_ratio = fastest_at(*read_plan, b) / fastest_at(*read_plan, 32);
    const double grown_ratio = fastest_at(*grown_plan, b) / fastest_at(*grown_plan, 32);
    EXPECT_LT(grown_ratio, read_ratio) << "B = " << b << " against 32";
  }
  EXPECT_LT(fastest_at(*grown_plan, 64), 1.002 * fastest_at(*grown_plan, 32));
}

TEST(Refit, WithTheEpochsFloorTheFirstPlanStaysAtTheRatesReferenceBatchOrAbove) {
  // The law alone, read or grown, saves epochs below the reference batch
  // (128, where the rate was tuned) and the plan goes to B = 32 as read; held
  // to 128's epochs below it, the batches below lose that saving.
  JobView floored_view, law_view;
  const int64_t law = first_plans_global_batch(false, false, law_view);
  const int64_t floored = first_plans_global_batch(false, true, floored_view);
  EXPECT_EQ(law, 32);
  EXPECT_GE(floored, 128);
  EXPECT_EQ(floored_view.b_noise, law_view.b_noise);  // the same read: only the steps per progress differ
  JobView grown_view;
  EXPECT_GE(first_plans_global_batch(true, true, grown_view), 128);
}

// With the epochs fixed, the re-plan holds the batch to the noise scale the
// job itself read (plan/batch_cap.hpp), not to the steps-an-epoch default.
TEST(Refit, AFixedEpochsRePlanHoldsTheBatchToTheJobsOwnNoiseScale) {
  TuneOptions options;
  options.job.target_accuracy = 0;
  options.job.epochs = 3;
  double epochs_floor_batch = 0;
  const auto r = pilot_end_replan(options, &epochs_floor_batch);
  ASSERT_TRUE(r.plan) << r.fit_error << r.infeasible;
  ASSERT_GT(r.view.b_noise_read, 0) << "the pilot's steps give no noise scale";
  const auto& cap = r.plan->batch_cap;
  EXPECT_EQ(cap.basis, "noise scale") << cap.reason;
  EXPECT_EQ(cap.max_global_batch, std::max<int64_t>(static_cast<int64_t>(std::floor(r.view.b_noise_read)),
                                                    static_cast<int64_t>(epochs_floor_batch)))
      << cap.reason;
  for (const auto& c : r.plan->candidates) ASSERT_LE(c.config.global_batch(), cap.max_global_batch);
}

Refit refit_for_fashion_mnist() {
  predict::Profile profile;
  profile.data.train_samples = 60000;
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  options.watch.eval_every_epochs = 0.5;  // every 938 steps at batch 32
  options.replay.epochs_floor = false;  // a minimum step is one step at B_noise 0 (view_at)
  return Refit(profile, options);
}

JobView view_at(int64_t step, double crossing_in_steps) {
  JobView v;
  v.steps_done = step;
  v.samples_done = static_cast<double>(step) * 32;
  v.b_noise = 0;  // a minimum step is one step: the crossing is in plain steps
  v.min_steps_done = static_cast<double>(step);
  v.target_min_steps = v.min_steps_done + crossing_in_steps;
  return v;
}

predict::Config two_by_sixteen() {
  predict::Config c;
  c.workers_per_node = 2;
  c.batch_per_worker = 16;
  return c;
}

// The recorded (c) job's view after its first `steps` steps, planned with `prior`.
// The recorded job fitted its evaluations alone (no exponent prior) unless told.
JobView recorded_view(int64_t steps, const EpochsPrior& prior, bool forecast_with_prior, bool exponent_prior = false) {
  testing::TempDir dir;
  const auto metrics_path = (dir.path() / "metrics.jsonl").string();
  write_first_steps(kRecordedJob + "small_cnn-c.metrics.jsonl.gz", steps, metrics_path);
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  options.replay.forecast_with_prior = forecast_with_prior;
  options.replay.forecast_exponent_prior = exponent_prior;
  const Refit refit(predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json"), options, prior);
  JobMetrics metrics(metrics_path);
  metrics.poll();
  return refit.view(metrics);
}

// The steps at batch 128 (the pilot's, the reference) that S* on the view's
// axis stands for: each minimum step there is 1 + B_noise read / 128 steps.
double steps_at_128(const JobView& v) { return v.target_min_steps * (1 + v.b_noise_read / 128); }

TEST(Refit, BeforeTheCurveThePriorsEMinSetsTheCrossing) {
  // At the pilot's end (no evaluation yet), E_min of one epoch against the
  // stated two, each spent at the grown B_noise: S_g with the integral of
  // B_noise over [0, S_g] = E_min, and S_g + that integral / 128 steps at 128.
  const auto profile = predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json");
  const double n = static_cast<double>(profile.data.train_samples);
  const auto growth = predict::measured_noise_growth();
  for (const double e_min : {1.0, 2.0}) {
    const auto v = recorded_view(100, {EpochsPrior::Unit::MinEpochs, e_min, 0.3, 3, "E_min"}, true);
    ASSERT_FALSE(v.target_from_forecast);
    ASSERT_GT(v.b_noise_read, 0);
    const predict::NoiseRead read{v.b_noise_read, v.read_progress};
    const double s_g = predict::progress_for_examples(growth, read, e_min * n);
    EXPECT_NEAR(steps_at_128(v), s_g + e_min * n / 128, 1e-6 * steps_at_128(v)) << "E_min " << e_min;
  }
}

TEST(Refit, AHistorysEpochsAtTheReferenceBatchArePlannedThereExactly) {
  // Earlier jobs needed 3 epochs at batch 128: at 128 the prior is those epochs.
  testing::TempDir dir;
  const auto metrics_path = (dir.path() / "metrics.jsonl").string();
  write_first_steps(kRecordedJob + "small_cnn-c.metrics.jsonl.gz", 100, metrics_path);
  const auto profile = predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json");
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  const Refit refit(profile, options, {EpochsPrior::Unit::ReferenceEpochs, 3.0, 0.25, 4, "four earlier jobs"});
  JobMetrics metrics(metrics_path);
  metrics.poll();
  const auto v = refit.view(metrics);
  const double n = static_cast<double>(profile.data.train_samples);
  EXPECT_NEAR(steps_at_128(v), 3.0 * n / 128, 1e-3 * n / 128);
  // So the remaining steps at 128 are those less the pilot's 100, to the next evaluation after them.
  predict::Config at_128;
  at_128.workers_per_node = 2;
  at_128.batch_per_worker = 64;
  const double left = refit.remaining_steps(v, at_128);
  EXPECT_GE(left, 3.0 * n / 128 - 100 - 1e-3 * n / 128);
  EXPECT_LE(left, 3.0 * n / 128 - 100 + static_cast<double>(evaluation_interval_steps(options, profile.data.train_samples, 128)));
  // And the pilot's 100 steps at 2 x 64 are worth 100 steps there: what its history line would say.
  EXPECT_NEAR(refit.reference_epochs_reached(v), 100 * 128 / n, 1e-9);
}

TEST(Refit, ThePriorsSpreadReachesTheViewsAxisAsTheEpochsOneSpreadEitherSideDo) {
  // The history's spread is in epochs at the reference batch; on the view's
  // axis (steps at the running batch, counted at the read) the crossing's
  // spread is what the same map makes of the epochs one spread either side.
  // Carried from the grown axis unchanged it was about 0.6 of that here.
  const double epochs = 3.0, log_sd = 0.25;
  const auto crossing = [&](double e, double sd) {
    const auto v = recorded_view(100, {EpochsPrior::Unit::ReferenceEpochs, e, sd, 20, "history"}, true);
    EXPECT_FALSE(v.target_from_forecast);
    return *v.target_estimate;
  };
  const auto estimate = crossing(epochs, log_sd);
  const double mapped = std::log(crossing(epochs * std::exp(log_sd), log_sd).median /
                                 crossing(epochs * std::exp(-log_sd), log_sd).median) / 2;
  EXPECT_NEAR(estimate.log_sd, mapped, 0.02 * mapped);
}

TEST(Refit, TheRemainingStepsAreTheMeanStopOverTheCrossingsEstimate) {
  // A job at 128 that has not started, B_noise unknown (a minimum step is a
  // step), S* known to a thousandth: where its median lies on an evaluation,
  // half the estimate stops there and half one interval later, so the mean
  // is half an interval past it; the stop after the median alone said the
  // evaluation itself. Between two evaluations both say the next one.
  const auto profile = predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json");
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  const Refit refit(profile, options);
  predict::Config at_128;
  at_128.workers_per_node = 2;
  at_128.batch_per_worker = 64;
  const double interval = static_cast<double>(evaluation_interval_steps(options, profile.data.train_samples, 128));
  ASSERT_LT(3 * interval * 128, static_cast<double>(profile.data.train_samples));  // three within the first epoch
  JobView v;
  v.global_batch = 128;
  const auto with_median_at = [&](double median) {
    v.target_estimate = LogNormalEstimate{median, 1e-3};
    v.target_min_steps = median;
    auto at_median = v;
    at_median.target_estimate.reset();
    return std::pair{refit.remaining_steps(v, at_128), refit.remaining_steps(at_median, at_128)};
  };
  const auto [on_mean, on_median] = with_median_at(2 * interval);
  EXPECT_NEAR(on_mean, 2.5 * interval, 1e-9);
  EXPECT_NEAR(on_median, 2 * interval, 1e-9);
  const auto [between_mean, between_median] = with_median_at(2.5 * interval);
  EXPECT_NEAR(between_mean, 3 * interval, 1e-9);
  EXPECT_NEAR(between_median, 3 * interval, 1e-9);
}

TEST(Refit, AJobThatReachedItsTargetLeavesWhereItCrossedIt) {
  // The recorded job, at 32 from step 101 on, read 0.8431 at step 3,450 and
  // 0.8509 at 3,752: 0.85 was crossed 0.0069 / 0.0078 of the way between
  // them, and that is what its history line says (in epochs at the reference
  // batch), not the evaluation at 3,752 that saw it.
  const auto profile = predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json");
  const double n = static_cast<double>(profile.data.train_samples);
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  const Refit refit(profile, options);
  const auto v = recorded_view(3752, stated_epochs_prior(), true);  // the recording's last step
  ASSERT_TRUE(v.crossed_min_steps.has_value());
  const double crossed_step = 3450 + (0.85 - 0.8431) / (0.8509 - 0.8431) * (3752 - 3450);
  const double per_step = min_steps_of_step(32, v.b_noise_read, 128);  // each step at 32, on the view's axis
  const double crossed = v.min_steps_done - (3752 - crossed_step) * per_step;
  EXPECT_NEAR(*v.crossed_min_steps, crossed, 1e-9 * crossed);
  // A minimum step is 1 + B_noise / 128 steps at the reference batch 128.
  const auto epochs_at_128 = [&](double min_steps) { return min_steps * (1 + v.b_noise_read / 128) * 128 / n; };
  EXPECT_NEAR(refit.reference_epochs_reached(v), epochs_at_128(crossed), 1e-9 * epochs_at_128(crossed));
  EXPECT_LT(refit.reference_epochs_reached(v), epochs_at_128(v.min_steps_done - 30 * per_step));  // crossed 35 steps before 3,752
  // Before the target: the job's progress, as before.
  const auto before = recorded_view(3000, stated_epochs_prior(), true);
  EXPECT_FALSE(before.crossed_min_steps.has_value());
  EXPECT_NEAR(refit.reference_epochs_reached(before),
              before.min_steps_done * (1 + before.b_noise_read / 128) * 128 / n, 1e-9);
}

TEST(Refit, AForecastFromTwoEvaluationsIsWeighedWithThePrior) {
  // 1,600 steps: evaluations at 938 and 1,575, so a forecast without an interval.
  const auto alone = recorded_view(1600, stated_epochs_prior(), false);
  ASSERT_TRUE(alone.target_from_forecast);
  ASSERT_EQ(alone.forecast.points, 2);
  ASSERT_FALSE(alone.forecast.has_interval());
  // With a prior that knows nothing, the forecast stands, less what the progress made rules out.
  const auto vague = recorded_view(1600, {EpochsPrior::Unit::MinEpochs, 2.0, 50.0, 0, "vague"}, true);
  EXPECT_NEAR(vague.target_min_steps,
              median_beyond({alone.target_min_steps, kForecastLogSdWithoutInterval}, alone.min_steps_done),
              1e-3 * alone.target_min_steps);
  // A prior of fewer epochs pulls the crossing earlier, of more epochs later.
  const auto fewer = recorded_view(1600, {EpochsPrior::Unit::MinEpochs, 0.5, 0.3, 3, "fewer"}, true);
  const auto more = recorded_view(1600, {EpochsPrior::Unit::MinEpochs, 8.0, 0.3, 3, "more"}, true);
  EXPECT_LT(fewer.target_min_steps, vague.target_min_steps);
  EXPECT_GT(more.target_min_steps, vague.target_min_steps);
  // The crossing read off the curve counts its steps at the read it was fitted
  // on; alone (as jobs before) at the read grown over the rest.
  EXPECT_EQ(vague.b_noise, vague.b_noise_read);
  EXPECT_GT(alone.b_noise, alone.b_noise_read);
}

TEST(Refit, WithTheExponentPriorOneEvaluationForecastsAndIsWeighedByTheCurvesSpread) {
  // 1,000 steps: one evaluation (at 938). Without the prior there is no forecast yet.
  const EpochsPrior vague{EpochsPrior::Unit::MinEpochs, 2.0, 50.0, 0, "vague"};
  const auto without = recorded_view(1000, vague, true, false);
  ASSERT_EQ(without.forecast.points, 1);
  EXPECT_FALSE(without.target_from_forecast);
  const auto one = recorded_view(1000, vague, true, true);
  ASSERT_TRUE(one.target_from_forecast) << one.forecast.note;
  ASSERT_TRUE(one.forecast.anchored);
  EXPECT_NEAR(one.forecast.exponent, kRecordedCurvesExponentPrior.exponent, 1e-12);
  ASSERT_TRUE(one.target_estimate.has_value());
  // Weighed with a prior that knows nothing, the spread is the curves' after one evaluation.
  EXPECT_NEAR(one.target_estimate->log_sd, kAnchoredForecastLogSd[0], 1e-3);
  EXPECT_NEAR(one.target_estimate->median, *one.forecast.target_min_steps, 1e-3 * *one.forecast.target_min_steps);
  // With a second evaluation the spread narrows to the curves' after two, and
  // a tight prior of few epochs still pulls the crossing toward it.
  const auto two = recorded_view(1600, vague, true, true);
  ASSERT_EQ(two.forecast.points, 2);
  ASSERT_TRUE(two.target_estimate.has_value());
  EXPECT_NEAR(two.target_estimate->log_sd, kAnchoredForecastLogSd[1], 1e-3);
  const auto pulled = recorded_view(1600, {EpochsPrior::Unit::MinEpochs, 0.5, 0.1, 3, "fewer"}, true, true);
  EXPECT_LT(pulled.target_min_steps, two.target_min_steps);
}

// The job's data as the runner counts it: the split out of training, the
// curve on the split, the test split read once at the end; and that reading
// is part of the time left (its seconds from the evaluation model, on the
// test split's samples sharded over the workers).
TEST(Refit, TheTestSplitsReadingAtTheEndIsPartOfTheTimeLeft) {
  const auto recorded = predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json");
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  auto profile = recorded;
  options.watch.validation_size = 0;
  EXPECT_EQ(apply_validation_split(profile, options), 0);
  EXPECT_EQ(profile.data.train_samples, recorded.data.train_samples);
  EXPECT_EQ(profile.data.test_samples, recorded.data.test_samples);
  EXPECT_EQ(profile.data.final_test_samples, 0);
  const Refit without(profile, options);

  options.watch.validation_size = 2000;
  profile = recorded;
  EXPECT_EQ(apply_validation_split(profile, options), 2000);
  EXPECT_EQ(profile.data.train_samples, recorded.data.train_samples - 2000);
  EXPECT_EQ(profile.data.test_samples, 2000);
  EXPECT_EQ(profile.data.final_test_samples, recorded.data.test_samples);
  const Refit with(profile, options);

  const auto machine = predict::profiled_machine(profile);
  JobView v;
  v.global_batch = 128;
  v.target_min_steps = 500;
  predict::Config one, two;
  one.batch_per_worker = 128;
  two.workers_per_node = 2;
  two.batch_per_worker = 64;
  const auto predictor = predict::Predictor::from_profile(profile, with.predictor_options());
  const auto plain = predict::Predictor::from_profile(recorded, without.predictor_options());
  for (const auto& c : {one, two}) {
    const auto point = predictor.point(c, machine);
    ASSERT_GT(point.final_test_s, 0);
    // Five times the split's samples take more than one pass over the split, and no more than five.
    EXPECT_GT(point.final_test_s, point.eval_s);
    EXPECT_LE(point.final_test_s, 5 * point.eval_s * (1 + 1e-9));
    const double training = with.remaining_steps(v, c) * point.iteration_s;
    const double epochs = with.remaining_steps(v, c) * 128 / static_cast<double>(profile.data.train_samples);
    EXPECT_NEAR(with.remaining_seconds(v, c, predictor, machine),
                training + epochs / options.watch.eval_every_epochs * point.eval_s + point.final_test_s, 1e-9);
    EXPECT_EQ(plain.point(c, machine).final_test_s, 0);
  }
  EXPECT_LT(predictor.point(two, machine).final_test_s, predictor.point(one, machine).final_test_s)
      << "two workers read half the test split each";
}

// The time left as a range: the same seconds as the time left, with the stop
// after the crossing's 10% and 90% points beyond the progress made; as wide
// as the estimate is, none where there is no estimate.
TEST(Refit, TheTimeLeftsRangeSpansWhereTheCrossingMayLie) {
  const auto profile = predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json");
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  const Refit refit(profile, options);
  const auto machine = predict::profiled_machine(profile);
  const auto predictor = predict::Predictor::from_profile(profile, refit.predictor_options());
  predict::Config at_128;
  at_128.workers_per_node = 2;
  at_128.batch_per_worker = 64;
  const double interval = static_cast<double>(evaluation_interval_steps(options, profile.data.train_samples, 128));
  JobView v;
  v.global_batch = 128;
  v.target_min_steps = 8 * interval;
  EXPECT_FALSE(refit.remaining_range(v, at_128, predictor, machine)) << "no estimate of S*, no range";

  const auto range_for = [&](double log_sd) {
    v.target_estimate = LogNormalEstimate{8 * interval, log_sd};
    const auto range = refit.remaining_range(v, at_128, predictor, machine);
    EXPECT_TRUE(range);
    return range.value_or(records::SecondsRange{});
  };
  const auto wide = range_for(0.3);
  const double remaining = refit.remaining_seconds(v, at_128, predictor, machine);
  EXPECT_LT(wide.low_s, remaining);
  EXPECT_GT(wide.high_s, remaining);
  // Each end is the time left with the stop after that quantile of S*.
  const auto point = predictor.point(at_128, machine);
  const auto seconds_to_stop_after = [&](double crossing) {
    JobView at = v;
    at.target_estimate.reset();
    at.target_min_steps = crossing;
    const double steps = refit.remaining_steps(at, at_128);
    return steps * point.iteration_s +
           steps * 128 / static_cast<double>(profile.data.train_samples) / options.watch.eval_every_epochs *
               point.eval_s +
           point.final_test_s;
  };
  const double z90 = 1.2815515655446004;  // the standard normal's 90% point
  // Widened by the time model's own error.
  EXPECT_NEAR(wide.low_s, (1 - kTimeModelTolerance) * seconds_to_stop_after(8 * interval * std::exp(-z90 * 0.3)),
              1e-6 * remaining);
  EXPECT_NEAR(wide.high_s, (1 + kTimeModelTolerance) * seconds_to_stop_after(8 * interval * std::exp(z90 * 0.3)),
              1e-6 * remaining);
  // A tighter estimate, a narrower range; one known to a thousandth stops
  // at one evaluation either way, and only the time model's error is left.
  const auto narrow = range_for(0.1);
  EXPECT_GT(narrow.low_s, wide.low_s);
  EXPECT_LT(narrow.high_s, wide.high_s);
  v.target_estimate = LogNormalEstimate{8.5 * interval, 1e-3};
  const auto known = refit.remaining_range(v, at_128, predictor, machine);
  ASSERT_TRUE(known);
  EXPECT_NEAR(known->low_s / (1 - kTimeModelTolerance), known->high_s / (1 + kTimeModelTolerance),
              1e-9 * known->high_s);
  // Toward fixed epochs there is no crossing to range over.
  TuneOptions epochs = options;
  epochs.job.target_accuracy = 0;
  epochs.job.epochs = 3;
  EXPECT_FALSE(Refit(profile, epochs).remaining_range(v, at_128, predictor, machine));
}

TEST(Refit, RemainingStepsRunToTheEvaluationAfterTheCrossing) {
  const auto refit = refit_for_fashion_mnist();
  // Crossing at step 900: the next evaluation is at 938 (half an epoch).
  EXPECT_DOUBLE_EQ(refit.remaining_steps(view_at(800, 100), two_by_sixteen()), 138);
  // Crossing at step 1785: the epoch ends first, at step 1875 (60000 / 32).
  EXPECT_DOUBLE_EQ(refit.remaining_steps(view_at(1685, 100), two_by_sixteen()), 190);
  // In the second epoch the interval counts from its start (step 1875): crossing at 2775, evaluated at 2813.
  EXPECT_DOUBLE_EQ(refit.remaining_steps(view_at(2700, 75), two_by_sixteen()), 113);
}

// The step time is the mean of the running launch's steps, and the
// evaluation time its evaluations' (another launch evaluated another shard).
TEST(Refit, TheViewTimesTheRunningLaunchAlone) {
  testing::TempDir dir;
  const auto path = (dir.path() / "metrics.jsonl").string();
  auto iter = [](int step, int workers, double iter_s) {
    return fmt::format(R"({{"type":"iter","step":{},"global_batch":128,"workers":{},"iter_s":{},"loss":1.0,"time":{}}})"
                       "\n",
                       step, workers, iter_s, step);
  };
  auto eval = [](int step, double eval_s) {
    return fmt::format(R"({{"type":"eval","epoch":0,"step":{},"test_accuracy":0.5,"test_loss":1.0,"eval_s":{},"time":{}}})"
                       "\n",
                       step, eval_s, step);
  };
  std::string text = R"({"type":"start","global_batch":128,"workers":2,"time":0})" "\n";
  for (int s = 1; s <= 10; ++s) text += iter(s, 2, 0.1);
  text += eval(10, 2.0);
  text += R"({"type":"start","global_batch":128,"workers":1,"time":11})" "\n";
  for (int s = 11; s <= 20; ++s) text += iter(s, 1, s == 15 ? 0.8 : 0.2);  // one slow step among nine
  {
    std::ofstream out(path);
    out << text;
  }
  const auto refit = refit_for_fashion_mnist();
  JobMetrics metrics(path);
  metrics.poll();
  auto v = refit.view(metrics);
  // Steps 13-20 (a launch's first two pay one-time costs): seven of 0.2 s and one of 0.8 s.
  ASSERT_TRUE(v.iteration_s.has_value());
  EXPECT_NEAR(*v.iteration_s, (7 * 0.2 + 0.8) / 8, 1e-9);
  EXPECT_EQ(v.eval_s, 0) << "the pilot's two-worker evaluation is not the one-worker launch's";
  {
    std::ofstream out(path, std::ios::app);
    out << eval(20, 4.0);
  }
  metrics.poll();
  v = refit.view(metrics);
  EXPECT_DOUBLE_EQ(v.eval_s, 4.0);
}

// The view splits the running step as the metrics did (the allreduce waited
// for after backward, the time some allreduce was in flight), and the profile
// it calibrates with carries the parts beside the step.
TEST(Refit, TheViewSplitsTheStepAndItsPilotCarriesTheParts) {
  testing::TempDir dir;
  const auto path = (dir.path() / "metrics.jsonl").string();
  std::string text = R"({"type":"start","global_batch":128,"workers":2,"time":0})" "\n";
  for (int s = 1; s <= 10; ++s) {
    text += fmt::format(R"({{"type":"iter","step":{},"global_batch":128,"workers":2,"iter_s":{},"comm_exposed_s":{},)"
                        R"("comm_busy_s":0.15,"loss":1.0,"time":{}}})"
                        "\n",
                        s, s % 2 ? 0.3 : 0.5, s % 2 ? 0.1 : 0.2, s);
  }
  {
    std::ofstream out(path);
    out << text;
  }
  const auto refit = refit_for_fashion_mnist();
  JobMetrics metrics(path);
  metrics.poll();
  const auto v = refit.view(metrics);
  // Steps 3-10: four of each kind.
  ASSERT_TRUE(v.iteration_s && v.comm_exposed_s && v.comm_busy_s);
  EXPECT_NEAR(*v.iteration_s, 0.4, 1e-9);
  EXPECT_NEAR(*v.comm_exposed_s, 0.15, 1e-9);
  EXPECT_NEAR(*v.comm_busy_s, 0.15, 1e-9);
  predict::MachineSpec machine;
  machine.name = "node";
  const auto p = refit.profile_with(v, {2, 1, 64, 1}, machine);
  ASSERT_EQ(p.pilots.size(), 1u);
  EXPECT_NEAR(p.pilots[0].seconds_per_step, 0.4, 1e-9);
  EXPECT_NEAR(p.pilots[0].comm_exposed_s, 0.15, 1e-9);
  EXPECT_NEAR(p.pilots[0].comm_busy_s, 0.15, 1e-9);
  EXPECT_EQ(p.pilots[0].nodes, 2);
}

// A schedule's segment at the running batch is counted on the same axis as
// the remaining steps (the read's), whatever B_noise grows to over it; with
// --forecast-alone it is counted at the grown B_noise, as before.
TEST(Refit, AScheduleSegmentAtTheRunningBatchIsCountedAtTheRead) {
  const auto profile = predict::load_profile(kRecordedJob + "small_cnn-sim-profile.json");
  const auto machine = predict::profiled_machine(profile);
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  JobView v;
  v.global_batch = 128;
  v.b_noise = v.b_noise_read = 300;
  const predict::Config running{1, 2, 64, 1};
  for (const bool with_prior : {true, false}) {
    options.replay.forecast_with_prior = with_prior;
    const Refit refit(profile, options);
    const auto predictor = predict::Predictor::from_profile(refit.base(), refit.predictor_options());
    const double at_read = refit.segment_seconds(100, 300, v, running, predictor, machine);
    const double grown = refit.segment_seconds(100, 1200, v, running, predictor, machine);
    if (with_prior) {
      EXPECT_NEAR(grown, at_read, 1e-9 * at_read) << "the running batch's steps are the read's";
    } else {
      EXPECT_NEAR(grown / at_read, (1 + 1200.0 / 128) / (1 + 300.0 / 128), 1e-9) << "counted at the grown B_noise";
    }
  }
}

TEST(Refit, AJobRecordedBeforeCountsItsEvaluationsFromStepZero) {
  predict::Profile profile;
  profile.data.train_samples = 60000;
  TuneOptions options;
  options.job.target_accuracy = 0.85;
  options.watch.eval_every_epochs = 0.5;
  options.replay.evaluations_from_epoch_start = false;  // as tune_options_from_json reads such a job
  options.replay.epochs_floor = false;                  // and so
  const Refit refit(profile, options);
  // Crossing at 2775: the trainer of then evaluated at 3 x 938 = 2814.
  EXPECT_DOUBLE_EQ(refit.remaining_steps(view_at(2700, 75), two_by_sixteen()), 114);
}

TEST(Refit, ACrossingForecastInThePastWaitsForTheNextEvaluation) {
  const auto refit = refit_for_fashion_mnist();
  // At an evaluation step (938) that missed the target, the next chance is 1875 (epoch end).
  EXPECT_DOUBLE_EQ(refit.remaining_steps(view_at(938, 0), two_by_sixteen()), 937);
}

}  // namespace
}  // namespace tula::tune
