// The give-up verdict: out of reach only when the forecast's interval, a
// flattened curve and the budget share all say so.
#include <gtest/gtest.h>

#include "tune/watch.hpp"

namespace tula::tune {
namespace {

// Ten evaluations, one per epoch (1000 minimum steps each), flat at 85.5% after the third.
std::vector<AccuracyPoint> flat_curve() {
  const double readings[] = {0.80, 0.84, 0.852, 0.855, 0.851, 0.856, 0.853, 0.855, 0.852, 0.854};
  std::vector<AccuracyPoint> points;
  for (int i = 0; i < 10; ++i) points.push_back({1000.0 * (i + 1), readings[i]});
  return points;
}

TargetProgress after_epochs(double epochs) { return {epochs, 1000 * epochs, 1.0 / 1000, 0.856}; }

WatchPolicy policy(double target, double max_epochs) {
  WatchPolicy p;
  p.to_target = true;
  p.target_accuracy = target;
  p.max_epochs = max_epochs;
  p.give_up_after = 0.2;
  return p;
}

TEST(JudgeTarget, AFlatCurveFarBelowTheTargetIsOutOfReachOnceEnoughOfTheBudgetIsDone) {
  const auto f = forecast_target(flat_curve(), 0.95);
  const auto verdict = judge_target(f, after_epochs(10), policy(0.95, 30));
  EXPECT_TRUE(verdict.out_of_reach) << verdict.words;
  EXPECT_NE(verdict.words.find("stopped improving at 85.6%"), std::string::npos) << verdict.words;
  EXPECT_NE(verdict.words.find("95% interval"), std::string::npos) << verdict.words;
}

TEST(JudgeTarget, NeverBeforeTheShareOfTheBudget) {
  const auto f = forecast_target(flat_curve(), 0.95);
  const auto verdict = judge_target(f, after_epochs(10), policy(0.95, 60));  // 10 of at least 12 epochs
  EXPECT_FALSE(verdict.out_of_reach) << verdict.words;
  EXPECT_NE(verdict.words.find("too early to give up (epoch 10 of at least 12)"), std::string::npos) << verdict.words;
}

TEST(JudgeTarget, NeverWhileTheAccuracyStillImproves) {
  auto points = flat_curve();
  points.back().accuracy = 0.86;  // a new best at the last evaluation
  const auto f = forecast_target(points, 0.99);
  const auto verdict = judge_target(f, after_epochs(10), policy(0.99, 30));
  EXPECT_FALSE(f.flattened);
  EXPECT_FALSE(verdict.out_of_reach) << verdict.words;
  EXPECT_NE(verdict.words.find("still improving"), std::string::npos) << verdict.words;
}

TEST(JudgeTarget, NeverWhileTheIntervalStillReachesTheTarget) {
  // The same flat curve, a target just above it and a long budget: the fit's
  // point may fall short, its interval does not.
  const auto f = forecast_target(flat_curve(), 0.86);
  const auto verdict = judge_target(f, after_epochs(10), policy(0.86, 30));
  EXPECT_FALSE(verdict.out_of_reach) << verdict.words;
  EXPECT_NE(verdict.words.find("possibly by epoch"), std::string::npos) << verdict.words;
}

TEST(JudgeTarget, NothingToSayBeforeAForecast) {
  const auto f = forecast_target({{1000, 0.8}}, 0.9);
  const auto verdict = judge_target(f, after_epochs(1), policy(0.9, 30));
  EXPECT_FALSE(verdict.out_of_reach);
  EXPECT_TRUE(verdict.words.empty()) << verdict.words;
}

}  // namespace
}  // namespace tula::tune
