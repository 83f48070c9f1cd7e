#include "tune/accuracy_forecast.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tula::tune {
namespace {

TEST(AccuracyForecast, MinimumStepsOfAStepFollowTheNoiseScale) {
  EXPECT_DOUBLE_EQ(min_steps_of_step(100, 100), 0.5);
  EXPECT_DOUBLE_EQ(min_steps_of_step(300, 100), 0.75);
  EXPECT_DOUBLE_EQ(min_steps_of_step(64, 0), 1.0);  // unknown noise: every step counts whole
  EXPECT_DOUBLE_EQ(min_steps_of_step(32, 96, 128), 1.0 / 7);  // below the floor: 128 / 32 + 96 / 32 steps each
  EXPECT_DOUBLE_EQ(min_steps_of_step(300, 100, 128), 0.75);   // above it: the law
}

TEST(AccuracyForecast, APowerLawIsExtrapolatedToTheTarget) {
  // error = 0.5 s^-0.3: the target 0.85 (error 0.15) is at s = (0.5 / 0.15)^(1 / 0.3).
  std::vector<AccuracyPoint> points;
  for (double s : {50.0, 100.0, 200.0, 400.0}) points.push_back({s, 1 - 0.5 * std::pow(s, -0.3)});
  const auto f = forecast_target(points, 0.85);
  ASSERT_TRUE(f.target_min_steps.has_value()) << f.note;
  EXPECT_NEAR(*f.target_min_steps, std::pow(0.5 / 0.15, 1 / 0.3), 1e-6 * *f.target_min_steps);
  EXPECT_NEAR(f.exponent, 0.3, 1e-9);
  EXPECT_FALSE(f.flattened);
}

TEST(AccuracyForecast, TheCrossingLiesBetweenTheEvaluationsAroundTheTarget) {
  const std::vector<AccuracyPoint> curve{{100, 0.70}, {200, 0.80}, {300, 0.84}, {400, 0.88}};
  // 0.85 is a quarter of the way from 0.84 to 0.88: a quarter of the interval
  // past 300, not at 400 where an evaluation first saw it.
  EXPECT_NEAR(interpolated_crossing(curve, 0.85).value(), 325, 1e-9);
  EXPECT_NEAR(interpolated_crossing(curve, 0.84).value(), 300, 1e-9);  // reached exactly at an evaluation
  EXPECT_NEAR(interpolated_crossing(curve, 0.60).value(), 100, 1e-9);  // at the first: nothing below it to go by
  EXPECT_FALSE(interpolated_crossing(curve, 0.90).has_value());
  // A dip after the crossing does not move it: the first evaluation at or above decides.
  EXPECT_NEAR(interpolated_crossing({{100, 0.70}, {200, 0.90}, {300, 0.80}, {400, 0.95}}, 0.85).value(), 175, 1e-9);
}

TEST(AccuracyForecast, NeedsTwoEvaluations) {
  const auto f = forecast_target({{10, 0.5}}, 0.9);
  EXPECT_FALSE(f.target_min_steps.has_value());
  EXPECT_FALSE(f.flattened);
  EXPECT_NE(f.note.find("fewer than two"), std::string::npos);
}

TEST(AccuracyForecast, WithAnExponentPriorOneEvaluationGivesTheLineThroughItAtThePriorsSlope) {
  const ExponentPrior prior{0.3, 3.0};
  const auto f = forecast_target({{100, 0.75}}, 0.85, prior);
  ASSERT_TRUE(f.target_min_steps.has_value()) << f.note;
  EXPECT_TRUE(f.anchored);
  EXPECT_FALSE(f.fit.has_value());  // no interval, no give-up from one evaluation
  EXPECT_NEAR(f.exponent, 0.3, 1e-12);
  // 0.25 (100 / S*)^0.3 = 0.15
  EXPECT_NEAR(*f.target_min_steps, 100 * std::pow(0.25 / 0.15, 1 / 0.3), 1e-9 * *f.target_min_steps);
  EXPECT_NE(f.note.find("exponent prior 0.3"), std::string::npos) << f.note;
  EXPECT_NE(f.note.find("over 1 evaluation "), std::string::npos) << f.note;
  EXPECT_FALSE(forecast_target({}, 0.85, prior).target_min_steps.has_value());
}

TEST(AccuracyForecast, TheEvaluationsOwnExponentTakesOverAsTheySpreadInProgress) {
  // error = 0.5 s^-0.6 read at s = 50 and 100, and then far on: the fitted
  // exponent lies between the prior's and the curve's, nearer the curve's the
  // wider the evaluations spread, and the interval stays the evaluations' own.
  const ExponentPrior prior{0.3, 3.0};
  const auto exact = [](double s) { return AccuracyPoint{s, 1 - 0.5 * std::pow(s, -0.6)}; };
  const auto near = forecast_target({exact(50), exact(100)}, 0.99, prior);
  std::vector<AccuracyPoint> wide;
  for (double s = 50; s <= 50 * 4096; s *= 4) wide.push_back(exact(s));
  const auto far = forecast_target(wide, 0.999, prior);
  EXPECT_GT(near.exponent, 0.3);
  EXPECT_LT(near.exponent, far.exponent);
  EXPECT_LT(far.exponent, 0.6);
  EXPECT_GT(far.exponent, 0.55);
  ASSERT_TRUE(far.fit.has_value());
  EXPECT_NEAR(-far.fit->slope, 0.6, 1e-9);
  // A prior of no weight is the fit alone.
  const auto alone = forecast_target({exact(50), exact(100)}, 0.99, ExponentPrior{0.3, 0.0});
  EXPECT_NEAR(alone.exponent, 0.6, 1e-9);
}

TEST(AccuracyForecast, AFlatCurveBelowTheTargetHasFlattened) {
  const auto f = forecast_target({{100, 0.60}, {200, 0.70}, {300, 0.701}, {400, 0.7005}, {500, 0.701}, {600, 0.6995}},
                                 0.9);
  EXPECT_TRUE(f.flattened) << f.note;
  EXPECT_NE(f.note.find("no new best"), std::string::npos) << f.note;
}

TEST(AccuracyForecast, ANoisyRiseHasNotFlattened) {
  // A new best within the last four evaluations, with dips between.
  const auto f = forecast_target({{100, 0.70}, {200, 0.78}, {300, 0.82}, {400, 0.787}, {500, 0.80}, {600, 0.825}}, 0.85);
  EXPECT_FALSE(f.flattened) << f.note;
}

TEST(AccuracyForecast, ThreeEvaluationsAreTooFewToCallACurveFlat) {
  // One noisy dip after the first evaluation: a flat curve takes a window of evaluations.
  EXPECT_FALSE(forecast_target({{100, 0.49}, {200, 0.45}, {300, 0.44}}, 0.85).flattened);
  EXPECT_FALSE(forecast_target({{100, 0.49}, {200, 0.45}, {300, 0.44}}, 0.85).target_min_steps.has_value());
}

TEST(AccuracyForecast, TwoEvaluationsGiveAForecastButNoInterval) {
  const auto f = forecast_target({{100, 0.70}, {200, 0.76}}, 0.85);
  ASSERT_TRUE(f.target_min_steps.has_value()) << f.note;
  EXPECT_FALSE(f.has_interval());
  EXPECT_THROW((void)f.earliest_within_interval(0.85, 1e6), std::logic_error);
}

TEST(AccuracyForecast, AnExactPowerLawHasAnIntervalOfNoWidth) {
  // error = 0.5 s^-0.3 meets 95% (error 0.05) at s = 10^(1 / 0.3), past the last evaluation at 400.
  std::vector<AccuracyPoint> points;
  for (double s : {50.0, 100.0, 200.0, 400.0}) points.push_back({s, 1 - 0.5 * std::pow(s, -0.3)});
  const auto f = forecast_target(points, 0.95);
  ASSERT_TRUE(f.has_interval());
  const double crossing = *f.target_min_steps;
  ASSERT_NEAR(crossing, std::pow(10.0, 1 / 0.3), 1e-6 * crossing);
  const double horizon = 10 * crossing;
  const auto earliest = f.earliest_within_interval(0.95, horizon);
  ASSERT_TRUE(earliest.has_value());
  // The search grid is log-spaced from the last evaluation: it lands within one grid step past the crossing.
  EXPECT_GE(*earliest, crossing * (1 - 1e-9));
  EXPECT_LE(*earliest, crossing * std::pow(horizon / 400, 1.0 / 400) * (1 + 1e-9));
  EXPECT_FALSE(f.earliest_within_interval(0.95, 0.5 * crossing).has_value()) << "the crossing lies past the horizon";
}

// The held-out case that gave up wrongly: five half-epoch evaluations of a
// job at batch 32 whose power law put an 87% target past --max-epochs,
// while the default reached it in 8 epochs. The noise in five readings
// leaves the target within the interval long before that.
TEST(AccuracyForecast, NoisyReadingsLeaveADistantTargetWithinTheInterval) {
  const std::vector<AccuracyPoint> points = {
      {900, 0.756}, {1800, 0.779}, {2700, 0.775}, {3600, 0.797}, {4500, 0.820}};
  const auto f = forecast_target(points, 0.87);
  ASSERT_TRUE(f.target_min_steps.has_value()) << f.note;
  ASSERT_TRUE(f.has_interval());
  const double horizon = 0.5 * *f.target_min_steps;  // a budget the point forecast says is too short
  const auto earliest = f.earliest_within_interval(0.87, horizon);
  ASSERT_TRUE(earliest.has_value()) << f.note;
  EXPECT_LT(*earliest, *f.target_min_steps);
  EXPECT_FALSE(f.flattened) << "a new best at the last evaluation";
}

TEST(AccuracyForecast, ALongFlatCurveFarBelowTheTargetIsOutOfReachEvenAtTheIntervalsEdge) {
  std::vector<AccuracyPoint> points;
  const double readings[] = {0.80, 0.84, 0.852, 0.855, 0.851, 0.856, 0.853, 0.855, 0.852, 0.854};
  for (int i = 0; i < 10; ++i) points.push_back({1000.0 * (i + 1), readings[i]});
  const auto f = forecast_target(points, 0.95);
  ASSERT_TRUE(f.has_interval());
  EXPECT_TRUE(f.flattened) << f.note;
  EXPECT_FALSE(f.earliest_within_interval(0.95, 3 * 10000.0).has_value()) << f.note;
  // A target just above the plateau stays within the interval a little later: the verdict is not a fixed margin.
  EXPECT_TRUE(f.earliest_within_interval(0.86, 3 * 10000.0).has_value()) << f.note;
}

TEST(AccuracyForecast, AFlatCurveAboveTheTargetIsNotCalledFlat) {
  const auto f = forecast_target({{100, 0.91}, {200, 0.911}, {300, 0.911}}, 0.9);
  EXPECT_FALSE(f.flattened) << f.note;
}

}  // namespace
}  // namespace tula::tune
