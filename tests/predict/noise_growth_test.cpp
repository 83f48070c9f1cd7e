// The growth of B_noise over a run (noise_growth.hpp) on recorded runs and
// numbers worked by hand. The recorded job is small_cnn's `tula tune` (c) run
// of docs/benchmarks.md: bench/results/tune/small_cnn-sim-profile.json holds
// its 3752 gradient-noise samples (the pilot's 100 steps at 2 x 64, then 2 x 16
// to 85%) and the job as its pilot run.
#include "predict/noise_growth.hpp"

#include <gtest/gtest.h>

#include <string>

#include "predict/error.hpp"
#include "predict/fit.hpp"
#include "predict/noise_scale.hpp"
#include "predict/profile.hpp"
#include "predict/statistical_model.hpp"

namespace tula::predict {
namespace {

const Profile& recorded_job() {
  static const Profile p =
      load_profile(std::string(TULA_SOURCE_DIR) + "/bench/results/tune/small_cnn-sim-profile.json");
  return p;
}

// The pilot's steps alone: what the plan of the recorded job read.
Profile pilot_read_of_recorded_job() {
  Profile p = recorded_job();
  p.gradient_noise.resize(100);
  return p;
}

TEST(NoiseGrowth, FitReproducesTheScriptsExponentOnTheRecordedJob) {
  // bench/results/noise_growth/runs.jsonl, run small_cnn-c.metrics, axis
  // progress: 0.4385 +- 0.1178 over 37 windows of 100 steps.
  const auto windows = noise_windows(recorded_job().gradient_noise, 100);
  ASSERT_EQ(windows.size(), 37u);
  EXPECT_EQ(windows.front().global_batch, 128);  // the pilot
  EXPECT_EQ(windows.back().global_batch, 32);
  const auto fit = fit_noise_growth(windows);
  EXPECT_EQ(fit.windows, 37);
  EXPECT_NEAR(fit.se, 0.1178, 0.001);
  EXPECT_NEAR(fit.exponent, 0.4385, fit.se);
  EXPECT_NEAR(fit.exponent, 0.4385, 0.001) << "the script and the library cut and fit the windows alike";
  // B_noise grows over the job: the exponent is positive by more than 3 standard errors.
  EXPECT_GT(fit.exponent, 3 * fit.se);
}

TEST(NoiseGrowth, TooFewWindowsCannotBeFitted) {
  const auto windows = noise_windows(pilot_read_of_recorded_job().gradient_noise, 100);
  ASSERT_EQ(windows.size(), 1u);
  EXPECT_THROW(fit_noise_growth(windows), FitError);
}

TEST(NoiseGrowth, TheMeanOverProgressIsTheIntegralByHand) {
  NoiseGrowth linear;
  linear.exponent = 1;
  const NoiseRead read{100, 10};  // B_noise(s) = 10 s
  // (1/20) integral over [0, 20] of 10 s ds = 100; over [10, 30]: 10 (900 - 100) / 2 / 20 = 200.
  EXPECT_NEAR(mean_b_noise(linear, read, 0, 20), 100, 1e-9);
  EXPECT_NEAR(mean_b_noise(linear, read, 10, 30), 200, 1e-9);
  EXPECT_NEAR(mean_b_noise(linear, read, 15, 15), 150, 1e-9);  // an empty range: the value there

  NoiseGrowth root;
  root.exponent = 0.5;
  const NoiseRead at4{200, 4};  // B_noise(s) = 100 sqrt(s)
  // integral over [0, 16] of 100 s^0.5 ds = 100 (2/3) 64 = 4266.67 examples, over 16 minimum steps.
  EXPECT_NEAR(mean_b_noise(root, at4, 0, 16), 12800.0 / 3 / 16, 1e-9);
  EXPECT_NEAR(progress_for_examples(root, at4, 12800.0 / 3), 16, 1e-9);
  EXPECT_NEAR(grown_b_noise(root, at4, 16), 400, 1e-9);

  // No growth: the read throughout, and McCandlish's E_min = S_min B_noise.
  EXPECT_EQ(mean_b_noise(NoiseGrowth{}, read, 0, 1000), 100);
  EXPECT_NEAR(progress_for_examples(NoiseGrowth{}, read, 5000), 50, 1e-12);
  EXPECT_THROW(mean_b_noise(linear, {100, 0}, 0, 10), std::invalid_argument);
  EXPECT_THROW(mean_b_noise(linear, read, -1, 10), std::invalid_argument);
}

TEST(NoiseGrowth, TheEstimateSaysWhereItWasRead) {
  // The pilot's later 50 steps at 2 x 64, each 1 / (1 + B_noise / 128) minimum steps.
  const auto e = estimate_noise_scale(pilot_read_of_recorded_job().gradient_noise);
  EXPECT_NEAR(e.b_noise, 290, 1) << "docs/benchmarks.md: B_noise 290 at the plan";
  EXPECT_NEAR(e.progress, 75.5 / (1 + e.b_noise / 128), 1e-9);
  EXPECT_NEAR(noise_estimate_from_json(to_json(e), "noise").progress, e.progress, 1e-12);
}

TEST(NoiseGrowth, CalibrationWithGrowthKeepsThePilotsSteps) {
  const auto profile = pilot_read_of_recorded_job();
  const auto noise = estimate_noise_scale(profile.gradient_noise);
  const auto grown = calibrate_statistical(noise, profile.pilots, 0.85, measured_noise_growth());
  const auto as_read = calibrate_statistical(noise, profile.pilots, 0.85);
  // The recorded job: 3752 steps at B = 32. Both models give it back.
  EXPECT_NEAR(grown.steps(32), 3752, 1e-6);
  EXPECT_NEAR(as_read.steps(32), 3752, 1e-6);
  // The planned B_noise is the grown read's mean over the job's [0, S_min].
  EXPECT_NEAR(grown.b_noise(), mean_b_noise(measured_noise_growth(), {noise.b_noise, noise.progress}, 0, grown.s_min()),
              1e-6 * grown.b_noise());
  EXPECT_EQ(grown.b_noise_pilot, noise.b_noise);
  EXPECT_EQ(as_read.b_noise(), noise.b_noise);
  EXPECT_GT(grown.b_noise(), 2 * noise.b_noise);
  // Larger batches need fewer steps than the read alone says.
  EXPECT_LT(grown.steps(1024), as_read.steps(1024));
  const auto j = to_json(grown);
  EXPECT_EQ(j.at("b_noise_pilot").get<double>(), noise.b_noise);
  EXPECT_EQ(j.at("b_noise_planned").get<double>(), grown.b_noise());
  EXPECT_NEAR(statistical_model_from_json(j, "s").b_noise_pilot, noise.b_noise, 1e-12);
}

TEST(NoiseGrowth, AnEstimateWithoutItsPlaceIsTakenAsRead) {
  auto noise = estimate_noise_scale(pilot_read_of_recorded_job().gradient_noise);
  noise.progress = 0;  // as read from a profile written before the field
  const auto m = calibrate_statistical(noise, recorded_job().pilots, 0.85, measured_noise_growth());
  EXPECT_EQ(m.b_noise(), noise.b_noise);
  EXPECT_EQ(m.growth_exponent, 0);
  EXPECT_NE(m.notes.back().find("without growth"), std::string::npos);
}

}  // namespace
}  // namespace tula::predict
