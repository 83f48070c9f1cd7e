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
