#include "tune/loss_forecast.hpp"

#include <cmath>

#include <gtest/gtest.h>

namespace tula::tune {
namespace {

// A run whose loss falls as 2 s^-1/2 and whose error is a quarter of the
// loss, so error = s^-1/2 / 2: the 95% target (error 0.05) is crossed at s = 100.
std::vector<LossPoint> loss_curve(int steps) {
  std::vector<LossPoint> out;
  for (int s = 1; s <= steps; ++s) out.push_back({static_cast<double>(s), 2 / std::sqrt(s)});
  return out;
}

std::vector<AccuracyPoint> evaluations_every(int every, int steps) {
  std::vector<AccuracyPoint> out;
  for (int s = every; s <= steps; s += every) out.push_back({static_cast<double>(s), 1 - 0.5 / std::sqrt(s)});
  return out;
}

TEST(LossForecast, FindsTheCrossingOfALossCurveAndItsLink) {
  const auto f = forecast_from_loss(loss_curve(40), evaluations_every(10, 40), 0.95);
  ASSERT_TRUE(f.target_min_steps) << f.note;
  EXPECT_NEAR(f.loss_slope, -0.5, 0.01);
  // The link pairs each evaluation with the mean loss over the second half of
  // the steps since the one before, above the loss at the evaluation itself
  // (most so early, where the loss falls fastest): a slope below 1.
  EXPECT_NEAR(f.link_slope, 1.0, 0.15);
  EXPECT_NEAR(*f.target_min_steps, 100, 15);
  EXPECT_NE(f.note.find("training loss ~ s^"), std::string::npos) << f.note;
}

TEST(LossForecast, SaysWhyThereIsNone) {
  EXPECT_FALSE(forecast_from_loss(loss_curve(10), evaluations_every(5, 10), 0.95).target_min_steps);
  EXPECT_NE(forecast_from_loss(loss_curve(10), evaluations_every(5, 10), 0.95).note.find("fewer than 20 steps"),
            std::string::npos);
  const auto one_evaluation = forecast_from_loss(loss_curve(40), {{40, 0.9}}, 0.95);
  EXPECT_FALSE(one_evaluation.target_min_steps);
  EXPECT_NE(one_evaluation.note.find("fewer than two evaluations"), std::string::npos) << one_evaluation.note;
  std::vector<LossPoint> flat;
  for (int s = 1; s <= 40; ++s) flat.push_back({static_cast<double>(s), 0.7});
  const auto not_falling = forecast_from_loss(flat, evaluations_every(10, 40), 0.95);
  EXPECT_FALSE(not_falling.target_min_steps);
  EXPECT_NE(not_falling.note.find("not falling"), std::string::npos) << not_falling.note;
}

TEST(LossForecast, NonFiniteLossesAreLeftOut) {
  auto steps = loss_curve(40);
  steps[30].loss = std::nan("");
  steps[35].loss = 0;
  const auto f = forecast_from_loss(steps, evaluations_every(10, 40), 0.95);
  ASSERT_TRUE(f.target_min_steps) << f.note;
  EXPECT_TRUE(std::isfinite(*f.target_min_steps));
}

TEST(LossForecast, TheJobPlansWithTheGeometricMeanOfBoth) {
  AccuracyForecast by_evaluations;
  LossForecast by_loss;
  EXPECT_FALSE(combined_target_min_steps(by_evaluations, by_loss));
  by_evaluations.target_min_steps = 100;
  EXPECT_DOUBLE_EQ(*combined_target_min_steps(by_evaluations, by_loss), 100);
  by_loss.target_min_steps = 400;
  EXPECT_DOUBLE_EQ(*combined_target_min_steps(by_evaluations, by_loss), 200);
  by_evaluations.target_min_steps.reset();
  EXPECT_DOUBLE_EQ(*combined_target_min_steps(by_evaluations, by_loss), 400);
}

}  // namespace
}  // namespace tula::tune
