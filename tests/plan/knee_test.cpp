// The knee of a time/cost front: the configuration of least time x cost.
#include "plan/knee.hpp"

#include <gtest/gtest.h>

namespace tula::plan {
namespace {

// Round 40's measured front of small_cnn on the emulated cluster (medians
// over three seeds): two emu-one nodes at 64, one at 128, one emu-half at
// 128. The step past the middle saves 41% of the time for 18% more money,
// which lowers the product: the knee is the two nodes.
const std::vector<TimeCost> kMeasured{{29, 0.00159}, {48, 0.00135}, {95, 0.00106}};

TEST(Knee, IsTheFrontsLeastTimeTimesCost) {
  const auto k = front_knee(kMeasured);
  EXPECT_TRUE(k.detected);
  EXPECT_EQ(k.index, 0u);
  // A front whose faster end costs more than it saves relatively.
  const std::vector<TimeCost> dear_speed{{50, 0.010}, {80, 0.004}, {200, 0.0018}};
  EXPECT_EQ(front_knee(dear_speed).index, 1u);
  const std::vector<TimeCost> cheap_end{{50, 0.010}, {80, 0.008}, {200, 0.0018}};
  EXPECT_EQ(front_knee(cheap_end).index, 2u);
}

// Unlike a knee of the front's normalized range, the product does not move
// with how far the front reaches or with the units and prices' scale.
TEST(Knee, DoesNotMoveWithTheFrontsReachOrScale) {
  auto longer = kMeasured;
  longer.push_back({1000, 0.00100});  // a far slower, barely cheaper configuration at the cheap end
  EXPECT_EQ(front_knee(longer).index, 0u);
  auto scaled = kMeasured;
  for (auto& p : scaled) p = {p.time / 3600, p.cost * 250};  // hours, another currency
  EXPECT_EQ(front_knee(scaled).index, 0u);
  const std::vector<TimeCost> dear_speed{{50, 0.010}, {80, 0.004}, {200, 0.0018}};
  auto reaching = dear_speed;
  reaching.insert(reaching.begin(), {45, 0.5});  // a faster, far dearer configuration
  EXPECT_EQ(front_knee(reaching).index, 2u) << "the same configuration, one place further down";
}

TEST(Knee, TiesGoToTheFasterAndOnePointIsNoKnee) {
  const std::vector<TimeCost> tie{{50, 0.004}, {100, 0.002}};
  EXPECT_EQ(front_knee(tie).index, 0u);
  const auto one = front_knee({{10, 1}});
  EXPECT_FALSE(one.detected);
  EXPECT_EQ(one.index, 0u);
  EXPECT_EQ(knee_sensitivity({{10, 1}}, 0, {3}).statement, "The front is a single configuration: it is the knee.");
}

TEST(Knee, SaysHowFarTheRunnerUpLies) {
  const std::vector<size_t> to_candidate{7, 8, 9};
  const auto clear = knee_sensitivity(kMeasured, 0, to_candidate);
  ASSERT_EQ(clear.variants.size(), 1u);
  EXPECT_EQ(clear.variants[0].candidate, 8u);  // one node at 128: 48 x 0.00135 against 29 x 0.00159
  EXPECT_NEAR(clear.variants[0].time_change, 48.0 / 29 - 1, 1e-12);
  EXPECT_TRUE(clear.stable);
  EXPECT_NE(clear.statement.find("The knee is clear"), std::string::npos) << clear.statement;
  const std::vector<TimeCost> close{{50, 0.0040}, {52, 0.0039}, {200, 0.0030}};
  const auto near = knee_sensitivity(close, front_knee(close).index, to_candidate);
  EXPECT_FALSE(near.stable);
  EXPECT_NE(near.statement.find("Read the knee as a region of the front"), std::string::npos) << near.statement;
}

TEST(Knee, ChoosesOnTheFrontOfAnyPoints) {
  // A dominated point (slower and dearer than the middle) is not on the front.
  const std::vector<TimeCost> points{{95, 0.00106}, {60, 0.00170}, {29, 0.00159}, {48, 0.00135}};
  const auto c = choose_on_front(points, Objective::knee(), "USD");
  EXPECT_EQ(c.front, (std::vector<size_t>{2, 3, 0}));
  EXPECT_EQ(c.front[c.chosen], 2u);
  EXPECT_EQ(c.front[choose_on_front(points, Objective::cheapest(), "USD").chosen], 0u);
}

}  // namespace
}  // namespace tula::plan
