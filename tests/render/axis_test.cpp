// Tick positions and labels on linear and log axes: the one implementation
// every chart and figure uses.
#include "render/axis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace tula::render {
namespace {

bool has_tick(const std::vector<double>& ticks, double v) {
  return std::any_of(ticks.begin(), ticks.end(), [&](double t) { return std::abs(t - v) <= 1e-9 * std::abs(v); });
}

// Every tick maps into the pixel range (here 0..600), and there are 2 to 8.
void expect_ticks_inside(const Scale& s, const std::vector<double>& ticks) {
  EXPECT_GE(ticks.size(), 2u);
  EXPECT_LE(ticks.size(), 8u);
  for (double t : ticks) {
    EXPECT_GE(s(t), -1e-6) << t;
    EXPECT_LE(s(t), 600 + 1e-6) << t;
  }
}

TEST(Axis, LogAxisTicksAtTheDecades) {
  const Axis axis{"x", Unit::Number, "USD", ScaleKind::Log};
  const Scale s = Scale::fit({3, 30, 3000}, axis, 0, 600);
  ASSERT_TRUE(s.log());
  const auto ticks = s.ticks();
  for (double v : {10.0, 100.0, 1000.0}) EXPECT_TRUE(has_tick(ticks, v)) << v;
  expect_ticks_inside(s, ticks);
  // Equal ratios are equal distances.
  EXPECT_NEAR(s(100) - s(10), s(1000) - s(100), 1e-9);
}

TEST(Axis, AutoChoosesLogOnlyForASpanOverTwentyTimes) {
  const Axis axis{"x"};
  EXPECT_TRUE(Scale::fit({1, 100}, axis, 0, 600).log());
  EXPECT_FALSE(Scale::fit({10, 150}, axis, 0, 600).log());
  EXPECT_FALSE(Scale::fit({-1, 100}, axis, 0, 600).log());  // not all positive
  EXPECT_FALSE(Scale::fit({1, 1000}, Axis{"x", Unit::Number, "USD", ScaleKind::Linear}, 0, 600).log());
}

TEST(Axis, LinearAxisTicksAtRoundSteps) {
  const Axis axis{"x", Unit::Number, "USD", ScaleKind::Linear};
  const Scale s = Scale::fit({0, 10}, axis, 0, 600);
  EXPECT_EQ(s.ticks(), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  expect_ticks_inside(s, s.ticks());
  // From zero: the axis starts at 0 even when the data do not.
  const Scale z = Scale::fit({5, 9}, Axis{"x", Unit::Number, "USD", ScaleKind::Linear, true}, 0, 600);
  EXPECT_NEAR(z(0), 0, 1e-9);
}

TEST(Axis, TimeTicksAreRoundTimes) {
  const Axis axis{"t", Unit::Seconds, "USD", ScaleKind::Log};
  const Scale s = Scale::fit({30, 5 * 3600}, axis, 0, 600);
  const auto ticks = s.ticks();
  expect_ticks_inside(s, ticks);
  for (double v : {60.0, 600.0, 3600.0}) EXPECT_TRUE(has_tick(ticks, v)) << v;
  // A linear time axis steps by round times too (15 min here).
  const Scale lin = Scale::fit({0, 3600}, Axis{"t", Unit::Seconds, "USD", ScaleKind::Linear}, 0, 600);
  EXPECT_EQ(lin.ticks(), (std::vector<double>{0, 900, 1800, 2700, 3600}));
}

TEST(Axis, BatchTicksArePowersOfTwo) {
  const Axis axis{"b", Unit::Batch, "USD", ScaleKind::Log};
  const Scale s = Scale::fit({64, 4096}, axis, 0, 600);
  EXPECT_EQ(s.ticks(), (std::vector<double>{64, 128, 256, 512, 1024, 2048, 4096}));
  // Many doublings: every other (or fewer) power, still powers of two.
  const Scale wide = Scale::fit({1, 1 << 20}, axis, 0, 600);
  for (double t : wide.ticks()) EXPECT_EQ(std::log2(t), std::round(std::log2(t))) << t;
  expect_ticks_inside(wide, wide.ticks());
}

TEST(Axis, ANarrowLogRangeStillGetsTicks) {
  const Scale s = Scale::fit({2.3, 2.9}, Axis{"x", Unit::Number, "USD", ScaleKind::Log}, 0, 600);
  expect_ticks_inside(s, s.ticks());
  const Scale one = Scale::fit({5}, Axis{"x", Unit::Number, "USD", ScaleKind::Log}, 0, 600);
  EXPECT_TRUE(std::isfinite(one(5)));
}

TEST(Axis, NonPositiveValuesAreNotDrawableOnALogScale) {
  const Scale s = Scale::fit({0, 10, 1000}, Axis{"x", Unit::Number, "USD", ScaleKind::Log}, 0, 600);
  EXPECT_TRUE(s.log());
  EXPECT_FALSE(s.drawable(0));
  EXPECT_FALSE(s.drawable(-1));
  EXPECT_FALSE(s.drawable(std::nan("")));
  EXPECT_TRUE(s.drawable(10));
}

TEST(Axis, TickLabelsReadAsTheUnit) {
  EXPECT_EQ(tick_label(120, Axis{"t", Unit::Seconds}), "2 min");
  EXPECT_EQ(tick_label(7200, Axis{"t", Unit::Seconds}), "2 h");
  EXPECT_EQ(tick_label(0.5, Axis{"c", Unit::Money}), "$0.5");
  EXPECT_EQ(tick_label(12, Axis{"c", Unit::Money, "EUR"}), "12 EUR");
  EXPECT_EQ(tick_label(0.85, Axis{"a", Unit::Percent}), "85%");
  EXPECT_EQ(tick_label(2048, Axis{"b", Unit::Batch}), "2k");
  EXPECT_EQ(tick_label(512, Axis{"b", Unit::Batch}), "512");
  EXPECT_EQ(tick_label(0.25, Axis{"n"}), "0.25");
}

}  // namespace
}  // namespace tula::render
