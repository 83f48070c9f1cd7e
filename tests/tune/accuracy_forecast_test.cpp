#include "tune/accuracy_forecast.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tula::tune {
namespace {

TEST(AccuracyForecast, MinimumStepsOfAStepFollowTheNoiseScale) {
  EXPECT_DOUBLE_EQ(min_steps_of_step(100, 100), 0.5);
  EXPECT_DOUBLE_EQ(min_steps_of_step(300, 100), 0.75);
  EXPECT_DOUBLE_EQ(min_steps_of_step(64, 0), 1.0);  // unknown noise: every step counts whole
}

TEST(AccuracyForecast, APowerLawIsExtrapolatedToTheTarget) {
  // error = 0.5 s^-0.3: the target 0.85 (error 0.15) is at s = (0.5 / 0.15)^(1 / 0.3).
  std::vector<AccuracyPoint> points;
  for (double s : {50.0, 100.0, 200.0, 400.0}) points.push_back({s, 1 - 0.5 * std::pow(s, -0.3)});
  const auto f = forecast_target(points, 0.85);
  ASSERT_TRUE(f.target_min_steps.has_value()) << f.note;
  EXPECT_NEAR(*f.target_min_steps, std::pow(0.5 / 0.15, 1 / 0.3), 1e-6 * *f.target_min_steps);
  EXPECT_NEAR(f.exponent, 0.3, 1e-9);
  EXPECT_FALSE(f.plateau);
}

TEST(AccuracyForecast, NeedsTwoEvaluations) {
  const auto f = forecast_target({{10, 0.5}}, 0.9);
  EXPECT_FALSE(f.target_min_steps.has_value());
  EXPECT_FALSE(f.plateau);
  EXPECT_NE(f.note.find("fewer than two"), std::string::npos);
}

TEST(AccuracyForecast, AFlatCurveBelowTheTargetIsAPlateau) {
  const auto f = forecast_target({{100, 0.60}, {200, 0.70}, {300, 0.701}, {400, 0.7005}, {500, 0.701}, {600, 0.6995}},
                                 0.9);
  EXPECT_TRUE(f.plateau) << f.note;
  EXPECT_NE(f.note.find("no new best"), std::string::npos) << f.note;
}

TEST(AccuracyForecast, ANoisyRiseIsNoPlateau) {
  // A new best within the last four evaluations, with dips between.
  const auto f = forecast_target({{100, 0.70}, {200, 0.78}, {300, 0.82}, {400, 0.787}, {500, 0.80}, {600, 0.825}}, 0.85);
  EXPECT_FALSE(f.plateau) << f.note;
}

TEST(AccuracyForecast, TwoEvaluationsAreTooFewForAPlateau) {
  // One noisy dip after the first evaluation; a third point decides.
  EXPECT_FALSE(forecast_target({{100, 0.49}, {200, 0.45}}, 0.85).plateau);
  EXPECT_TRUE(forecast_target({{100, 0.49}, {200, 0.45}, {300, 0.44}}, 0.85).plateau);
}

TEST(AccuracyForecast, AFlatCurveAboveTheTargetIsNoPlateau) {
  const auto f = forecast_target({{100, 0.91}, {200, 0.911}, {300, 0.911}}, 0.9);
  EXPECT_FALSE(f.plateau) << f.note;
}

}  // namespace
}  // namespace tula::tune
