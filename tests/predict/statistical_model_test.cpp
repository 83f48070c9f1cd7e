#include "predict/statistical_model.hpp"

#include <gtest/gtest.h>

#include "predict/error.hpp"

namespace tula::predict {
namespace {

TEST(Statistical, StepsAndExamplesFollowMcCandlish) {
  StatisticalModel m;
  m.params.names = {"s_min", "b_noise"};
  m.params.value = Eigen::Vector2d(1000, 500);
  m.params.cov = Eigen::Matrix2d::Zero();
  EXPECT_DOUBLE_EQ(m.steps(500), 2000);          // at B = B_noise: twice the minimum steps
  EXPECT_DOUBLE_EQ(m.examples(500), 2 * m.e_min());  // ... and twice the minimum examples
  EXPECT_DOUBLE_EQ(m.e_min(), 500000);
  for (double B : {16.0, 128.0, 4096.0}) {
    // E(B) = E_min (1 + B / B_noise) is the same curve as S(B) B.
    EXPECT_NEAR(m.examples(B), m.e_min() * (1 + B / 500), 1e-6);
  }
  EXPECT_GT(m.steps(64), m.steps(128));
}

TEST(Statistical, CalibratesSMinFromOnePilotAndTheNoiseScale) {
  NoiseEstimate n;
  n.b_noise = 400;
  n.se = 40;
  n.dof = 9;
  // Truth S_min = 1000: at B = 200 the pilot needs 1000 (1 + 2) = 3000 steps.
  const auto m = calibrate_statistical(n, {{200, {3000}}}, 0.9);
  EXPECT_NEAR(m.s_min(), 1000, 1e-9);
  EXPECT_EQ(m.b_noise(), 400);
  // A larger B_noise means more of the pilot's steps were noise: S_min falls.
  EXPECT_LT(m.params.cov(0, 1), 0);
  EXPECT_GT(m.params.se("s_min"), 0);
  ASSERT_FALSE(m.notes.empty());
  EXPECT_NE(m.notes[0].find("assumed"), std::string::npos);  // one repeat: spread assumed
  EXPECT_THROW(calibrate_statistical(n, {}, 0.9), FitError);
}

TEST(Statistical, BelowTheFloorBatchNoFewerEpochsThanAtIt) {
  // Without a floor the law: 1 + B_noise / B.
  EXPECT_DOUBLE_EQ(steps_per_min_step(32, 96), 4);
  EXPECT_DOUBLE_EQ(steps_per_min_step(32, 96, 0), 4);
  // Floor 128: at 32 a minimum step takes 128 / 32 + 96 / 32 = 7 steps, so
  // the examples (7 x 32 = 224) equal 128's (1.75 x 128); above the floor the law.
  EXPECT_DOUBLE_EQ(steps_per_min_step(32, 96, 128), 7);
  EXPECT_DOUBLE_EQ(steps_per_min_step(32, 96, 128) * 32, steps_per_min_step(128, 96, 128) * 128);
  EXPECT_DOUBLE_EQ(steps_per_min_step(256, 96, 128), steps_per_min_step(256, 96));

  StatisticalModel m;
  m.params.names = {"s_min", "b_noise"};
  m.params.value = Eigen::Vector2d(1000, 500);
  m.params.cov = Eigen::Matrix2d::Zero();
  m.epochs_floor_batch = 128;
  EXPECT_DOUBLE_EQ(m.examples(16), m.examples(128));
  EXPECT_DOUBLE_EQ(m.examples(64), m.examples(128));
  EXPECT_DOUBLE_EQ(m.examples(512), m.e_min() * (1 + 512.0 / 500));
  EXPECT_GT(m.steps(64), m.steps(128));  // still more steps below the floor: twice, to the same examples

  // Kept in the fitted model's JSON; an older one without it has no floor.
  auto j = to_json(m);
  EXPECT_DOUBLE_EQ(statistical_model_from_json(j, "m").epochs_floor_batch, 128);
  j.erase("epochs_floor_batch");
  EXPECT_DOUBLE_EQ(statistical_model_from_json(j, "m").epochs_floor_batch, 0);
}

TEST(Statistical, CalibrationBelowTheFloorCountsThePilotsStepsWithIt) {
  NoiseEstimate n;
  n.b_noise = 400;
  n.se = 40;
  n.dof = 9;
  // Truth S_min = 1000 with floor 200: a pilot at B = 100 needs
  // 1000 (200 / 100 + 400 / 100) = 6000 steps; at or above the floor the law.
  const auto below = calibrate_statistical(n, {{100, {6000}}}, 0.9, {}, 200);
  EXPECT_NEAR(below.s_min(), 1000, 1e-9);
  EXPECT_EQ(below.epochs_floor_batch, 200);
  EXPECT_LT(below.params.cov(0, 1), 0);
  const auto at = calibrate_statistical(n, {{200, {3000}}}, 0.9, {}, 200);
  EXPECT_NEAR(at.s_min(), 1000, 1e-9);
  bool noted = false;
  for (const auto& note : at.notes) noted = noted || note.find("no fewer epochs") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Statistical, FitsBothParametersFromPilotsAtSeveralBatches) {
  const double s_min = 800, bn = 300;
  std::vector<PilotRun> pilots;
  for (int64_t B : {64, 128, 256, 512, 1024}) {
    const double s = s_min * (1 + bn / static_cast<double>(B));
    pilots.push_back({B, {s * 1.02, s * 0.98}});
  }
  const auto m = fit_statistical_from_pilots(pilots, 0.9);
  EXPECT_NEAR(m.s_min(), s_min, 3 * m.params.se("s_min") + 1);
  EXPECT_NEAR(m.b_noise(), bn, 3 * m.params.se("b_noise") + 1);
  EXPECT_EQ(m.source, "pilots");
}

TEST(Statistical, PilotsThatContradictTheModelAreRejected) {
  // More steps at larger batches: no positive S_min, E_min fits.
  std::vector<PilotRun> pilots = {{64, {1000}}, {256, {2000}}, {1024, {4000}}};
  EXPECT_THROW(fit_statistical_from_pilots(pilots, 0.9), FitError);
  EXPECT_THROW(fit_statistical_from_pilots({{64, {1000}}, {128, {900}}}, 0.9), FitError);  // two batches
}

}  // namespace
}  // namespace tula::predict
